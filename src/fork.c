/*
 * fork.c - profiling continues in a forked child, into the child's copies
 * of the buffers (every seed).
 *
 * POSIX timers are not inherited by fork, so the child starts with none:
 * it forgets the parent's registry, gives its one thread a timer at the
 * same rate and signal, and restarts the sweeper.  The engine lock is
 * held across fork so the child never inherits a half-made change.
 */
#include "internal.h"

#include <pthread.h>

static void prepare(void)
{
	engine_lock();
}

static void parent(void)
{
	engine_unlock();
}

static void child(void)
{
	/* Handlers that were running on other threads at the fork do not
	 * exist in the child; their increments must not make drain() wait. */
	atomic_store(&profil_inflight, 0);
	sweeper_forget();
	timers_forget_all();
	if (timers_signal()) {
		timers_add_self();
		sweeper_start();
	}
	engine_unlock();
}

__attribute__((constructor)) static void fork_hooks(void)
{
	pthread_atfork(prepare, parent, child);
}
