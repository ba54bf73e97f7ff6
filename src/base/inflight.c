/*
 * inflight.c - the signal handler's in-flight window.  The handler
 * (sample.c) increments profil_inflight, reads what was published (the
 * range table, engine.c; the unwind tables, unwind_build.c), and
 * decrements it; a publisher stores the new pointer, then calls
 * inflight_drain(), after which no handler holds the old one.
 */
#include "base/base.h"

#include <sched.h>
#include <time.h>

/* Number of handlers between their increment and decrement: atomic. */
_Atomic unsigned int profil_inflight;

/* Wait until no handler is between its increment and decrement. */
void inflight_drain(void)
{
	/* sched_yield() first: a handler runs for microseconds.  Then sleep:
	 * yielding never lets a lower-priority thread run, so a handler
	 * preempted by a SCHED_FIFO thread on our CPU would wait for ever. */
	for (unsigned spins = 0; atomic_load(&profil_inflight) != 0; spins++) {
		if (spins < 64) {
			sched_yield();
		} else {
			struct timespec nap = {0, 50000};
			nanosleep(&nap, NULL);
		}
	}
}
