/*
 * test-restart.c - a program signal without SA_RESTART interrupts a
 * blocking call with EINTR, profiling or not, even when our sampling
 * signal is delivered first (src/engine/restart.h).
 *
 * Found under `profil record` in CPython's test_siginterrupt_on: about one
 * child in a hundred blocked for ever in read().  A kernel trace showed
 * read() leaving with -ERESTARTSYS for SIGALRM, our SIGPROF queued on the
 * same way out (CPU-timer work runs on return to user mode) and delivered
 * first, being the thread's own, and its SA_RESTART restarting read().
 *
 * Made deterministic here: the reader thread, SCHED_IDLE, shares one CPU
 * with the main thread, so that after the main thread's kill(2) of
 * SIGUSR1 wakes it, it cannot run until the main thread has also queued
 * our sampling signal to it and gone to sleep: both are then pending as
 * read() leaves the kernel, ours first.
 */
#include "safety.h"

#include <sched.h>
#include <string.h>
#include <sys/syscall.h>

#define ROUNDS 20

static atomic_int round_started, round_done;
static atomic_int eintr_rounds, other_rounds;
static atomic_int reader_tid;
static int pipe_fds[2];
static int the_cpu;

static void on_usr1(int sig)
{
	(void)sig;
}

static void *reader(void *unused)
{
	(void)unused;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(the_cpu, &one);
	sched_setaffinity(0, sizeof one, &one);
	struct sched_param sp = {0};
	sched_setscheduler(0, SCHED_IDLE, &sp);
	atomic_store(&reader_tid, (int)syscall(SYS_gettid));
	for (int r = 1; r <= ROUNDS; r++) {
		while (atomic_load(&round_started) < r)
			sched_yield();
		char c;
		ssize_t n = read(pipe_fds[0], &c, 1);
		if (n < 0 && errno == EINTR)
			atomic_fetch_add(&eintr_rounds, 1);
		else
			atomic_fetch_add(&other_rounds, 1); /* read the unsticking byte */
		atomic_store(&round_done, r);
	}
	return NULL;
}

/* Whether thread tid sleeps (state S in its stat). */
static int sleeping(int tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

TEST_IMPL(safety_restart_keeps_program_eintr)
{
	if (skip_under("valgrind", "valgrind delivers signals at its own points") ||
	    skip_under("tsan", "TSan defers asynchronous signals"))
		return 0;
#if !defined(__x86_64__)
	snprintf(test_skip_reason, sizeof test_skip_reason, "the repair is x86-64 only");
	return 0;
#endif
	/* It queues instances of the sampling signal that are not samples,
	 * as a program's would be.  On perf events' sigtrap that is SIGTRAP,
	 * whose default for the program's own traps is to end the process:
	 * so this test samples on SIGPROF (no sigtrap when it is named). */
	ASSERT_OK(setenv("PROFIL_SIGNAL", "PROF", 1));
	the_cpu = sched_getcpu();
	ASSERT(the_cpu >= 0);
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(the_cpu, &one);
	ASSERT_OK(sched_setaffinity(0, sizeof one, &one));
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1; /* no SA_RESTART: blocking calls fail with EINTR */
	ASSERT_OK(sigaction(SIGUSR1, &sa, NULL));
	ASSERT_OK(pipe(pipe_fds));
	static unsigned short buf[2];
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT(st.signal > 0);
	pthread_t t;
	ASSERT_OK(pthread_create(&t, NULL, reader, NULL));
	sigset_t usr1; /* blocked here, after the reader inherited our mask */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	ASSERT_OK(pthread_sigmask(SIG_BLOCK, &usr1, NULL)); /* kill() reaches the reader */
	while (!atomic_load(&reader_tid))
		sched_yield();
	int tid = atomic_load(&reader_tid);
	for (int r = 1; r <= ROUNDS; r++) {
		atomic_store(&round_started, r);
		double until = mono_now() + 5;
		while (!sleeping(tid) && mono_now() < until) /* in read() */
			usleep(1000);
		usleep(5000);
		kill(getpid(), SIGUSR1);
		siginfo_t si;
		memset(&si, 0, sizeof si);
		si.si_signo = st.signal;
		si.si_code = SI_QUEUE;
		si.si_pid = getpid();
		syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, st.signal, &si);
		until = mono_now() + 1.0;
		while (atomic_load(&round_done) < r && mono_now() < until)
			usleep(2000);
		if (atomic_load(&round_done) < r) /* read() restarted: unstick it */
			ASSERT_EQ(write(pipe_fds[1], "x", 1), 1);
		while (atomic_load(&round_done) < r)
			usleep(1000);
	}
	pthread_join(t, NULL);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("%d of %d reads interrupted with EINTR, %d restarted\n",
	       atomic_load(&eintr_rounds), ROUNDS, atomic_load(&other_rounds));
	ASSERT_EQ(atomic_load(&eintr_rounds), ROUNDS);
	return 0;
}
