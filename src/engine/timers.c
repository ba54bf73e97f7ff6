/*
 * timers.c - one CPU-time timer per thread.
 *
 * Why not ITIMER_PROF: the process-wide profiling timer is checked against
 * the whole process's CPU time, and its signal goes to whichever thread
 * the kernel picks (usually the main one).  With threads running in
 * parallel it undercounts and misattributes (glibc's profil; Go issue
 * 35057).  A timer on each thread's own CPU clock, delivered to that
 * thread (SIGEV_THREAD_ID), samples every thread at exactly the rate.
 *
 * The kernel checks CPU timers once per tick (CONFIG_HZ, often 250), so
 * at higher rates one signal stands for several expiries; the handler
 * credits 1 + si_overrun, which keeps totals right.
 *
 * Each timer's expiries lie on a grid of the thread's CPU clock with a
 * random phase (cpugrid.h), so a thread's expected count is exact however
 * short it is, and threads.c completes the count when the thread exits.
 *
 * Every timer holds one unit of the user's RLIMIT_SIGPENDING (its signal
 * is preallocated), which the program's own sigqueue() also draws on: we
 * keep a reserve of it free and leave further threads without a timer,
 * counted in profil_get_stats().untimed (see timers_budget()).
 *
 * Registry: the (tid, timer) pairs we own.  Every function here runs with
 * the engine lock held; the signal handler never looks at the registry.
 */
#include "engine/sampling.h"
#include "engine/cpugrid.h"
#include "engine/perf_engine.h"
#include "engine/registry.h"
#include "engine/switchwatch.h"

#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

const char profil_timer_tag = 'p';

struct entry *timers_reg;      /* engine lock */
size_t timers_nreg;            /* engine lock */
static size_t capreg;          /* engine lock */
static int cur_sig;            /* engine lock; 0 when stopped */
static unsigned int cur_hz;    /* engine lock */
size_t timers_max;             /* engine lock: timers_budget() at the last scan */
unsigned int timers_refused;   /* engine lock: threads refused by budget */
/* Process the timers belong to: written under the engine lock, read
 * without it by exec.c (a vfork child shares this memory, not the timers). */
static _Atomic pid_t owner_pid;

pid_t timers_my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

int timers_find(pid_t tid)
{
	for (size_t i = 0; i < timers_nreg; i++)
		if (timers_reg[i].tid == tid)
			return (int)i;
	return -1;
}

/* A timer on tid's CPU clock that sends cur_sig to tid, first at CPU time
 * `at` (absolute: if it has passed, at once, with the overruns since) and
 * then every per ns. */
static int make_timer(pid_t tid, int64_t at, int64_t per, timer_t *out)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = cur_sig;
	sev.sigev_value.sival_ptr = timer_tag(tid);
	sev.sigev_notify_thread_id = tid;
	timer_t id;
	if (timer_create(cpugrid_clockid(tid), &sev, &id) != 0)
		return -1; /* EINVAL: the thread has gone; EAGAIN: no timers */
	struct itimerspec its = {ns_ts(per), ns_ts(at)};
	if (timer_settime(id, TIMER_ABSTIME, &its, NULL) != 0) {
		int e = errno;
		timer_delete(id);
		errno = e;
		return -1;
	}
	*out = id;
	return 0;
}

/* Give tid a timer whose grid starts at its CPU time 0 (born: it is new,
 * and profiled from its first instant) or now. */
int timers_add(pid_t tid, int born)
{
	if (timers_nreg >= timers_max) {
		errno = EAGAIN;
		return -1;
	}
	if (timers_nreg == capreg) {
		size_t cap = capreg ? capreg * 2 : 16;
		struct entry *n = mem_realloc(timers_reg, cap * sizeof *n);
		if (!n) {
			errno = ENOMEM;
			return -1;
		}
		timers_reg = n, capreg = cap;
	}
	int64_t now, per = cpugrid_period(cur_hz);
	struct cpugrid g = {0, per, 0};
	if (cpugrid_clock_of(tid, &now) != 0) {
		errno = EINVAL; /* gone */
		return -1;
	}
	cpugrid_restart(&g, born ? 0 : now, per, cpugrid_phase(per));
	timer_t id = 0;
	int fd = perf_engine_on() ? perf_engine_open(tid, cur_sig, per, born ? 0 : now, born) : -1;
	if (fd < 0 && make_timer(tid, g.first, per, &id) != 0)
		return -1;
	timers_reg[timers_nreg].tid = tid;
	timers_reg[timers_nreg].timer = id;
	timers_reg[timers_nreg].fd = fd;
	timers_reg[timers_nreg].grid = g;
	timers_reg[timers_nreg].self_drops = (unsigned char)born;
	timers_reg[timers_nreg].seen = 1;
	timers_reg[timers_nreg].switched = 0;
	timers_nreg++;
	return 0;
}

void timers_drop(size_t i)
{
	/* In a child that no atfork handler told (a raw fork or _Fork), the
	 * events are the parent's: silencing them would stop its sampling. */
	if (timers_reg[i].fd >= 0 && getpid() != owner_pid)
		perf_engine_forget(timers_reg[i].fd);
	else if (timers_reg[i].fd >= 0)
		perf_engine_close(timers_reg[i].fd);
	else
		timer_delete(timers_reg[i].timer);
	timers_reg[i] = timers_reg[--timers_nreg];
}

int timers_start(int sig, unsigned int hz)
{
	cur_sig = sig;
	cur_hz = hz;
	owner_pid = getpid();
	switch_moved_reset();
	perf_engine_choose(hz, sig); /* events or timers for this run */
	atomic_fetch_add(&sample_epoch, 1); /* tallies start afresh */
	/* the caller first, so it is sampled even with a small budget */
	timers_max = timers_budget();
	if (timers_add(timers_my_tid(), 0) != 0 && errno != EAGAIN)
		goto fail;
	if (timers_cover_all(1) != 0)
		goto fail;
	if (timers_nreg > 0)
		return 0;
	errno = EAGAIN; /* not one timer: the signal queue is full */
fail:;
	int e = errno;
	timers_stop();
	errno = e;
	return -1;
}

void timers_stop(void)
{
	ioworkers_settle(0);
	ioworkers_forget();
	while (timers_nreg > 0)
		timers_drop(timers_nreg - 1);
	cur_sig = 0;
	perf_engine_off();
}

/*
 * Move every timer to signal sig, all or nothing: the new timers are made
 * first, and only when all exist are the old ones deleted.  A thread that
 * exited meanwhile (EINVAL) simply loses its entry.
 */
int timers_resignal(int sig)
{
	timer_t *fresh = mem_alloc((timers_nreg ? timers_nreg : 1) * sizeof *fresh);
	if (!fresh) {
		errno = ENOMEM;
		return -1;
	}
	int old = cur_sig;
	cur_sig = sig;
	unsigned char *gone = mem_calloc(timers_nreg ? timers_nreg : 1, 1);
	size_t i;
	for (i = 0; gone && i < timers_nreg; i++) {
		int64_t now; /* the new timer carries on the old one's grid */
		if (cpugrid_clock_of(timers_reg[i].tid, &now) != 0)
			gone[i] = 1;
		else if (timers_reg[i].fd >= 0)
			continue; /* an event: F_SETSIG below cannot fail */
		else if (make_timer(timers_reg[i].tid, cpugrid_next(&timers_reg[i].grid, now),
		                    timers_reg[i].grid.per, &fresh[i]) != 0 &&
		         !(gone[i] = errno == EINVAL))
			break;
	}
	if (!gone || i < timers_nreg) {
		int e = gone ? errno : ENOMEM;
		while (i-- > 0)
			if (!gone[i] && timers_reg[i].fd < 0)
				timer_delete(fresh[i]);
		cur_sig = old;
		mem_free(gone);
		mem_free(fresh);
		errno = e;
		return -1;
	}
	for (i = timers_nreg; i-- > 0;) {
		if (timers_reg[i].fd < 0)
			timer_delete(timers_reg[i].timer);
		else if (gone[i])
			perf_engine_close(timers_reg[i].fd);
		else
			perf_engine_resignal(timers_reg[i].fd, sig);
		if (gone[i]) /* entries above i are done: move the last one here */
			timers_reg[i] = timers_reg[--timers_nreg];
		else if (timers_reg[i].fd < 0)
			timers_reg[i].timer = fresh[i];
	}
	mem_free(gone);
	mem_free(fresh);
	return 0;
}

/* Entry i's event replaced by a timer on its grid; -1 (the event kept)
 * if no timer can be made: the thread has gone, or the signal queue is
 * full (EAGAIN). */
int timers_to_timer(size_t i)
{
	int64_t now;
	timer_t id;
	if (cpugrid_clock_of(timers_reg[i].tid, &now) != 0 ||
	    make_timer(timers_reg[i].tid, cpugrid_next(&timers_reg[i].grid, now), timers_reg[i].grid.per, &id) != 0)
		return -1;
	perf_engine_close(timers_reg[i].fd);
	timers_reg[i].fd = -1;
	timers_reg[i].timer = id;
	return 0;
}

/* Entry i's timer replaced by an event from the thread's CPU time now
 * (the timer's expiries before it are still delivered: the event's
 * weighing starts after them); -1 (the timer kept) if the thread has
 * gone or no event can be made.  Only while the run is on events. */
int timers_to_event(size_t i)
{
	int64_t now;
	struct entry *e = &timers_reg[i];
	if (!perf_engine_on() || e->fd >= 0 || cpugrid_clock_of(e->tid, &now) != 0)
		return -1;
	int fd = perf_engine_open(e->tid, cur_sig, e->grid.per, now, e->self_drops);
	if (fd < 0)
		return -1;
	timer_delete(e->timer);
	e->fd = fd;
	return 0;
}

/*
 * Each thread's grid restarts at its CPU time now, at the new period; the
 * points of the old grid it passed stay owed to it.
 *
 * An event is given the new period only when the engine keeps it
 * (perf_engine_keep()).  Otherwise it becomes a timer first, at its old
 * period until then: an event at a rate the engine refuses can cost its
 * thread more CPU per signal than the period, and its real-time signals
 * then queue without end until the kernel, over RLIMIT_SIGPENDING, sends
 * a plain SIGIO instead and kills the program (safety_concurrent_callers
 * on perf events, about one run in 25: set_hz to 90 kHz gave an 11 us
 * period for the moment before it was closed).  An event that cannot
 * become a timer is closed and its entry dropped; the sweeper gives the
 * thread a timer when the queue has room.
 */
int timers_set_hz(unsigned int hz)
{
	cur_hz = hz;
	int events = perf_engine_keep(hz); /* else their threads get timers */
	int64_t per = cpugrid_period(hz), now;
	for (size_t i = timers_nreg; i-- > 0;) { /* a drop moves the last entry to i */
		struct cpugrid *g = &timers_reg[i].grid;
		if (cpugrid_clock_of(timers_reg[i].tid, &now) != 0)
			continue; /* gone: the sweeper drops it */
		g->due = cpugrid_total(g, now);
		cpugrid_restart(g, now, per, cpugrid_phase(per));
		struct itimerspec its = {ns_ts(per), ns_ts(g->first)};
		if (timers_reg[i].fd < 0)
			timer_settime(timers_reg[i].timer, TIMER_ABSTIME, &its, NULL);
		else if (events)
			perf_engine_set_period(timers_reg[i].fd, per);
		else if (timers_to_timer(i) != 0)
			timers_drop(i), timers_lapsed = 1;
	}
	return 0;
}

/*
 * A seccomp filter the program is about to install would refuse what the
 * events need (perf_event_open for a new thread, the handler's read of
 * its thread's CPU clock: agent/filtercheck.c): every event becomes a
 * timer now, while every call is still allowed, and no thread gets an
 * event after it.  An event that cannot become a timer is closed, its
 * thread left to the sweeper as one refused a timer is.
 */
void engine_events_forbid(void)
{
	engine_lock();
	if (perf_engine_on()) {
		perf_engine_refuse(EPERM);
		for (size_t i = timers_nreg; i-- > 0;) /* a drop moves the last entry to i */
			if (timers_reg[i].fd >= 0 && timers_to_timer(i) != 0)
				timers_drop(i), timers_lapsed = 1;
	}
	engine_unlock();
}

static int add_self(int born)
{
	if (!cur_sig || getpid() != owner_pid)
		return 0;
	pid_t tid = timers_my_tid();
	int i = timers_find(tid);
	if (i >= 0) /* a thread starts once: an entry is an exited thread's */
		timers_drop((size_t)i);
	if (timers_add(tid, born) == 0)
		return 0;
	timers_refused += errno == EAGAIN;
	return -1;
}

int timers_add_self(void)
{
	return add_self(0);
}

int timers_add_born(void)
{
	return add_self(1);
}

int timers_reconcile_self(unsigned long credited, unsigned long *owed)
{
	*owed = 0;
	if (!cur_sig || getpid() != owner_pid)
		return -1;
	pid_t tid = timers_my_tid();
	int i = timers_find(tid);
	if (i < 0)
		return -1;
	/* Dropped before the clock is read: closing an event (its page
	 * unmapped, the event freed) is CPU time of this thread that no
	 * sample can see any more, 40-50 us a thread on a VM; owed with the
	 * rest (5,000 threads of 2 ms: 0.962 of their CPU credited before) */
	struct cpugrid grid = timers_reg[i].grid;
	timers_drop((size_t)i);
	int64_t now;
	if (cpugrid_clock_of(tid, &now) == 0) {
		uint64_t total = cpugrid_total(&grid, now);
		*owed = total > credited ? (unsigned long)(total - credited) : 0;
		timers_note_ending(tid, now); /* still listed until it has ended */
	}
	return 0;
}

unsigned int timers_count(void)
{
	return (unsigned int)timers_nreg;
}

unsigned int timers_untimed(void)
{
	return timers_refused;
}

int timers_signal(void)
{
	return cur_sig;
}

unsigned int timers_hz(void)
{
	return cur_hz;
}

pid_t timers_owner(void)
{
	return atomic_load(&owner_pid);
}

void timers_forget_all(void)
{
	for (size_t i = 0; i < timers_nreg; i++) /* the parent's events, inherited */
		if (timers_reg[i].fd >= 0)
			perf_engine_forget(timers_reg[i].fd);
	timers_nreg = 0;
	timers_refused = 0;
	switch_moved_reset(); /* the wishes are the parent's threads' */
	ioworkers_forget();
	ending_forget();
	atomic_fetch_add(&sample_epoch, 1); /* the tallies are the parent's */
	owner_pid = getpid();
}
