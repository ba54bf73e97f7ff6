/*
 * test-engine-switch.c - on perf events, a thread that blocks and wakes
 * often is moved to a timer, and back to an event once it computes
 * (src/engine/switchwatch.h).
 *
 * A perf event's timer is stopped and restarted at every switch of its
 * thread; on a virtual machine that cost two threads ping-ponging a byte
 * over pipes 4-5 times their CPU time unprofiled (and a `yes | head | wc`
 * pipeline twice), where timers cost nothing.  Which sampler a thread has
 * is seen from outside the library: a timer is listed in /proc/self/timers
 * with the thread it signals ("notify: signal/tid.N"); an event, held by a
 * mapping, is not.
 */
#include "runner.h"
#include "perfcheck.h"

#include <profil.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HZ 1000
#define PINGPONG_CPU_S 0.25 /* each ping-pong thread's CPU time */
#define COMPUTE_CPU_S 0.5   /* the computing thread's, and a calmed one's */
/* Two sweeps (100 ms each) and more, for a wish to be carried out. */
#define SETTLE_US 400000

SPIN_FN(switch_spin, 7)

static int ab[2], ba[2];
static atomic_int tids[3];
/* Steps are waited for blocked on a condition, not by polling: a thread
 * that sleeps and wakes every millisecond is one that switches often. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int phase_done, go_on; /* mu */

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Whether a timer in /proc/self/timers signals thread tid. */
static int has_timer(pid_t tid)
{
	char line[256], want[64];
	snprintf(want, sizeof want, "notify: signal/tid.%d\n", (int)tid);
	FILE *f = fopen("/proc/self/timers", "re");
	int found = 0;
	while (f && !found && fgets(line, sizeof line, f))
		found = strcmp(line, want) == 0;
	if (f)
		fclose(f);
	return found;
}

static void compute(double cpu_s)
{
	double until = cpu_thread() + cpu_s;
	while (cpu_thread() < until)
		switch_spin(20000);
}

static void wait_for(int *what, int at_least)
{
	pthread_mutex_lock(&mu);
	while (*what < at_least)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
}

static void step(int *what)
{
	pthread_mutex_lock(&mu);
	++*what;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

static void wait_go_on(int at)
{
	wait_for(&go_on, at);
}

/* A thread's last phase done: it waits, blocked, to be let end. */
static void *last_phase_done(void)
{
	step(&phase_done);
	wait_go_on(2);
	return NULL;
}

/* Sends a byte and waits for it back until it has used PINGPONG_CPU_S,
 * then closes its end; then (step 2) computes, and waits to end. */
static void *pinger(void *arg)
{
	(void)arg;
	atomic_store(&tids[0], my_tid());
	char c = 0;
	while (cpu_thread() < PINGPONG_CPU_S)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			break;
	close(ab[1]);
	step(&phase_done);
	wait_go_on(1);
	compute(COMPUTE_CPU_S);
	return last_phase_done();
}

static void *ponger(void *arg)
{
	(void)arg;
	atomic_store(&tids[1], my_tid());
	char c;
	while (read(ab[0], &c, 1) == 1)
		if (write(ba[1], &c, 1) != 1)
			break;
	return last_phase_done();
}

static void *computer(void *arg)
{
	(void)arg;
	atomic_store(&tids[2], my_tid());
	compute(COMPUTE_CPU_S);
	return last_phase_done();
}

/* The engine choice (NULL: the default), and the pipes; 0 when perf
 * events cannot be had here (the skip reason noted). */
static int set_up(const char *engine)
{
	if (engine)
		setenv("PROFIL_ENGINE", engine, 1);
	else
		unsetenv("PROFIL_ENGINE");
	if (!perf_allowed() || !perf_rate_ok(HZ, tick_hz()))
		return 0;
	return pipe(ab) == 0 && pipe(ba) == 0 ? 1 : -1;
}

static void wait_phase(int n)
{
	wait_for(&phase_done, n);
	usleep(SETTLE_US);
}

/* The ping-pong threads end up on timers, the computing one keeps its
 * event; then the pinger computes and gets an event back.  Totals stay
 * those of the CPU clocks across both moves.  On the engine's default
 * choice only: PROFIL_ENGINE=perf keeps every thread on its event
 * (engine_forced_events_stay below). */
TEST_IMPL(engine_switching_threads_move_to_timers)
{
	SKIP_IF_SAMPLES_DEFERRED();
	int ready = set_up(NULL); /* the default's choice: forced, no move */
	if (ready == 0)
		return 0;
	ASSERT(ready == 1);
	static unsigned short buf[2];
	struct profil_stats st;
	double cpu0 = cpu_process();
	ASSERT_OK(profil_set_hz(HZ));
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	ASSERT_OK(profil_get_stats(&st));
	if (st.engine != PROFIL_ENGINE_PERF_EVENTS) {
		ASSERT_OK(profil(no_buf, 0, 0, 0));
		snprintf(test_skip_reason, sizeof test_skip_reason,
		         "the default engine here is not perf events (perf_error %d)", st.perf_error);
		printf("skipped: %s\n", test_skip_reason);
		return 0;
	}
	unsigned long long ticks0 = st.ticks;
	pthread_t t[3];
	ASSERT_OK(pthread_create(&t[0], NULL, pinger, NULL));
	ASSERT_OK(pthread_create(&t[1], NULL, ponger, NULL));
	ASSERT_OK(pthread_create(&t[2], NULL, computer, NULL));

	wait_phase(3); /* pinged out, ponger saw the end, computed */
	int pinger_moved = has_timer(atomic_load(&tids[0]));
	int ponger_moved = has_timer(atomic_load(&tids[1]));
	int computer_moved = has_timer(atomic_load(&tids[2]));
	printf("on timers: pinger %d, ponger %d, computer %d\n", pinger_moved, ponger_moved,
	       computer_moved);
	step(&go_on);
	wait_phase(4); /* the pinger computed */
	int pinger_back = !has_timer(atomic_load(&tids[0]));
	printf("pinger back on an event: %d\n", pinger_back);
	step(&go_on);
	for (int i = 0; i < 3; i++)
		ASSERT_OK(pthread_join(t[i], NULL));
	ASSERT_OK(profil_get_stats(&st));
	double cpu = cpu_process() - cpu0;
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	double ratio = (double)(st.ticks - ticks0) / (cpu * HZ);
	printf("ticks %llu over %.3f CPU s: %.3f\n", st.ticks - ticks0, cpu, ratio);

	ASSERT(pinger_moved && ponger_moved);
	ASSERT(!computer_moved);
	ASSERT(pinger_back);
	/* Each thread's samples are counted on its own CPU clock; what a
	 * thread ran since its last sample is still owed when it is counted
	 * (a period at most, a thread), and the main thread's CPU before and
	 * after the run is the process clock's: a few periods in 1.5 s. */
	ASSERT(ratio > 0.95 && ratio < 1.02);
	close(ab[0]), close(ba[0]), close(ba[1]);
	return 0;
}

/* Forced perf events are what the user asked for: a thread that switches
 * often keeps its event. */
TEST_IMPL(engine_forced_events_stay)
{
	SKIP_IF_SAMPLES_DEFERRED();
	int ready = set_up("perf");
	if (ready == 0)
		return 0;
	ASSERT(ready == 1);
	static unsigned short buf[2];
	struct profil_stats st;
	ASSERT_OK(perf_start(buf, sizeof buf, HZ, &st));
	pthread_t t[2];
	ASSERT_OK(pthread_create(&t[0], NULL, pinger, NULL));
	ASSERT_OK(pthread_create(&t[1], NULL, ponger, NULL));
	wait_phase(2);
	int moved = has_timer(atomic_load(&tids[0])) || has_timer(atomic_load(&tids[1]));
	step(&go_on);
	wait_phase(3);
	step(&go_on);
	for (int i = 0; i < 2; i++)
		ASSERT_OK(pthread_join(t[i], NULL));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT(!moved);
	close(ab[0]), close(ba[0]), close(ba[1]);
	return 0;
}
