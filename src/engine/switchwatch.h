/*
 * switchwatch.h - threads that block and wake often sample on a timer,
 * not on a perf event.
 *
 * Why: a thread's perf event is a high-resolution timer that runs only
 * while the thread does, so the kernel stops it at every switch out and
 * starts it again at every switch in, samples or none.  Where programming
 * the CPU's timer is dear (a virtual machine: a VM exit), that is paid at
 * every block and wake-up: measured on a PVM guest, 7.5 us a switch to
 * idle and back (a thread sleeping 20 us between bursts: +37% of its
 * CPU) and 13 us a switch between two threads ping-ponging over pipes
 * (4-5 times the CPU of the program unprofiled; the timers cost
 * nothing measurable: a CPU timer is looked at only at the kernel's
 * tick, which happens anyway).  `perf record` pays it too, except
 * between tasks whose events are inherited clones of one another, which
 * the kernel swaps rather than stops.
 *
 * So a thread on an event that makes more than SWITCH_BUSY_RATE voluntary
 * context switches per second of its CPU time moves to a timer on the
 * same grid (timers_to_timer()), and one moved so that has calmed down to
 * SWITCH_CALM_RATE or fewer moves back (timers_to_event()).  Such a
 * thread is then sampled at the tick's resolution, with right totals
 * (timers.c); one that never switches that often never notices.
 *
 * Who looks: each thread itself, in the sampling handler (sample.c,
 * switch_watch()), every SWITCH_WATCH_EVERY samples (about a
 * microsecond each 8 ms of CPU at 1000 Hz), by a getrusage
 * (RUSAGE_THREAD) system call made inline, over at least
 * SWITCH_WATCH_MIN_NS of its CPU time.  The move itself cannot be made
 * there (the registry is under the engine lock, timers and events are
 * made by calls that are not async-signal-safe): the handler posts a
 * wish, the sweeper carries it out at its next sweep
 * (timers_check_switches(), within 100 ms).  Only while the run uses
 * perf events by the default choice (switch_watch_on): on timers alone
 * nothing is watched, and PROFIL_ENGINE=perf keeps every thread on its
 * event, as asked.
 */
#ifndef PROFIL_SWITCHWATCH_H
#define PROFIL_SWITCHWATCH_H

#include <stdatomic.h>

#include "engine/engine_int.h"

/* 2,000 voluntary switches a CPU second cost a thread 1.5-2.6% of its
 * CPU on the VM above (and the command's note, cli/record/enginehint.c,
 * used the same figure); a quarter of it to come back, so that a thread
 * near the line does not go back and forth. */
#define SWITCH_BUSY_RATE 2000
#define SWITCH_CALM_RATE 500
#define SWITCH_WATCH_EVERY 8
#define SWITCH_WATCH_MIN_NS 10000000LL
#define SWITCH_WISHES 64

/*
 * 1 while the run samples on perf events, chosen by default (not forced
 * by PROFIL_ENGINE=perf): set and cleared by
 * perf_engine.c with the engine lock held (cleared before a seccomp
 * filter the events' calls would break is installed); read by the
 * handler, relaxed.  Defined in sample.c.
 */
extern atomic_int switch_watch_on HIDDEN;

/*
 * The handlers' wishes: a thread's id (it switches often: to a timer) or
 * its negation (calm again: back to an event), 0 for a free slot.  Posted
 * by the thread's own handler by compare-and-swap into a free slot near
 * tid % SWITCH_WISHES (none free: the wish waits for the handler's next
 * look); taken by the sweeper by exchange with 0.  Defined in sample.c.
 */
extern _Atomic int switch_wishes[SWITCH_WISHES] HIDDEN;

/* Whether a wish for a timer waits: a process without its helper yet
 * makes it at its next safe sample, not after LAZY_HELPER_CPU_NS
 * (lazy_helper.c), since each switch costs until the move.  Signal
 * context: relaxed loads only. */
static inline int switch_wish_waiting(void)
{
	for (int s = 0; s < SWITCH_WISHES; s++)
		if (atomic_load_explicit(&switch_wishes[s], memory_order_relaxed) > 0)
			return 1;
	return 0;
}

/* switchwatch.c: the wishes carried out; engine lock held, the sweeper's
 * thread.  switch_moved_reset(): at a start and in a forked child, the
 * count (engine_switch_moved(), engine.h) and the wishes cleared. */
HIDDEN void timers_check_switches(void);
HIDDEN void switch_moved_reset(void);

#endif
