/*
 * test-threads.c - threads that live a short time are counted without
 * bias (issue 9, "short-lived threads"), and threads made by other means
 * than pthread_create are covered (item 18).
 */
#include "safety.h"

#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <threads.h>
#include <sys/syscall.h>
#include <sys/wait.h>

SPIN_FN(spin_short, 50)

/* One short thread: burns its share, then notes its whole CPU time (from
 * its birth: the library accounts for a thread from its first instant). */
struct shortie {
	unsigned long iters;
	double cpu;
};

static void *shortie_main(void *p)
{
	struct shortie *s = p;
	spin_short(s->iters);
	s->cpu = cpu_thread();
	return NULL;
}

/*
 * Two threads at a time, each burning `ms` of CPU then exiting, `total`
 * CPU seconds in all, at `hz`.  Every weighted sample lands in buf[0]
 * (scale 2), so buf[0] / (CPU s * hz) is the share of CPU time counted.
 *
 * The bound: a thread that ran c seconds is owed c * hz samples on
 * average; with its timer's phase uniform the count is one of the two
 * integers around that, so its variance is f (1 - f) with f the
 * fractional part of c * hz.  Summed over the threads (measured, so the
 * bound is tight where burning is regular), six standard deviations.  The
 * main thread's samples count too; its last tick's expiries (at most 10 ms)
 * may be outstanding at the stop.
 *
 * What is owed lies between two measurements: each worker's clock read
 * at the end of its work, which misses what it runs after (the return
 * through the library, its exit's settling), and the process's clock,
 * which also holds the kernel's end of each thread, after any sample
 * could see it.  On a fast machine the first is 5 us of a thread short;
 * on a VM whose system calls cost 1-2 us and page faults 10 us it was
 * 130 us (400 threads counted 1.063 times their own clocks, 0.98 times
 * the process's).  So the count must be no less than the workers' sum
 * and no more than the process's, each less or more the slack.
 * PROFIL_STRESS=6 runs 6 CPU seconds, as in the measurements.
 */
static int check_short_lived(double ms, unsigned int hz, double total)
{
	SKIP_IF_SAMPLES_DEFERRED();
	int n = (int)(total / (ms / 1000.0));
	struct shortie *w = calloc((size_t)n, sizeof *w);
	ASSERT(w);
	unsigned long iters = iters_for(ms / 1000.0);
	unsigned short buf[2] = {0};
	ASSERT_OK(profil_set_hz(hz));
	double m0 = cpu_thread(), p0 = cpu_process();
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	for (int i = 0; i < n; i += 2) {
		pthread_t th[2];
		int k = i + 1 < n ? 2 : 1;
		for (int j = 0; j < k; j++) {
			w[i + j].iters = iters;
			ASSERT_EQ(pthread_create(&th[j], NULL, shortie_main, &w[i + j]), 0);
		}
		for (int j = 0; j < k; j++)
			pthread_join(th[j], NULL);
	}
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	double main_cpu = cpu_thread() - m0, process_cpu = cpu_process() - p0;
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	double cpu = main_cpu, var = 0.25;
	for (int i = 0; i < n; i++) {
		double owed = w[i].cpu * hz, f = owed - floor(owed);
		cpu += w[i].cpu;
		var += f * (1 - f);
	}
	double want = cpu * hz, most = process_cpu * hz;
	double slack = 6 * sqrt(var) + 0.010 * hz + 1;
	printf("%d threads of %.0f ms at %u Hz: %.3f CPU s (process %.3f), %u samples of "
	       "%.1f-%.1f (ratio %.4f-%.4f), %llu signals, %llu reconciled; allowed %.1f "
	       "below, %.1f above\n",
	       n, ms, hz, cpu, process_cpu, buf[0], want, most, buf[0] / want, buf[0] / most,
	       st.signals, st.reconciled, slack, slack);
	ASSERT_EQ(buf[0], st.ticks);
	ASSERT(buf[0] >= want - slack);
	ASSERT(buf[0] <= most + slack);
	free(w);
	return 0;
}

TEST_IMPL(threads_short_lived_2ms_1000hz)
{
	return check_short_lived(2, 1000, stress_seconds(0.8));
}

TEST_IMPL(threads_short_lived_2ms_100hz)
{
	return check_short_lived(2, 100, stress_seconds(0.8));
}

TEST_IMPL(threads_short_lived_10ms_1000hz)
{
	return check_short_lived(10, 1000, stress_seconds(0.8));
}

TEST_IMPL(threads_short_lived_10ms_100hz)
{
	return check_short_lived(10, 100, stress_seconds(0.8));
}

/* The third row: 50 ms threads (0.916 at 1000 Hz, 0.769 at
 * 100 Hz before the fix).  At 100 Hz 0.8 s owe 80 samples, too few for
 * the bound to tell 0.8 from 1.0: 2 s are run (200 owed). */
TEST_IMPL(threads_short_lived_50ms_1000hz)
{
	return check_short_lived(50, 1000, stress_seconds(0.8));
}

TEST_IMPL(threads_short_lived_50ms_100hz)
{
	return check_short_lived(50, 100, stress_seconds(2.0));
}

SPIN_FN(spin_c11, 51)

static double c11_cpu; /* the C11 thread's CPU time when it ended */

static int c11_main(void *p)
{
	spin_c11(*(unsigned long *)p);
	c11_cpu = cpu_thread();
	return 7;
}

/*
 * glibc's thrd_create calls its internal __pthread_create, not the
 * interposed pthread_create: thrd_create is interposed too (src/process/
 * c11wrap.c), and a C11 thread is covered from its first instruction, as
 * a pthread is.  A thread burning 1 CPU second must show no less than its
 * CPU time less 20 ms (one tick's expiries, at most 4 ms, and rounding)
 * and no more than it ran.  Before, the sweeper found it within 100 ms
 * and it lost what ran until then.
 */
TEST_IMPL(threads_thrd_create_covered)
{
	SKIP_IF_SAMPLES_DEFERRED();
	if (skip_under("tsan", "TSan does not intercept thrd_create's internal thread creation"))
		return 0;
	unsigned short buf[2] = {0};
	unsigned long n = iters_for(1.0);
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	thrd_t t;
	ASSERT_EQ(thrd_create(&t, c11_main, &n), thrd_success);
	int res = 0;
	ASSERT_EQ(thrd_join(t, &res), thrd_success);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT_EQ(res, 7);
	printf("C11 thread: %u samples of ~%u\n", buf[0], profil_hz());
	/* against the thread's measured CPU time, not the calibration's
	 * estimate (which a loaded machine makes wrong) */
	ASSERT(buf[0] > (c11_cpu - 0.02) * profil_hz());
	ASSERT(buf[0] <= (c11_cpu + 0.01) * profil_hz());
	return 0;
}

SPIN_FN(spin_sigev, 53)

static unsigned long sigev_iters;
static double sigev_cpu;   /* the notification thread's CPU time at its end */
static _Atomic int sigev_done;

static void sigev_notified(union sigval v)
{
	(void)v;
	spin_sigev(sigev_iters);
	sigev_cpu = cpu_thread();
	atomic_store(&sigev_done, 1);
}

/*
 * A timer's SIGEV_THREAD notification runs in a thread glibc makes with
 * its internal pthread_create and every signal blocked, the sampling
 * signal too (src/process/sigevwrap.c): it was never sampled (0 samples
 * for its 0.5 s).  Now covered from its first instant: at least its CPU
 * time less 0.25 s (a loaded machine's allowance, as for thrd_create),
 * no more than it and the waiting main thread ran.
 */
TEST_IMPL(threads_sigev_thread_notification_covered)
{
	SKIP_IF_SAMPLES_DEFERRED();
	if (skip_under("tsan", "TSan does not intercept glibc's internal thread creation"))
		return 0;
	unsigned short buf[2] = {0};
	sigev_iters = iters_for(0.5);
	double m0 = cpu_thread();
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD;
	ev.sigev_notify_function = sigev_notified;
	timer_t t;
	ASSERT_OK(timer_create(CLOCK_MONOTONIC, &ev, &t));
	struct itimerspec its = {{0, 0}, {0, 1000000}};
	ASSERT_OK(timer_settime(t, 0, &its, NULL));
	while (!atomic_load(&sigev_done)) {
		struct timespec nap = {0, 2000000};
		nanosleep(&nap, NULL);
	}
	ASSERT_OK(timer_delete(t));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	double main_cpu = cpu_thread() - m0;
	unsigned int hz = profil_hz();
	printf("SIGEV_THREAD notification: %u samples for %.3f CPU s (main %.3f) at %u Hz\n",
	       buf[0], sigev_cpu, main_cpu, hz);
	ASSERT(buf[0] > (sigev_cpu - 0.25) * hz);
	ASSERT(buf[0] <= (sigev_cpu + main_cpu + 0.01) * hz);
	return 0;
}

/*
 * Each forked child's timer draws its own phase.  The phase generator's
 * state was the parent's in every child, so all the children of one run
 * drew the same phase: a run of short children was counted all high or
 * all low (100 children of 1.7 ms at 1000 Hz under profil record: one
 * sample each in one run, two in the next; 0.65 to 1.25 of their CPU).
 * At 10 Hz the first expiry of a child lies anywhere in its first 100 ms
 * of CPU; each child here reports the CPU time at which its first signal
 * came (the tick delays it by up to 4 ms).  Twenty independent draws
 * spread over far more than 40 ms (the chance they do not: about 1e-6);
 * twenty equal ones lie within a tick or two.
 */
SPIN_FN(spin_phase, 52)

static double first_signal_cpu(void)
{
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	unsigned long long before = st.signals;
	double c0 = cpu_thread();
	unsigned long chunk = iters_for(0.0002);
	while (cpu_thread() - c0 < 0.5) {
		spin_phase(chunk);
		ASSERT_OK(profil_get_stats(&st));
		if (st.signals > before)
			return cpu_thread() - c0;
	}
	return -1;
}

TEST_IMPL(threads_forked_children_draw_their_own_phase)
{
	SKIP_IF_SAMPLES_DEFERRED();
	unsigned short buf[2] = {0};
	ASSERT_OK(profil_set_hz(10));
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	if (st.engine != PROFIL_ENGINE_THREAD_TIMERS) {
		/* events count from where each thread starts: no phase to draw */
		ASSERT_OK(profil(no_buf, 0, 0, 0));
		snprintf(test_skip_reason, sizeof test_skip_reason, "the timers' grid only");
		printf("skipped: engine %s has no grid\n", profil_engine_name(st.engine));
		return 0; /* a reason set: the runner reports a skip */
	}
	double lo = 1, hi = 0;
	for (int i = 0; i < 20; i++) {
		int fd[2];
		ASSERT_OK(pipe(fd));
		pid_t pid = fork();
		ASSERT(pid >= 0);
		if (pid == 0) {
			double at = first_signal_cpu();
			(void)!write(fd[1], &at, sizeof at);
			_exit(0);
		}
		double at = -1;
		ASSERT_EQ(read(fd[0], &at, sizeof at), (ssize_t)sizeof at);
		ASSERT_EQ(waitpid(pid, NULL, 0), pid);
		close(fd[0]);
		close(fd[1]);
		ASSERT(at >= 0); /* a signal within 0.5 CPU s at 10 Hz */
		lo = at < lo ? at : lo;
		hi = at > hi ? at : hi;
	}
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("first signal of 20 forked children at 10 Hz: %.1f to %.1f ms of their CPU\n",
	       lo * 1e3, hi * 1e3);
	ASSERT(hi - lo > 0.040);
	return 0;
}
