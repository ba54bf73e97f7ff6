/*
 * cpuof.c - run a command, then write its wall time and the CPU time of it
 * and all its waited-for descendants to a file.
 *
 *   cpuof OUTFILE CMD [ARGS...]
 *
 * OUTFILE gets one line: "wall=S cpu=S user=S sys=S rc=N".  The harness
 * nests two of these around a profiler: the outer one measures everything
 * (the profiler included), the inner one, inside the profiler's command
 * line, only the workload; the difference is the profiler's own CPU.
 * /usr/bin/time would do for one level but prints to stderr, which the
 * profilers share with the workload.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fputs("usage: cpuof OUTFILE CMD [ARGS...]\n", stderr);
		return 2;
	}
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0) {
		perror("cpuof: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "cpuof: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			perror("cpuof: waitpid");
			return 2;
		}
	double t1 = now();
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	double u = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	double s = (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	FILE *f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	fprintf(f, "wall=%.4f cpu=%.4f user=%.4f sys=%.4f rc=%d\n", t1 - t0, u + s, u, s, rc);
	fclose(f);
	return rc;
}
