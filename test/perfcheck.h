/*
 * perfcheck.h - for tests of the perf-events engine: whether this process
 * may use perf events at a rate, and the kernel tick.  A test that cannot
 * notes why in test_skip_reason.
 */
#ifndef PROFIL_TEST_PERFCHECK_H
#define PROFIL_TEST_PERFCHECK_H

#include "runner.h"
#include "perfprobe.h"

#include <errno.h>
#include <profil.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Whether this process may open a task-clock event; if not, the reason
 * is noted as the test's skip reason and 0 returned. */
static inline int perf_allowed(void)
{
	if (perf_probe_event() == 0)
		return 1;
	snprintf(test_skip_reason, sizeof test_skip_reason, "perf events refused (%s)",
	         strerror(errno));
	printf("skipped: %s\n", test_skip_reason);
	return 0;
}

/* The rate the library will still use perf events at: the kernel's cap
 * less a tick's worth of margin (perf_engine.c); the cap may have been
 * lowered by the kernel at run time ("interrupt took too long"). */
static inline unsigned int perf_rate_ok(unsigned int hz, unsigned int tick)
{
	unsigned int cap = 100000;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	if (f) {
		if (fscanf(f, "%u", &cap) != 1)
			cap = 100000;
		fclose(f);
	}
	if ((hz + tick - 1) / tick + 1 <= (cap + tick - 1) / tick)
		return 1;
	snprintf(test_skip_reason, sizeof test_skip_reason,
	         "perf_event_max_sample_rate %u is too low for %u Hz", cap, hz);
	printf("skipped: %s\n", test_skip_reason);
	return 0;
}

static inline unsigned int tick_hz(void)
{
	struct timespec r;
	ASSERT_OK(clock_getres(CLOCK_MONOTONIC_COARSE, &r));
	return (unsigned int)(1000000000L / r.tv_nsec);
}

/* Starts profiling into buf at hz and checks that perf events took it;
 * *st gets the statistics then. */
static inline int perf_start(unsigned short *buf, size_t size, unsigned int hz,
                             struct profil_stats *st)
{
	ASSERT_OK(profil_set_hz(hz));
	ASSERT_OK(profil(buf, size, 0, 2));
	ASSERT_OK(profil_get_stats(st));
	ASSERT_EQ(st->engine, PROFIL_ENGINE_PERF_EVENTS);
	return 0;
}

#endif
