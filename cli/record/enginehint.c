/*
 * enginehint.c - a line at the end of a recording when the sampling
 * engine the command ran on was a poor fit for what it did: timers for a
 * command preempted between ticks (they may credit time to the wrong
 * functions), perf events for one that blocks and wakes very often (each
 * switch costs it more than on timers).  Each says which engine would
 * fit (PROFIL_ENGINE); neither changes the profile.
 */
#include "record_int.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int record_ran_on(const struct images *set, const char *engine)
{
	return set->n && strcmp(images_described(set)->engine, engine) == 0;
}

/*
 * On timers, a command whose threads ran in turns shorter than a tick
 * (other work, or its own threads, competing for the CPUs) may have its
 * CPU time credited to the wrong functions: the kernel looks at a thread's
 * timer only at ticks that find it running, and turns the scheduler ends
 * between ticks (at system calls that update its accounting) leave their
 * time to the next tick that does (README, "On a busy machine";
 * bench/contention.sh: 0.33 of the samples for 0.50 of the time, at two
 * busy loops per CPU).  Turn length: the command's CPU time over its
 * involuntary context switches.  Compute that competes only with compute
 * is switched at ticks, in turns of a tick or more, and is not misled:
 * 3.9-4.0 ms with 4 and 8 busy loops per CPU here (tick 4 ms), against
 * 1.5-1.9 ms for a loop that reads its CPU clock; hence the threshold of
 * BUSY_TURN_TICKS.  Not below BUSY_MIN_CPU_S: too few samples to matter.
 */
#define BUSY_MIN_CPU_S 0.2
#define BUSY_TURN_TICKS 0.75
static void busy_warning(const struct images *set, const struct rusage *ru, double cpu)
{
	struct timespec tick;
	if (!record_ran_on(set, "thread-cputime-timers") ||
	    cpu < BUSY_MIN_CPU_S || ru->ru_nivcsw <= 0 ||
	    clock_getres(CLOCK_MONOTONIC_COARSE, &tick) != 0)
		return;
	double turn = cpu / (double)ru->ru_nivcsw;
	if (turn >= BUSY_TURN_TICKS * ((double)tick.tv_sec + tick.tv_nsec / 1e9))
		return;
	fprintf(stderr, "profil record: warning: the CPUs were busy (the command was preempted "
	        "every %.1f ms of its CPU time): on timers, time may be credited to the wrong "
	        "functions; PROFIL_ENGINE=perf is not misled, where perf events are allowed\n",
	        turn * 1000);
}

/*
 * On perf events, a thread's sampling event is a high-resolution timer
 * that runs only while the thread does: the kernel stops it when the
 * thread is switched out and starts it again when it comes back, so a
 * program that blocks and wakes very often pays that at every switch,
 * samples or none.  Measured on a PVM guest (docs/benchmarks.md,
 * 2026-11-29, third, and 2026-12-04, later): 7.5 to 13 us a switch, so
 * that SWITCH_NOTE_RATE voluntary switches a CPU second cost such a
 * machine 1.5 to 2.6% (bare metal, a tenth of that).  The agent moves a
 * thread that switches that often to a timer (src/engine/switchwatch.h)
 * once its process has a helper; what it paid before the move, and
 * processes too short for one, still cost.  So: where some thread was
 * moved, a line under -v says so; where none was, the note names the
 * timers engine.  Voluntary switches only (the program's own blocking):
 * preemption is the timers' trouble above, and the two lines must not
 * send a command back and forth.
 */
#define SWITCH_NOTE_RATE 2000.0
static void switch_note(const struct images *set, const struct rusage *ru, double cpu,
                        int verbose)
{
	if (!record_ran_on(set, "perf-events") ||
	    cpu < BUSY_MIN_CPU_S)
		return;
	double rate = (double)ru->ru_nvcsw / cpu;
	if (rate < SWITCH_NOTE_RATE)
		return;
	size_t moved = 0;
	for (size_t i = 0; i < set->n; i++)
		moved += set->v[i].switched != 0;
	if (moved > 0) {
		if (verbose)
			fprintf(stderr, "profil record: the command blocked and woke %.0f times a CPU "
			        "second; in %zu of its processes threads that did so most were "
			        "moved from perf events to timers, which each switch costs "
			        "nothing\n", rate, moved);
		return;
	}
	fprintf(stderr, "profil record: note: the command blocked and woke %.0f times a CPU "
	        "second; on perf events each switch stops and restarts a thread's sampling "
	        "timer, which costs it CPU time (much, on some virtual machines); "
	        "PROFIL_ENGINE=timer samples at the kernel's tick without that cost\n", rate);
}

void record_engine_hints(const struct images *set, const struct rusage *ru, double cpu,
                         int verbose)
{
	busy_warning(set, ru, cpu);
	switch_note(set, ru, cpu, verbose);
}
