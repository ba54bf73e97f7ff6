/*
 * sweeper.c - the fallback for threads no hook saw.
 *
 * Threads created before profiling started are found by timers_start();
 * threads created through pthread_create get a timer in threads.c.  A
 * thread made some other way (a raw clone, a runtime that bypasses the
 * interposed symbol) would go unsampled, and a thread that exited without
 * our trampoline would leave a timer behind.  This helper thread rescans
 * /proc/self/task every SWEEP_MS while profiling is on.  It never blocks
 * on the engine lock (it tries, and skips a round if busy), so the engine
 * may join it while holding the lock.  It blocks every signal and is
 * excluded from sampling.
 *
 * It also carries out what must not be done where it is asked for: a
 * program that installs a handler on the sampling signal, maybe from a
 * signal handler, only records that the samples must move (handover.c)
 * and wakes the sweeper with sweeper_wake(), a futex wake, which is
 * async-signal-safe where a condition variable is not.
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define SWEEP_MS 100

/* Set once by the profil agent (agent/) before profiling starts. */
void (*_Atomic sweeper_tick_hook)(void);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t thread;  /* mu */
static int running;       /* mu */
static atomic_int quit;
/* Bumped by every wake; the sweeper sleeps while it is unchanged. */
static atomic_int wake;

static void futex_wait(atomic_int *word, int seen, long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

void sweeper_wake(void)
{
	int e = errno;
	atomic_fetch_add(&wake, 1);
	syscall(SYS_futex, &wake, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	errno = e;
}

static void *sweep(void *unused)
{
	(void)unused;
	timers_exclude((pid_t)syscall(SYS_gettid));
	long ms = SWEEP_MS;
	int seen = atomic_load(&wake);
	while (!atomic_load(&quit)) {
		futex_wait(&wake, seen, ms); /* a wake since `seen`: at once */
		seen = atomic_load(&wake);
		if (atomic_load(&quit))
			break;
		ms = SWEEP_MS;
		if (engine_trylock() == 0) {
			engine_reap();
			signal_settle();
			timers_rescan();
			engine_unlock();
		} else {
			ms = 5; /* a move may be waiting: try again soon */
		}
		void (*hook)(void) = atomic_load(&sweeper_tick_hook);
		if (hook) /* the agent's module poll: no engine lock held */
			hook();
	}
	return NULL;
}

int sweeper_start(void)
{
	pthread_mutex_lock(&mu);
	int rc = 0;
	if (!running) {
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited by it */
		atomic_store(&quit, 0);
		rc = threads_create_raw(&thread, NULL, sweep, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		running = rc == 0;
	}
	pthread_mutex_unlock(&mu);
	if (rc != 0)
		errno = rc;
	return rc ? -1 : 0;
}

void sweeper_stop(void)
{
	pthread_mutex_lock(&mu);
	if (!running) {
		pthread_mutex_unlock(&mu);
		return;
	}
	atomic_store(&quit, 1);
	running = 0;
	sweeper_wake();
	pthread_t t = thread;
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
	timers_exclude(0);
}

/* In a forked child the helper thread does not exist. */
void sweeper_forget(void)
{
	pthread_mutex_init(&mu, NULL);
	running = 0;
	atomic_store(&quit, 0);
}
