/*
 * stats.c - profil_get_stats(): a snapshot of the engine's counters.
 */
#include "engine/engine_int.h"
#include "engine/perf_engine.h"

#include <errno.h>

#define LOAD(f) atomic_load_explicit(&profil_pstats.f, memory_order_relaxed)

int profil_get_stats(struct profil_stats *st)
{
	if (!st) {
		errno = EINVAL;
		return -1;
	}
	engine_lock();
	signal_settle(); /* a safe point: the signal reported is the one in use */
	st->signals = LOAD(signals);
	st->ticks = LOAD(ticks);
	st->in_range = LOAD(in_range);
	st->out_of_range = LOAD(out_of_range);
	st->saturated = LOAD(saturated);
	st->overruns = LOAD(overruns);
	st->faults = LOAD(faults);
	st->stopped = (enum profil_stop_reason)LOAD(stopped);
	st->hz = hz_current();
	st->signal = timers_signal();
	st->engine = st->signal ? perf_engine_kind() : PROFIL_ENGINE_OFF;
	st->real_hz = st->signal ? perf_engine_real_hz(st->hz) : 0;
	st->perf_error = perf_engine_error();
	st->threads = timers_count();
	st->reconciled = LOAD(reconciled);
	st->exec_lost = LOAD(exec_lost);
	st->deferred = LOAD(deferred);
	st->untimed = timers_untimed();
	engine_unlock();
	return 0;
}

const char *profil_engine_name(enum profil_engine e)
{
	switch (e) {
	case PROFIL_ENGINE_OFF:
		return "off";
	case PROFIL_ENGINE_THREAD_TIMERS:
		return "thread-cputime-timers";
	case PROFIL_ENGINE_PERF_EVENTS:
		return "perf-events";
	}
	return "unknown";
}
