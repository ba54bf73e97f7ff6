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
 */
#include "internal.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#define SWEEP_MS 100

/* Set once by the profil agent (agent/) before profiling starts. */
void (*_Atomic sweeper_tick_hook)(void);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static pthread_t thread;  /* mu */
static int running, quit; /* mu */

static void *sweep(void *unused)
{
	(void)unused;
	timers_exclude((pid_t)syscall(SYS_gettid));
	pthread_mutex_lock(&mu);
	while (!quit) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += SWEEP_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L)
			ts.tv_sec++, ts.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&cv, &mu, &ts);
		if (quit)
			break;
		pthread_mutex_unlock(&mu);
		if (engine_trylock() == 0) {
			engine_reap();
			timers_rescan();
			engine_unlock();
		}
		void (*hook)(void) = atomic_load(&sweeper_tick_hook);
		if (hook) /* the agent's module poll: no engine lock held */
			hook();
		pthread_mutex_lock(&mu);
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

int sweeper_start(void)
{
	pthread_mutex_lock(&mu);
	int rc = 0;
	if (!running) {
		/* No waiter exists now: (re)initialise the condition on the
		 * monotonic clock, so wall-clock jumps do not stall sweeps. */
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_destroy(&cv);
		pthread_cond_init(&cv, &ca);
		pthread_condattr_destroy(&ca);
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited by it */
		quit = 0;
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
	quit = 1;
	running = 0;
	pthread_cond_signal(&cv);
	pthread_t t = thread;
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
	timers_exclude(0);
}

/* In a forked child the helper thread does not exist. */
void sweeper_forget(void)
{
	/* The parent's sweeper may be a waiter of cv: pthread_cond_destroy()
	 * in sweeper_start() would wait for it for ever.  Start afresh. */
	cv = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	pthread_mutex_init(&mu, NULL);
	running = 0;
	quit = 0;
}
