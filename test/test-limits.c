/*
 * test-limits.c - profiling within the process's resource limits (issue 9,
 * item 17): every timer holds one unit of RLIMIT_SIGPENDING, which the
 * program's own queued signals need too.
 */
#include "safety.h"

#include <sys/prctl.h>
#include <sys/resource.h>

/* The limit counts per user, across all of that user's processes: the test
 * runs as a user of its own so that nothing else on the machine (other
 * tests, other builds) draws on the same count. */
#define TEST_UID 54321

static pthread_mutex_t park_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cv = PTHREAD_COND_INITIALIZER;
static int parked_release;

static void *parked(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&park_mu);
	while (!parked_release)
		pthread_cond_wait(&park_cv, &park_mu);
	pthread_mutex_unlock(&park_mu);
	return NULL;
}

/* Queues n real-time signals to ourselves (blocked in every thread), then
 * takes them. */
static int queue_own_signals(int sig, int n)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	int queued = 0;
	for (int i = 0; i < n; i++) {
		union sigval v = {.sival_int = i};
		if (sigqueue(getpid(), sig, v) == 0)
			queued++;
		else
			printf("sigqueue %d: %s\n", i, strerror(errno));
	}
	struct timespec zero = {0, 0};
	int taken = 0;
	while (sigtimedwait(&set, NULL, &zero) == sig)
		taken++;
	ASSERT_EQ(taken, queued);
	return queued;
}

TEST_IMPL(limits_sigpending_reserve)
{
	if (getuid() != 0) {
		/* reported as skipped, not passed (runner.h) */
		snprintf(test_skip_reason, sizeof test_skip_reason, "%s",
		         "needs root to run as a user of its own");
		printf("skipped: %s\n", test_skip_reason);
		return 0;
	}
	ASSERT_OK(setresgid(TEST_UID, TEST_UID, TEST_UID));
	ASSERT_OK(setresuid(TEST_UID, TEST_UID, TEST_UID));
	prctl(PR_SET_DUMPABLE, 1); /* keep /proc/self readable */
	struct rlimit rl = {64, 64};
	ASSERT_OK(setrlimit(RLIMIT_SIGPENDING, &rl));
	sigset_t own;
	sigemptyset(&own);
	sigaddset(&own, SIGRTMAX - 1);
	ASSERT_OK(pthread_sigmask(SIG_BLOCK, &own, NULL)); /* inherited */

	enum { BEFORE = 70, AFTER = 10 };
	pthread_t th[BEFORE + AFTER];
	for (int i = 0; i < BEFORE; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, parked, NULL), 0);
	unsigned short buf[2] = {0};
	/* every thread there is: main, BEFORE, and a tool's own (TSan's) */
	int present = count_dir("/proc/self/task");
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	for (int i = BEFORE; i < BEFORE + AFTER; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, parked, NULL), 0);
	/* the main thread is sampled while the sweeper finds the new
	 * threads: at once through our pthread_create, or at its next
	 * sweep's listing of /proc/self/task (the kernel's thread count
	 * changed), which under TSan, whose own pthread_create may go
	 * around ours, once came later than 0.25 s; 30 s at most */
	struct profil_stats st;
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		burn(0.25);
		ASSERT_OK(profil_get_stats(&st));
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (st.threads + st.untimed < (unsigned)(present + AFTER) && now.tv_sec - t0.tv_sec < 30);
	/* the other threads may still be sampled into buf: read it as the
	 * library writes it, atomically (TSan reports a plain read) */
	unsigned samples = __atomic_load_n(&buf[0], __ATOMIC_RELAXED);
	printf("timers %u, untimed %u, samples %u\n", st.threads, st.untimed, samples);
	/* a reserve of 16 of the 64 is kept for the program */
	ASSERT(st.threads <= 64 - 16);
	ASSERT(st.threads >= 32);
	ASSERT_EQ(st.threads + st.untimed, present + AFTER);
	ASSERT(present >= 1 + BEFORE);
	ASSERT(samples > 0);
	/* the program's own queued signals still fit */
	ASSERT_EQ(queue_own_signals(SIGRTMAX - 1, 12), 12);

	pthread_mutex_lock(&park_mu);
	parked_release = 1;
	pthread_cond_broadcast(&park_cv);
	pthread_mutex_unlock(&park_mu);
	for (int i = 0; i < BEFORE + AFTER; i++)
		pthread_join(th[i], NULL);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT_EQ(queue_own_signals(SIGRTMAX - 1, 40), 40);
	return 0;
}
