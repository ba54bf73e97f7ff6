/*
 * switchwatch.c - the sweeper's side of switchwatch.h: the handlers'
 * wishes carried out, a thread moved from its perf event to a timer when
 * it blocks and wakes often, and back when it has calmed down.
 *
 * Engine lock held; the sweeper's thread (timers_rescan()), never in
 * signal context.  A process without its helper yet (lazy_helper.c)
 * keeps its wishes until the helper's first sweep.
 */
#include "engine/switchwatch.h"
#include "engine/engine.h"
#include "engine/perf_engine.h"
#include "engine/registry.h"

#include <stdatomic.h>

/* Threads moved to a timer: written with the engine lock held, read by
 * engine_switch_moved() without it. */
static atomic_uint moved;

/* A wish for tid's entry: to a timer (busy) or back to an event. */
static void grant(pid_t tid, int busy)
{
	int i = timers_find(tid);
	if (i < 0)
		return; /* gone, or never ours (a tid reused meanwhile) */
	struct entry *e = &timers_reg[i];
	if (busy && e->fd >= 0 && timers_to_timer((size_t)i) == 0) {
		e->switched = 1;
		moved++;
	} else if (!busy && e->fd < 0 && e->switched && timers_to_event((size_t)i) == 0) {
		e->switched = 0;
	}
}

void timers_check_switches(void)
{
	for (int s = 0; s < SWITCH_WISHES; s++) {
		int v = atomic_exchange(&switch_wishes[s], 0);
		if (v != 0 && perf_engine_on())
			grant(v > 0 ? v : -v, v > 0);
	}
}

unsigned int engine_switch_moved(void)
{
	return atomic_load(&moved);
}

void switch_moved_reset(void)
{
	moved = 0;
	for (int s = 0; s < SWITCH_WISHES; s++)
		atomic_store(&switch_wishes[s], 0);
}
