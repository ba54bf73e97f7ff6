/*
 * ending.c - threads that dropped their own entry as they end, while they
 * are still there.
 *
 * Threads that dropped their own entry as they end (timers_reconcile_self():
 * a thread our pthread_create hook made, settled as its start routine
 * returned) are still listed in /proc/self/task until they have ended.
 * A listing must not take one for a thread found late: it would be
 * credited its whole CPU time a second time.  Most end within
 * microseconds; one still listed a listing later runs its pthread_key
 * destructors (glibc runs them after the start routine: a program's that
 * took 0.3 s was all at [process exit]), with the sampling signal blocked
 * (threads.c: a signal of its deleted timer still queued would count
 * twice): each listing credits on it, at [unsampled], what it ran since
 * the last, and listings come every sweep while there are such threads.
 * Entries go when a listing no longer names them.  With no room left, no
 * thread found is credited until there is (ending_full).
 *
 * Engine lock held for all of these (the thread's settle, the sweeps,
 * timers_start()).
 */
#include "engine/registry.h"
#include "base/ring.h"

#define ENDING_MAX 256
static struct ending {
	pid_t tid;
	unsigned char listings; /* listings that named it since */
	unsigned char listed;   /* named by the listing under way */
	int64_t settled_ns;     /* its CPU time when it settled */
} ending[ENDING_MAX] LARGE_STATIC;
static size_t nending;
static int ending_full;

void timers_note_ending(pid_t tid, int64_t cpu_ns)
{
	if (nending == ENDING_MAX)
		ending_full = 1;
	else
		ending[nending++] = (struct ending){tid, 0, 0, cpu_ns};
}

static struct ending *ending_of(pid_t tid)
{
	for (size_t i = 0; i < nending; i++)
		if (ending[i].tid == tid)
			return &ending[i];
	return NULL;
}

static void ending_drop(struct ending *e)
{
	*e = ending[--nending];
	ending_full = 0; /* room again */
}

/* After a listing: those it did not name have ended. */
void ending_after_listing(void)
{
	for (size_t i = nending; i-- > 0;) {
		if (!ending[i].listed)
			ending_drop(&ending[i]);
		else
			ending[i].listed = 0, ending[i].listings++;
	}
}

/* An ending thread a listing names: what it ran since the last credit
 * is credited, once a listing has passed since it settled. */
int ending_listed(pid_t tid)
{
	struct ending *e = ending_of(tid);
	int64_t cpu_ns;
	if (!e)
		return 0;
	e->listed = 1;
	if (e->listings > 0 && cpugrid_clock_of(tid, &cpu_ns) == 0 && cpu_ns > e->settled_ns) {
		timers_credit_ns(tid, (uintptr_t)RING_PC_UNSAMPLED, cpu_ns - e->settled_ns);
		e->settled_ns = cpu_ns;
	}
	return 1;
}

int ending_any(void)
{
	return nending > 0;
}

int ending_overflowed(void)
{
	return ending_full;
}

void ending_forget(void)
{
	nending = 0, ending_full = 0;
}
