/*
 * test-rawsig.c - a program that sets signal handlers behind our back.
 *
 * Go's runtime installs its handler for every signal with raw
 * rt_sigaction system calls at start, so no sigaction() interposer sees
 * it.  Before, the library kept sampling on a signal whose handler was
 * now the program's: nothing was sampled, silently, and the program got
 * signals it never asked for.  The sweeper now compares, every 100 ms,
 * what the kernel has with what we installed: the samples move to a free
 * signal on the program's stack choice (or, with none free, sampling ends
 * with PROFIL_STOP_SIGNAL_TAKEN and the timers go), and our SIGSEGV and
 * SIGBUS handlers go back in front of the program's, passing its faults
 * on.  Go without cgo also points %fs at its own per-thread block: a
 * sample there must touch nothing.
 */
#include "safety.h"
#include "rawsig.h"

#include <sys/mman.h>

static atomic_ulong program_got; /* signals the program's handler ran for */

static void program_handler(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)info, (void)uc;
	atomic_fetch_add(&program_got, 1);
}

/* A test that cannot run here says why (the runner reports it skipped). */
static int skip_here(const char *tsan_why)
{
	if (!RAWSIG_OK) {
		printf("skipped: raw rt_sigaction is set up for x86-64 only\n");
		snprintf(test_skip_reason, sizeof test_skip_reason, "x86-64 only");
		return 1;
	}
	return tsan_why && skip_under("tsan", tsan_why);
}

static void start_on_timers(void)
{
	setenv("PROFIL_ENGINE", "timer", 1);
	static unsigned short buf[2];
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
}

static struct profil_stats stats(void)
{
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	return st;
}

/* Burns CPU until pred() holds, at most `secs` of wall time. */
static int burn_until(int (*pred)(void), double secs)
{
	double end = mono_now() + secs;
	while (mono_now() < end) {
		if (pred())
			return 1;
		burn(0.02);
	}
	return pred();
}

static int first_sig;

static int moved(void)
{
	struct profil_stats st = stats();
	return st.signal != first_sig || st.stopped != PROFIL_STOP_NONE;
}

static int ended(void)
{
	return stats().stopped == PROFIL_STOP_SIGNAL_TAKEN;
}

/* The program takes the sampling signal alone: samples move, keep coming,
 * and none reaches the program's handler. */
TEST_IMPL(safety_raw_sigaction_moves_samples)
{
	if (skip_here("TSan interposes sigaction() and puts its own wrapper "
	                                      "in the kernel: the raw view checked here is TSan's"))
		return 0;
#if RAWSIG_OK
	start_on_timers();
	first_sig = stats().signal;
	ASSERT(first_sig > 0);
	struct rawsig_kaction k;
	ASSERT_OK(syscall(SYS_rt_sigaction, first_sig, NULL, &k, 8));
	/* though the program's default has none; not under valgrind, whose
	 * delivery mishandles it (src/engine/dispatch.c) */
	const char *tool = getenv("PROFIL_TEST_TOOL");
	int vg = tool && strcmp(tool, "valgrind") == 0;
	ASSERT(((k.flags & SA_ONSTACK) != 0) == !vg);
	ASSERT_OK(rawsig_set(first_sig, program_handler));
	ASSERT(burn_until(moved, 3));
	struct profil_stats st = stats();
	printf("samples moved from %d to %d\n", first_sig, st.signal);
	ASSERT_EQ(st.stopped, PROFIL_STOP_NONE);
	ASSERT(st.signal > 0 && st.signal != first_sig);
	ASSERT(rawsig_get(first_sig) == (void *)program_handler);
	ASSERT_OK(syscall(SYS_rt_sigaction, st.signal, NULL, &k, 8));
	ASSERT(((k.flags & SA_ONSTACK) != 0) == !vg); /* the alternate stack, as Go needs */
	burn(0.05); /* a sample queued before the move may still arrive */
	atomic_store(&program_got, 0);
	unsigned long long before = st.ticks;
	burn(0.4);
	ASSERT_EQ(atomic_load(&program_got), 0);
	ASSERT(stats().ticks > before + 20); /* 0.4 s at 100 Hz: about 40 */
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT(rawsig_get(first_sig) == (void *)program_handler);
#endif
	return 0;
}

/* Every signal at once, as Go does, and no real-time signal left free
 * (Go leaves one): nowhere to move, so sampling ends, visibly, and the
 * program keeps its handlers. */
TEST_IMPL(safety_raw_sigaction_on_every_signal_ends_sampling)
{
	if (skip_here(NULL))
		return 0;
#if RAWSIG_OK
	start_on_timers();
	first_sig = stats().signal;
	ASSERT_EQ(rawsig_set_all(program_handler), 0);
	ASSERT(burn_until(ended, 3));
	struct profil_stats st = stats();
	ASSERT_EQ(st.signal, 0);
	ASSERT_EQ(st.threads, 0);
	burn(0.05);
	atomic_store(&program_got, 0);
	burn(0.4);
	ASSERT_EQ(atomic_load(&program_got), 0);
	ASSERT(rawsig_get(first_sig) == (void *)program_handler);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT(rawsig_get(first_sig) == (void *)program_handler);
	ASSERT(rawsig_get(SIGSEGV) == (void *)program_handler);
#endif
	return 0;
}

static char *fault_page;
static atomic_int faults_seen;

static void fix_fault(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)uc;
	if ((char *)info->si_addr == fault_page) {
		atomic_fetch_add(&faults_seen, 1);
		mprotect(fault_page, 4096, PROT_READ | PROT_WRITE);
	}
}

static int segv_ours_again(void)
{
	return rawsig_get(SIGSEGV) != (void *)fix_fault;
}

/* Only SIGSEGV: our handler goes back in front of the program's (fault
 * recovery for the samples), passes the program's own faults on to it,
 * sampling goes on, and the stop gives the program its handler back. */
TEST_IMPL(safety_raw_sigaction_on_sigsegv_chains)
{
	if (skip_here("TSan holds asynchronous signals back until the thread "
	                                      "next enters its runtime; the busy loop never does"))
		return 0;
#if RAWSIG_OK
	fault_page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(fault_page != MAP_FAILED);
	start_on_timers();
	int sig = stats().signal;
	ASSERT_OK(rawsig_set(SIGSEGV, fix_fault));
	ASSERT(burn_until(segv_ours_again, 3));
	struct profil_stats st = stats();
	ASSERT_EQ(st.stopped, PROFIL_STOP_NONE);
	ASSERT_EQ(st.signal, sig);
	fault_page[0] = 1; /* the program's own fault: its handler fixes it */
	ASSERT_EQ(atomic_load(&faults_seen), 1);
	burn(0.3);
	ASSERT(stats().ticks > st.ticks + 10);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT(rawsig_get(SIGSEGV) == (void *)fix_fault);
#endif
	return 0;
}

#if RAWSIG_OK
/* A thread pointer that is not libc's, as Go without cgo sets on every
 * thread: a block of zeros.  While %fs points into it the thread makes
 * no call and touches no thread-local storage (raw system calls only). */
static unsigned char foreign_block[16384] __attribute__((aligned(64)));

static long raw_syscall2(long nr, long a, long b)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
	return ret;
}

#define ARCH_SET_FS_ 0x1002
#define ARCH_GET_FS_ 0x1003

static void *foreign_thread(void *arg)
{
	unsigned long iters = *(unsigned long *)arg;
	unsigned long saved = 0;
	if (raw_syscall2(SYS_arch_prctl, ARCH_GET_FS_, (long)&saved) != 0)
		return (void *)1;
	raw_syscall2(SYS_arch_prctl, ARCH_SET_FS_, (long)(foreign_block + sizeof foreign_block / 2));
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < iters; i++)
		x = x * 31 + i;
	raw_syscall2(SYS_arch_prctl, ARCH_SET_FS_, (long)saved);
	return NULL;
}
#endif

/* Samples that land on such a thread are dropped: before, the handler's
 * thread-local state was written at fixed offsets from %fs, into the
 * runtime's memory (Go's heap: the program died of SIGSEGV). */
TEST_IMPL(safety_foreign_thread_pointer_untouched)
{
	if (skip_here("TSan's own signal wrapper reads thread-local storage "
	                                      "before ours runs"))
		return 0;
#if RAWSIG_OK
	start_on_timers();
	unsigned long iters = iters_for(0.5); /* about 125 samples' worth */
	pthread_t t;
	void *ret = (void *)2;
	ASSERT_EQ(pthread_create(&t, NULL, foreign_thread, &iters), 0);
	ASSERT_EQ(pthread_join(t, &ret), 0);
	ASSERT(ret == NULL);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	for (size_t i = 0; i < sizeof foreign_block; i++)
		if (foreign_block[i]) {
			printf("byte %zd from %%fs written\n", (ssize_t)i - (ssize_t)sizeof foreign_block / 2);
			ASSERT(!foreign_block[i]);
		}
#endif
	return 0;
}
