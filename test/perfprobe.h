/*
 * perfprobe.h - open (and close) one task-clock perf event on the calling
 * thread: whether this process may sample with perf events.  Shared by the
 * engine tests and test/helpers/perfprobe.c (make test-perf).
 */
#ifndef PROFIL_TEST_PERFPROBE_H
#define PROFIL_TEST_PERFPROBE_H

#include <linux/perf_event.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* 0 if the event opened, else -1 with errno from perf_event_open. */
static inline int perf_probe_event(void)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = 1000000;
	a.disabled = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

#endif
