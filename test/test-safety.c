/*
 * test-safety.c - issue 3, items 1, 2 and 7: bad buffers at the call,
 * buffers that go bad while published, the program's own fault handling,
 * and signal hygiene on stop.
 */
#include "safety.h"

#include <fcntl.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PAGE 4096

/* An address that faults, hidden from the compiler's bounds checks. */
static volatile int *volatile bad_ptr = (volatile int *)16;

static unsigned short *map_pages(int n)
{
	void *p = mmap(NULL, (size_t)n * PAGE, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(p != MAP_FAILED);
	return p;
}

static void assert_filled(const unsigned char *p, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != v)
			FAIL_AT("byte %zu changed: %#x", i, p[i]);
}

static void assert_off(void)
{
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_EQ(st.engine, PROFIL_ENGINE_OFF);
	ASSERT_EQ(st.signal, 0);
}

/* Item 1: unmapped, read-only, partly unmapped: EFAULT, off, untouched. */
TEST_IMPL(safety_bad_buffer_at_call)
{
	unsigned short *good = map_pages(1);
	unsigned short *gone = map_pages(1);
	ASSERT_OK(munmap(gone, PAGE));
	unsigned short *ro = map_pages(1);
	memset(ro, 0xab, PAGE);
	ASSERT_OK(mprotect(ro, PAGE, PROT_READ));
	unsigned short *half = map_pages(2); /* writable page, then none */
	memset(half, 0xcd, 2 * PAGE);
	ASSERT_OK(mprotect((char *)half + PAGE, PAGE, PROT_NONE));
	unsigned short *bufs[] = {gone, ro, (unsigned short *)((char *)half + PAGE / 2)};
	struct spinners sp;
	spinners_start(&sp, 2);
	for (int i = 0; i < 3; i++) {
		/* profiling on first: a bad call must also turn it off */
		ASSERT_OK(profil(good, PAGE, 0, 2));
		ASSERT_ERR(profil(bufs[i], PAGE, 0, 2), EFAULT);
		assert_off();
		unsigned short snap = good[0];
		burn(0.05);
		ASSERT_EQ(good[0], snap);
		ASSERT_ERR(profil(bufs[i], PAGE, 0, 0x10000), EFAULT);
		assert_off();
	}
	spinners_stop(&sp);
	assert_filled((unsigned char *)ro, PAGE, 0xab);
	assert_filled((unsigned char *)half, PAGE, 0xcd);
	return 0;
}

/* The program's own fault handler: counts, and recovers its own faults. */
static atomic_int program_faults;
static sigjmp_buf program_jmp;
static void program_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	atomic_fetch_add(&program_faults, 1);
	siglongjmp(program_jmp, 1);
}

static void install_program_handler(int via_signal)
{
	if (via_signal) {
		ASSERT(signal(SIGSEGV, (void (*)(int))(void *)program_segv) != SIG_ERR);
		return;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = program_segv;
	sa.sa_flags = SA_SIGINFO;
	ASSERT_OK(sigaction(SIGSEGV, &sa, NULL));
}

/* A fault of the program's own while profiling: its handler runs. */
static void program_fault_once(void)
{
	int before = atomic_load(&program_faults);
	if (sigsetjmp(program_jmp, 1) == 0)
		*bad_ptr = 1;
	ASSERT_EQ(atomic_load(&program_faults), before + 1);
}

enum spoil { SPOIL_UNMAP, SPOIL_PROTECT, SPOIL_TRUNCATE };

/* Item 2: the buffer goes bad while several threads are sampled. */
static void bad_later(enum spoil how, int handler_after_start)
{
	if (skip_under("tsan", "TSan runs signal handlers from its own frames; "
	               "sample.c's longjmp out of a fault cannot cross them") ||
	    skip_under("valgrind", "its deliberate faults are errors to valgrind"))
		return;
	int fd = -1;
	unsigned short *buf;
	if (how == SPOIL_TRUNCATE) {
		char path[] = "/tmp/profil-safety-XXXXXX";
		fd = mkstemp(path);
		ASSERT(fd >= 0);
		unlink(path);
		ASSERT_OK(ftruncate(fd, PAGE));
		buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		ASSERT(buf != MAP_FAILED);
	} else {
		buf = map_pages(1);
	}
	if (!handler_after_start)
		install_program_handler(0);
	struct spinners sp;
	spinners_start(&sp, 3);
	ASSERT_OK(profil(buf, PAGE, 0, 2)); /* every sample writes buf[0] */
	if (handler_after_start)
		install_program_handler(handler_after_start == 2);
	burn(0.05);
	program_fault_once(); /* chained to the program while we own SIGSEGV */
	ASSERT(__atomic_load_n(&buf[0], __ATOMIC_RELAXED) > 0);
	if (how == SPOIL_UNMAP)
		ASSERT_OK(munmap(buf, PAGE));
	else if (how == SPOIL_PROTECT)
		ASSERT_OK(mprotect(buf, PAGE, PROT_READ));
	else
		ASSERT_OK(ftruncate(fd, 0)); /* writes now raise SIGBUS */
	burn(0.1);
	ASSERT(wait_engine_off(2.0));
	spinners_stop(&sp);
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	printf("faults %llu, stopped %d, program handler calls %d\n", st.faults,
	       (int)st.stopped, atomic_load(&program_faults));
	ASSERT(st.faults >= 1);
	ASSERT_EQ(st.stopped, PROFIL_STOP_FAULT);
	ASSERT_EQ(atomic_load(&program_faults), 1); /* only its own fault */
	/* its handler is the kernel's again, and still works */
	struct sigaction now;
	ASSERT_OK(sigaction(SIGSEGV, NULL, &now));
	ASSERT(now.sa_sigaction == program_segv);
	program_fault_once();
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	if (fd >= 0)
		close(fd);
}

TEST_IMPL(safety_buffer_unmapped_later)
{
	bad_later(SPOIL_UNMAP, 0);
	return 0;
}

TEST_IMPL(safety_buffer_protected_later)
{
	bad_later(SPOIL_PROTECT, 1); /* sigaction() after profil() */
	return 0;
}

TEST_IMPL(safety_buffer_truncated_later)
{
	bad_later(SPOIL_TRUNCATE, 2); /* signal() after profil() */
	return 0;
}

/* A child that faults for real while profiled dies as it would unprofiled:
 * with SIGSEGV (default or ignored disposition). */
static int child_fault_status(void (*disp)(int))
{
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		static unsigned short buf[2];
		signal(SIGSEGV, disp);
		struct spinners sp;
		spinners_start(&sp, 2);
		profil(buf, sizeof buf, 0, 2);
		burn(0.02);
		*bad_ptr = 1;
		_exit(0);
	}
	int status;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	return status;
}

TEST_IMPL(safety_program_fault_default)
{
	if (skip_under("valgrind", "its deliberate faults are errors to valgrind"))
		return 0;
	int st = child_fault_status(SIG_DFL);
	ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	st = child_fault_status(SIG_IGN);
	ASSERT(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	/* a SIGSEGV sent (not raised by a fault) to an ignoring program */
	static unsigned short buf[2];
	signal(SIGSEGV, SIG_IGN);
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	ASSERT_OK(raise(SIGSEGV));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	return 0;
}

/* Item 7: many stops at the highest rate with threads running up to the
 * stop.  SIGPROF's default action kills; a stray sample would show. */
TEST_IMPL(safety_stop_hygiene)
{
	static unsigned short buf[2];
	struct proc_state before, after;
	proc_state_get(&before);
	ASSERT_OK(profil_set_hz(PROFIL_HZ_MAX));
	struct spinners sp;
	spinners_start(&sp, 3);
	for (int i = 0; i < 150; i++) {
		ASSERT_OK(profil(buf, sizeof buf, 0, 2));
		burn(0.004);
		ASSERT_OK(profil(no_buf, 0, 0, 0));
		sigset_t pend;
		ASSERT_OK(sigpending(&pend));
		ASSERT(!sigismember(&pend, SIGPROF));
	}
	burn(0.1);
	spinners_stop(&sp);
	before.ntask = count_dir("/proc/self/task");
	proc_state_get(&after);
	proc_state_same(&before, &after);
	return 0;
}

static atomic_int own_prof;
static void own_prof_handler(int sig)
{
	(void)sig;
	atomic_fetch_add(&own_prof, 1);
}

/* Item 7, the program owning SIGPROF: its disposition is untouched, the
 * real-time signal we used is SIG_DFL again, its SIGSEGV handler back. */
TEST_IMPL(safety_stop_restores_dispositions)
{
	/* about the choice among SIGPROF and the real-time signals, which
	 * perf events delivering by sigtrap do not make: on timers */
	ASSERT_OK(setenv("PROFIL_ENGINE", "timer", 1));
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = own_prof_handler;
	sa.sa_flags = SA_RESTART | SA_NODEFER;
	ASSERT_OK(sigaction(SIGPROF, &sa, NULL));
	install_program_handler(0);
	struct proc_state before, after;
	proc_state_get(&before);
	static unsigned short buf[2];
	struct spinners sp;
	spinners_start(&sp, 2);
	before.ntask = count_dir("/proc/self/task");
	for (int i = 0; i < 50; i++) {
		ASSERT_OK(profil(buf, sizeof buf, 0, 2));
		struct profil_stats st;
		ASSERT_OK(profil_get_stats(&st));
		ASSERT(st.signal >= SIGRTMIN);
		burn(0.004);
		ASSERT_OK(profil(no_buf, 0, 0, 0));
		struct sigaction rt;
		ASSERT_OK(sigaction(st.signal, NULL, &rt));
		ASSERT(rt.sa_handler == SIG_DFL);
	}
	burn(0.05);
	proc_state_get(&after);
	spinners_stop(&sp);
	proc_state_same(&before, &after);
	ASSERT_EQ(atomic_load(&own_prof), 0); /* no timer of ours sent SIGPROF */
	return 0;
}
