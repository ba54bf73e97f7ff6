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
 *
 * With CPUOF_INSN=1 the line also has "insn_u=N insn_k=N": instructions
 * executed in user and kernel mode by CMD and its descendants, counted
 * from CMD's exec (perf_event_open on the child, inherit, enable_on_exec),
 * so not cpuof itself, which under `profil record` starts an agent of its
 * own.  Instructions do not depend on the machine's load; CPU time does.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* An instruction counter on pid from its next exec, user or kernel; -1
 * when perf events are refused. */
static int counter(pid_t pid, int kernel)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_INSTRUCTIONS;
	a.disabled = 1;
	a.enable_on_exec = 1;
	a.inherit = 1;
	a.exclude_user = kernel;
	a.exclude_kernel = !kernel;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, 0);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fputs("usage: cpuof OUTFILE CMD [ARGS...]\n", stderr);
		return 2;
	}
	const char *e = getenv("CPUOF_INSN");
	int insn = e && *e == '1';
	int go[2] = {-1, -1};
	if (insn && pipe(go) != 0) {
		perror("cpuof: pipe");
		return 2;
	}
	double t0 = now();
	pid_t pid = fork();
	if (pid < 0) {
		perror("cpuof: fork");
		return 2;
	}
	if (pid == 0) {
		if (insn) { /* wait until the counters are on us */
			char c;
			close(go[1]);
			while (read(go[0], &c, 1) < 0 && errno == EINTR)
				;
			close(go[0]);
		}
		execvp(argv[2], argv + 2);
		fprintf(stderr, "cpuof: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	int fu = -1, fk = -1;
	if (insn) {
		fu = counter(pid, 0);
		fk = counter(pid, 1);
		close(go[0]);
		close(go[1]); /* the child's read returns: it execs */
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
	fprintf(f, "wall=%.4f cpu=%.4f user=%.4f sys=%.4f rc=%d", t1 - t0, u + s, u, s, rc);
	uint64_t nu, nk;
	if (fu >= 0 && fk >= 0 && read(fu, &nu, sizeof nu) == sizeof nu &&
	    read(fk, &nk, sizeof nk) == sizeof nk)
		fprintf(f, " insn_u=%llu insn_k=%llu", (unsigned long long)nu, (unsigned long long)nk);
	fprintf(f, "\n");
	fclose(f);
	return rc;
}
