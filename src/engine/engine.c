/*
 * engine.c - publishes the range table the signal handler reads, and
 * retires the old one only when no handler can still be reading it.
 *
 * The handshake with sample.c (see its contract): the handler increments
 * profil_inflight, then loads profil_published; engine_publish() stores
 * the new pointer, then waits until it sees profil_inflight at zero.  With
 * sequentially consistent operations on both sides, a handler either
 * incremented before that zero was seen (and the publisher waited for it)
 * or loaded the new pointer.  So when engine_publish() returns, no handler
 * holds the old table, and the caller may free the old buffers at once.
 */
#include "engine/engine_int.h"
#include "engine/perf_engine.h"
#include "unwind/unwind.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * Read by the signal handler.  Changed only by engine_publish() and
 * engine_withdraw() under the engine lock (atomic store), and by the
 * handler itself, which may replace a table whose buffer faulted by NULL
 * (atomic compare-and-swap).
 */
_Atomic(struct ptable *) profil_published;
/* Atomic counters, reset (under the engine lock) when profiling starts. */
struct pstats profil_pstats;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Under the lock: the table we own (published, or withdrawn after a fault)
 * and the last histogram table that was replaced, kept for gmon output. */
static struct ptable *current;
static struct ptable *last_hist;
/* Under the lock: samples stored by the pcsample table retired last, kept
 * until pcsample() takes it (its return value is the previous call's count;
 * the table may have been replaced by any form in between). */
static size_t pc_stored;

/* Nonzero while this thread holds the lock, or is taking or releasing
 * it: exec.c, called from a signal handler, must not wait for a lock its
 * own thread holds, so the flag covers the instructions around the lock
 * word too (set before taking, cleared after releasing). */
static __thread volatile int held_here __attribute__((tls_model("initial-exec")));

void engine_lock(void)
{
	held_here = 1;
	pthread_mutex_lock(&lock);
}

int engine_trylock(void)
{
	held_here = 1;
	int rc = pthread_mutex_trylock(&lock);
	if (rc != 0)
		held_here = 0;
	return rc;
}

void engine_unlock(void)
{
	pthread_mutex_unlock(&lock);
	held_here = 0;
}

int engine_held_here(void)
{
	return held_here;
}

/*
 * The engine lock, or -1 if this thread holds it (a signal handler that
 * interrupted our own code) or it stays busy for LOCK_WAIT_MS.  For the
 * interposed calls that are async-signal-safe (exec, the setuid family):
 * from a handler, waiting for a holder that needs what the interrupted
 * code holds (malloc's lock, ours while it was being taken) would never
 * end.  Holders keep it for microseconds.
 */
#define LOCK_WAIT_MS 200

int engine_lock_bounded(void)
{
	if (engine_held_here())
		return -1;
	if (engine_trylock() == 0)
		return 0; /* nearly always: no clock read (base/fmt.c on the vDSO's pages) */
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (engine_trylock() != 0) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > LOCK_WAIT_MS)
			return -1;
		sched_yield();
	}
	return 0;
}

static void reset_stats(void)
{
	atomic_store(&profil_pstats.signals, 0);
	atomic_store(&profil_pstats.ticks, 0);
	atomic_store(&profil_pstats.in_range, 0);
	atomic_store(&profil_pstats.out_of_range, 0);
	atomic_store(&profil_pstats.saturated, 0);
	atomic_store(&profil_pstats.overruns, 0);
	atomic_store(&profil_pstats.faults, 0);
	atomic_store(&profil_pstats.reconciled, 0);
	atomic_store(&profil_pstats.exec_lost, 0);
	atomic_store(&profil_pstats.deferred, 0);
	atomic_store(&profil_pstats.stopped, PROFIL_STOP_NONE);
}

/* Keep a replaced histogram table for profil_write_gmon(); free others,
 * noting a pcsample table's final count.  Called after drain(), so pcnext
 * can no longer move. */
static void retire(struct ptable *old)
{
	if (!old)
		return;
	if (old->mode == PTABLE_HIST) {
		ptable_free(last_hist);
		last_hist = old;
	} else {
		if (old->mode == PTABLE_PCSAMPLE) {
			size_t n = atomic_load(&old->pcnext);
			pc_stored = n < old->pccap ? n : old->pccap;
		}
		ptable_free(old); /* a ring's memory is its creator's */
	}
}

static int start_timers(void)
{
	int sig = perf_engine_wants_trap(hz_current()) ? SIGTRAP : signal_choose();
	if (sig < 0)
		return -1;
	if (fault_install() != 0)
		return -1;
	if (signal_install(sig) != 0) {
		fault_uninstall();
		return -1;
	}
	if (timers_start(sig, hz_current()) != 0) {
		int e = errno;
		signal_restore();
		fault_uninstall();
		errno = e;
		return -1;
	}
	sweeper_begin(); /* best effort: the hooks cover most threads */
	return 0;
}

static void stop_timers(void)
{
	sweeper_stop();
	timers_stop();
	signal_restore();
	fault_uninstall(); /* last: pending samples may still write */
}

/*
 * Called by the sweeper with the lock held.  After a fault the handler
 * withdrew the table (sample.c) but cannot make system calls; the timers,
 * the sampling signal and the fault handler are released here, so
 * profiling is off within one sweep.  The sweeper itself idles until the
 * next publish joins it.
 */
void engine_reap(void)
{
	if (timers_signal() && current && !atomic_load(&profil_published)) {
		inflight_drain(); /* a handler still writing may fault: recovery stays */
		timers_stop();
		signal_restore();
		fault_uninstall();
	}
}

/*
 * Called by the sweeper with the lock held when the program took the
 * sampling signal behind our back and none other was free
 * (signal_check_taken()): the timers go, so the program's handler gets
 * no signal it did not ask for; the table stays published and the next
 * stop releases the rest as usual.
 */
void engine_signal_taken(void)
{
	inflight_drain();
	timers_stop();
	atomic_store(&profil_pstats.stopped, PROFIL_STOP_SIGNAL_TAKEN);
}

int engine_withdraw(void)
{
	if (engine_trylock() != 0)
		return -1;
	/* as a fault's withdrawal (sample.c): the table stays current, ours
	 * until the next publish retires it; engine_reap() does the rest */
	if (current && atomic_load(&profil_published) == current)
		atomic_store(&profil_published, NULL);
	inflight_drain(); /* no handler holds it when we return */
	engine_unlock();
	return 0;
}

int engine_publish(struct ptable *t)
{
	return engine_publish_take(t, NULL);
}

/* engine_publish_take() once the lock is held; unlocks. */
static int publish_locked(struct ptable *t, size_t *pcsample_stored)
{
	int running = timers_signal() != 0;
	if (t && !running && start_timers() != 0) {
		int e = errno;
		engine_unlock();
		ptable_free(t);
		errno = e;
		return -1;
	}
	if (t)
		reset_stats();
	signal_settle(); /* a move the program asked for (handover.c) */
	atomic_store(&profil_published, t);
	inflight_drain();
	if (!t)
		stop_timers(); /* also joins a sweeper left idle by engine_reap() */
	retire(current);
	current = t;
	if (pcsample_stored) {
		*pcsample_stored = pc_stored;
		pc_stored = 0;
	}
	engine_unlock();
	return 0;
}

int engine_publish_take(struct ptable *t, size_t *pcsample_stored)
{
	engine_lock();
	return publish_locked(t, pcsample_stored);
}

/*
 * engine_publish(t) from the helper thread (its start hook, agent/child.c).
 * A thread holding the engine lock may be joining the helper
 * (engine_publish(NULL), an exec, a change of credentials: all through
 * sweeper_stop()), so the helper never waits for the lock while it is
 * asked to quit: it tries, naps, and gives up with ECANCELED (t freed)
 * once sweeper_quitting() says so.  It blocked there before, and a forked
 * child of man-db's whose helper was just starting when the program
 * installed its seccomp filter (agent_stop_sandboxed(), which joins the
 * helper holding the lock) hung for ever, and man with it.
 */
int engine_publish_helper(struct ptable *t)
{
	struct timespec nap = {0, 200 * 1000};
	while (engine_trylock() != 0) {
		if (sweeper_quitting()) {
			ptable_free(t);
			errno = ECANCELED;
			return -1;
		}
		nanosleep(&nap, NULL);
	}
	return publish_locked(t, NULL);
}

struct ptable *engine_last_hist_copy(void)
{
	engine_lock();
	const struct ptable *src = current && current->mode == PTABLE_HIST ? current : last_hist;
	struct ptable *copy = NULL;
	if (src && (copy = ptable_new(src->nranges)) != NULL) {
		copy->mode = src->mode;
		copy->form = src->form;
		copy->overflow = src->overflow;
		copy->overflow_width = src->overflow_width;
		memcpy(copy->ranges, src->ranges, src->nranges * sizeof src->ranges[0]);
	} else if (!src) {
		errno = ENOENT;
	}
	engine_unlock();
	return copy;
}
