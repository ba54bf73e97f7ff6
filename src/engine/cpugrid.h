/*
 * cpugrid.h - where on a thread's CPU clock its timer expires, so that a
 * thread's count can be made unbiased and completed when it exits.
 *
 * A timer with period P started at a fixed point of the thread's CPU time
 * favours long threads: a thread that runs less than its first period is
 * never sampled, and one that runs 1.9 P is sampled once.  Our timer's
 * expiries form a grid  first + j P  on the thread's CPU clock, with
 * `first` drawn uniformly in (from, from + P]: then the number of grid
 * points in (from, c] has expectation exactly (c - from) / P for every c.
 *
 * The timer is armed with TIMER_ABSTIME on that grid, and the kernel keeps
 * it there (an overrun advances the expiry by whole periods), so what the
 * handler has credited on a thread is always a count of grid points.  At
 * the thread's exit, threads.c reads the thread's CPU clock and credits
 * the grid points not yet delivered (timers_reconcile_self()).
 *
 * A rate change starts a new grid at the thread's current CPU time; the
 * points of the old one that were passed are kept in `due`.
 */
#ifndef PROFIL_CPUGRID_H
#define PROFIL_CPUGRID_H

#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#define CPUGRID_HIDDEN __attribute__((visibility("hidden")))

/* cpugrid.c (engine lock held) */
CPUGRID_HIDDEN clockid_t cpugrid_clockid(pid_t tid); /* thread tid's CPU clock */
CPUGRID_HIDDEN int64_t cpugrid_period(unsigned int hz); /* ns, at least 1 */
CPUGRID_HIDDEN uint64_t cpugrid_phase(int64_t per);   /* uniform in [1, per] */
/* Thread tid's CPU time in ns; -1 when it has gone. */
CPUGRID_HIDDEN int cpugrid_clock_of(pid_t tid, int64_t *ns);

struct cpugrid {
	int64_t first;  /* CPU ns of the first expiry of this segment */
	int64_t per;    /* period, ns */
	uint64_t due;   /* grid points passed in earlier segments */
};

static inline int64_t ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static inline struct timespec ns_ts(int64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
	return ts;
}

/* Grid points in (from, c] of the current segment (first > from). */
static inline uint64_t cpugrid_passed(const struct cpugrid *g, int64_t c)
{
	return c < g->first ? 0 : (uint64_t)((c - g->first) / g->per) + 1;
}

/* Every grid point passed up to CPU time c, all segments. */
static inline uint64_t cpugrid_total(const struct cpugrid *g, int64_t c)
{
	return g->due + cpugrid_passed(g, c);
}

/* The first grid point after CPU time c. */
static inline int64_t cpugrid_next(const struct cpugrid *g, int64_t c)
{
	return c < g->first ? g->first : g->first + (int64_t)cpugrid_passed(g, c) * g->per;
}

/* A new segment of period per from CPU time from, with phase in [1, per]. */
static inline void cpugrid_restart(struct cpugrid *g, int64_t from, int64_t per,
                                   uint64_t phase)
{
	g->first = from + (int64_t)phase;
	g->per = per;
}

#endif
