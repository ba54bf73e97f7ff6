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

#include "perfprobe.h"

int main(void)
{
	if (perf_probe_event() == 0) {
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
