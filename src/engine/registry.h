/*
 * registry.h - the timers and events the engine owns, one entry per
 * sampled thread: kept by timers.c, kept in step with the process's
 * threads by timers_scan.c.  Internal to engine/.
 *
 * Everything here is read and changed with the engine lock held, never
 * in signal context: the sampling handler does not look at the registry.
 */
#ifndef PROFIL_ENGINE_REGISTRY_H
#define PROFIL_ENGINE_REGISTRY_H

#include "engine/engine_int.h"
#include "engine/cpugrid.h"

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

struct entry {
	pid_t tid;
	timer_t timer;
	int fd;              /* its perf event (perf_engine.h) instead, or -1 */
	struct cpugrid grid; /* kept for either: the count at exit */
	/* Made by the thread itself as it started (the pthread_create
	 * trampoline, threads.c), which also drops it as it exits: a sweep
	 * need not ask the kernel whether it is alive. */
	unsigned char self_drops;
	unsigned char seen; /* listed by the scan under way */
	/* On a timer because it blocked and woke often (switchwatch.h):
	 * the only entries timers_to_event() gives an event back. */
	unsigned char switched;
};

extern struct entry *timers_reg HIDDEN;
extern size_t timers_nreg HIDDEN;
extern size_t timers_max HIDDEN;          /* timers_budget() at the last scan */
extern unsigned int timers_refused HIDDEN; /* threads refused by the budget */

HIDDEN pid_t timers_my_tid(void);
HIDDEN size_t timers_budget(void);       /* timers we may hold */
HIDDEN int timers_find(pid_t tid);       /* index, or -1 */
/* A timer (or event) for tid, its grid from its CPU time 0 (born) or
 * now; -1 errno (EAGAIN: over the budget; EINVAL: the thread is gone). */
HIDDEN int timers_add(pid_t tid, int born);
HIDDEN void timers_drop(size_t i);
HIDDEN int timers_to_timer(size_t i);    /* event i becomes a timer, or -1 */
HIDDEN int timers_to_event(size_t i);    /* timer i becomes an event, or -1 */

/* backlog.c: threads on events that block the signal move to timers. */
HIDDEN void timers_check_backlog(void);

/* The clock tick (after boot, as /proc's starttime counts them) of the
 * last timers_start() (its timers_cover_all(1)).  Whether an entry of a live thread was
 * ever dropped since (timers_set_hz(), engine_events_forbid(): the
 * sweeper covers it again later), so that a thread found by a sweep may
 * have been sampled before.  Both under the engine lock. */
extern unsigned long long timers_start_tick HIDDEN;
extern int timers_lapsed HIDDEN;

/* ioworkers.c: io_uring's worker threads, credited by the sweeps instead
 * of sampled.  ioworker_is(): whether tid is one (PF_IO_WORKER);
 * ioworkers_known(): whether tid is listed (marked seen by the listing
 * under way); ioworkers_note(): lists it, its CPU time counted from
 * from_ns (-1 ENOMEM); ioworkers_unsee() before a listing;
 * ioworkers_settle(): credits each its CPU time since the last, dropping
 * the gone (listed: a listing just ran, and one it did not see has
 * gone); ioworkers_forget(): the list emptied. */
HIDDEN int ioworker_is(pid_t tid);
HIDDEN int ioworkers_known(pid_t tid);
HIDDEN int ioworkers_note(pid_t tid, int64_t from_ns);
HIDDEN void ioworkers_unsee(void);
HIDDEN void ioworkers_settle(int listed);
HIDDEN void ioworkers_forget(void);

/* ending.c: threads that dropped their own entry as they end.
 * timers_note_ending(): tid did, at CPU time cpu_ns.  ending_listed():
 * whether a listing's tid is one (what it ran since is credited on it,
 * from its second listing on).  ending_after_listing(): those a listing
 * did not name are gone.  ending_any(): whether there are any (listings
 * every sweep then); ending_overflowed(): one could not be kept (no
 * thread found is credited meanwhile); ending_forget(): at a start. */
HIDDEN void timers_note_ending(pid_t tid, int64_t cpu_ns);
HIDDEN int ending_listed(pid_t tid);
HIDDEN void ending_after_listing(void);
HIDDEN int ending_any(void);
HIDDEN int ending_overflowed(void);
HIDDEN void ending_forget(void);
/* timers_scan.c: ns of thread tid's CPU time credited at marker (ring.h;
 * ring tables only) as the count of a grid of random phase over it
 * (cpugrid.h: expected ns / P at the current rate). */
HIDDEN void timers_credit_ns(pid_t tid, uintptr_t marker, int64_t ns);

/* timers_scan.c: covers every listed thread not covered yet; at_start:
 * the listing of timers_start(), whose threads ran before it. */
HIDDEN int timers_cover_all(int at_start);

#endif
