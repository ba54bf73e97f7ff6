/*
 * fork.c - profiling continues in a forked child, into the child's copies
 * of the buffers (every seed), at the same rate and signal, for the
 * child's thread and every thread it creates.
 *
 * POSIX timers are not inherited by fork, so the child starts with none:
 * it forgets the parent's registry, gives its one thread a timer, and,
 * after the agent's hook, restarts the sweeper (whose condition variable
 * it must not destroy: the parent's sweeper may be one of its waiters,
 * see sweeper_forget()).  When
 * a thread other than the main one forked, the child's one thread is a
 * pthread whose return ends the process: the sweeper then leaves so that
 * glibc's exit(0) happens (sweeper.c, issue 9).  The
 * engine lock and fault.c's lock are held across fork so the child never
 * inherits a half-made change, and so is the library's allocator's
 * (base/alloc.c: the helper may be carving a block at the fork); pending
 * signals are not inherited either.
 *
 * No fork livelock: the kernel restarts a fork interrupted by a signal
 * sent to the whole process (so an ITIMER_PROF at a high rate can starve a
 * large process's fork for ever), but since Linux 5.0 a signal sent to one
 * thread, like our per-thread timers' (SIGEV_THREAD_ID), is delivered
 * after the fork completes instead.  Nothing is lost: the parent's sample
 * is taken when fork returns.
 *
 * Not covered: _Fork() and raw clone() run no atfork handler; their child
 * has no timer and is not profiled (its getpid() differs from the timers'
 * owner, so threads.c and exec.c leave it alone).
 */
#include "process/process.h"
#include "engine/engine.h"

#include <pthread.h>

const char process_fork_linked = 1; /* process.h: for static links */

static void prepare(void)
{
	void (*hook)(void) = atomic_load(&fork_prepare_hook);
	if (hook) /* before the locks: it walks the stack (sample.c's rules) */
		hook();
	engine_lock();
	fault_atfork_prepare();
	alloc_atfork_prepare(); /* a leaf lock: last */
}

static void parent(void)
{
	sample_in_fork_return = 1; /* the fork's expiries arrive here: engine.h */
	alloc_atfork_parent();
	fault_atfork_parent();
	sample_in_fork_return = 0;
	engine_unlock();
}

static void child(void)
{
	sample_in_fork_start = 1; /* until the end: engine.h */
	alloc_atfork_child();
	fault_atfork_child();
	base_keep_forked_child();
	/* Handlers that were running on other threads at the fork do not
	 * exist in the child; their increments must not make drain() wait. */
	atomic_store(&profil_inflight, 0);
	threads_forked_child();
	sweeper_forget();
	timers_forget_all();
	int on = timers_signal() != 0;
	/* A ring table is the parent's file, mapped shared: a sample taken
	 * here before the agent's hook gives the child a ring of its own
	 * went into the parent's (a stray thread of the parent's process, or
	 * under --no-children a child's sample recorded at all).  Withdrawn;
	 * the hook publishes the child's.  A histogram is the child's copy. */
	struct ptable *t = atomic_load(&profil_published);
	if (t && t->mode == PTABLE_RING && atomic_load(&fork_child_hook))
		atomic_store(&profil_published, (struct ptable *)0);
	fork_child_timer_cpu = -1;
	if (on) {
		struct timespec ts;
		if (base_clock_read(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
			fork_child_timer_cpu = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
		timers_add_self();
	}
	engine_unlock();
	void (*hook)(void) = atomic_load(&fork_child_hook);
	if (hook)
		hook();
	/* The helper thread last, and only if profiling goes on: the agent's
	 * hook ends it in a child it does not follow (--no-children), and a
	 * helper started for nothing cost each such fork a thread created
	 * and joined. */
	if (on) {
		engine_lock();
		if (timers_signal())
			sweeper_begin(); /* the agent's: deferred (lazy_helper.c) */
		engine_unlock();
	}
	/* sweeper_start() made the helper with every signal blocked (the
	 * thread inherits that mask); what expired meanwhile was delivered
	 * when it restored ours, above: the start's cost */
	sample_in_fork_start = 0;
}

/* Set once by the profil agent (agent/): called in a forked child after
 * the engine is consistent again, to give the child a sample ring of its
 * own.  Atomic: written once, before any fork it matters for. */
void (*_Atomic fork_child_hook)(void);
void (*_Atomic fork_prepare_hook)(void);
int64_t fork_child_timer_cpu = -1;

__attribute__((constructor)) static void fork_hooks(void)
{
	sample_fork_pc = (uintptr_t)fork;
	pthread_atfork(prepare, parent, child);
}
