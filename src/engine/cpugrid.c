/*
 * cpugrid.c - the pieces of a timer's grid (cpugrid.h) that are not pure
 * arithmetic: the period of a rate, the random phase, and a thread's CPU
 * clock.  Called by timers.c with the engine lock held.
 */
#include "engine/cpugrid.h"
#include "base/base.h"

#include <unistd.h>

static uint64_t rng;     /* engine lock: xorshift64* state, 0 until seeded */
static pid_t rng_pid;    /* the process that seeded it */

/* The CPU clock of thread tid, as glibc's pthread_getcpuclockid builds it:
 * ~tid << 3 | CPUCLOCK_PERTHREAD (4) | CPUCLOCK_SCHED (2). */
clockid_t cpugrid_clockid(pid_t tid)
{
	return (clockid_t)((~(unsigned int)tid << 3) | 6u);
}

int64_t cpugrid_period(unsigned int hz)
{
	int64_t ns = 1000000000 / (int64_t)hz;
	return ns > 0 ? ns : 1;
}

/* Uniform in [1, per], seeded once per process: a phase need not be
 * unpredictable, only independent of where threads start and stop.  A
 * forked child seeds again: with its parent's state every child drew the
 * same phase, so a run of short children were all counted high or all
 * low (100 children of 1.7 ms at 1000 Hz: 1 sample each in one run, 2 in
 * the next). */
uint64_t cpugrid_phase(int64_t per)
{
	pid_t me = getpid();
	if (!rng || rng_pid != me) {
		rng_pid = me;
		/* the clock by a system call, not the vDSO's pages (fmt.c) */
		rng = ((uint64_t)base_clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32)) | 1;
	}
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return 1 + (rng * 0x2545F4914F6CDD1Dull >> 11) % (uint64_t)per;
}

int cpugrid_clock_of(pid_t tid, int64_t *ns)
{
	struct timespec ts;
	if (base_clock_read(cpugrid_clockid(tid), &ts) != 0) /* a CPU clock: not the vDSO */
		return -1;
	*ns = ts_ns(&ts);
	return 0;
}
