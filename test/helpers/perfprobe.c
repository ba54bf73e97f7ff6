/*
 * perfprobe - can this process sample with perf events?  Prints "ok", or
 * why not ("EACCES, perf_event_paranoid 3"), for `make test-perf`, which
 * runs the semantic suite on the perf engine only where they work.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
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
	if (fd >= 0) {
		close(fd);
		puts("ok");
		return 0;
	}
	int e = errno, paranoid = -9;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = -9;
		fclose(f);
	}
	if (paranoid != -9)
		printf("%s, perf_event_paranoid %d\n", strerror(e), paranoid);
	else
		printf("%s\n", strerror(e));
	return 1;
}
