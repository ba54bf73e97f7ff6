/*
 * test-engine-backlog.c - a thread that holds back the perf engine's
 * real-time signal must not let the signals pile up (src/engine/backlog.c).
 *
 * Each overflow of an event queues a real-time signal of its own.  A
 * thread that blocks it with a raw rt_sigprocmask (our wrappers never
 * let the program block it; runtimes make the system call themselves)
 * queued one per period until RLIMIT_SIGPENDING was reached, and the
 * kernel then sent a plain SIGIO instead, which killed the program:
 * `profil record` at 4 kHz, `ulimit -i 2000`, a thread blocking
 * everything as it spun, exit status 157 (128 + SIGIO) in half a second.
 */
#include "runner.h"
#include "safety.h"
#include "perfcheck.h"

#include <profil.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SPIN_CPU_S 2.0
#define QUEUE_ROOM 1000 /* queued signals allowed above what is queued now */

static atomic_int spin_done, may_exit;

/* Blocks every signal with the system call itself, spins SPIN_CPU_S of
 * its CPU, and stays blocked until told to exit. */
static void *blocked_spinner(void *arg)
{
	(void)arg;
	unsigned long long all = ~0ull;
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, sizeof all);
	while (cpu_thread() < SPIN_CPU_S)
		;
	atomic_store(&spin_done, 1);
	while (!atomic_load(&may_exit))
		usleep(1000);
	return NULL;
}

/* The user's queued signals and their limit (SigQ of /proc/self/status). */
static int user_sigq(long *queued, long *limit)
{
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");
	int ok = 0;
	ASSERT(f != NULL);
	while (!ok && fgets(line, sizeof line, f))
		ok = sscanf(line, "SigQ: %ld/%ld", queued, limit) == 2;
	fclose(f);
	ASSERT(ok);
	return 0;
}

/* With room for QUEUE_ROOM more queued signals and events at 1000 Hz on a
 * real-time signal, a thread blocking it for SPIN_CPU_S (2000 periods)
 * would overflow the queue; it must be moved to a timer first.  The
 * process surviving is the test; the queue is checked too, while the
 * thread still blocks. */
TEST_IMPL(engine_perf_blocked_thread_moves_to_timer)
{
	SKIP_IF_SAMPLES_DEFERRED();
	setenv("PROFIL_ENGINE", "perf", 1);
	setenv("PROFIL_SIGNAL", "RTMAX-3", 1);
	if (!perf_allowed() || !perf_rate_ok(1000, tick_hz()))
		return 0;
	long queued, limit;
	ASSERT_OK(user_sigq(&queued, &limit));
	struct rlimit old, rl;
	ASSERT_OK(getrlimit(RLIMIT_SIGPENDING, &old));
	rl = old;
	rl.rlim_cur = (rlim_t)(queued + QUEUE_ROOM);
	ASSERT(rl.rlim_cur <= old.rlim_max);
	ASSERT_OK(setrlimit(RLIMIT_SIGPENDING, &rl));

	static unsigned short buf[2];
	struct profil_stats st;
	ASSERT_OK(perf_start(buf, sizeof buf, 1000, &st));
	ASSERT(st.signal >= SIGRTMIN);
	pthread_t th;
	ASSERT_EQ(pthread_create(&th, NULL, blocked_spinner, NULL), 0);
	while (!atomic_load(&spin_done))
		usleep(2000);
	long now_queued, now_limit;
	ASSERT_OK(user_sigq(&now_queued, &now_limit));
	printf("queued signals after %.1f CPU s blocked: %ld (limit %ld)\n", SPIN_CPU_S,
	       now_queued, now_limit);
	ASSERT(now_queued < now_limit);
	atomic_store(&may_exit, 1);
	ASSERT_EQ(pthread_join(th, NULL), 0);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT_OK(setrlimit(RLIMIT_SIGPENDING, &old));
	return 0;
}
