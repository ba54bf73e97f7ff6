/*
 * rec-wait: the calls that reap children behave as without the agent,
 * which interposes them to learn each child's CPU time (agent/reap.c):
 * statuses, WNOHANG's 0 with the status left alone, WUNTRACED's stops,
 * a rusage filled when asked for, ECHILD.  Prints "wait semantics ok",
 * or the first check that failed and exits 1.
 *
 * rec-wait HOW UNITS: one child runs reaped_hot for UNITS and is reaped
 * where the agent's hooks do not see it (agent/reap.c), HOW being
 *   system   system("rec-wait burn UNITS"): glibc's own wait
 *   popen    the same by popen() and pclose(): glibc's own wait too
 *   waitid   a forked child, reaped by waitid()
 *   raw      a forked child, reaped by a wait4 system call (as Go does)
 *   rawexit  as raw, then an exit_group system call at once, as Go's
 *            runtime ends: no destructor, no sweep of the agent after
 *   burn     reaped_hot for UNITS (what system runs)
 * and the process's total must not count the child's CPU again.
 */
#include "rec.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int failed(const char *what)
{
	printf("wait semantics: %s\n", what);
	return 1;
}

/* A child that burns about ms of CPU, then exits with code. */
static pid_t child(int ms, int code)
{
	pid_t p = fork();
	if (p == 0) {
		struct timespec t0, t;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
		do
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
		_exit(code);
	}
	return p;
}

__attribute__((noinline)) static void reaped_hot(unsigned long n) { REC_BURN(n, 6); }

static int unseen_reap(const char *self, const char *how, unsigned long units)
{
	if (!strcmp(how, "system") || !strcmp(how, "popen")) {
		char cmd[4096];
		snprintf(cmd, sizeof cmd, "'%s' burn %lu", self, units);
		if (!strcmp(how, "system"))
			return system(cmd) == 0 ? 0 : 1;
		FILE *f = popen(cmd, "r");
		return f && pclose(f) == 0 ? 0 : 1;
	}
	pid_t p = fork();
	if (p == 0) {
		reaped_hot(units);
		_exit(0);
	}
	if (p < 0)
		return 1;
	if (!strcmp(how, "waitid")) {
		siginfo_t si;
		return waitid(P_PID, (id_t)p, &si, WEXITED) == 0 && si.si_status == 0 ? 0 : 1;
	}
	int st;
	int rc = syscall(SYS_wait4, p, &st, 0, NULL) == p && WIFEXITED(st) ? 0 : 1;
	if (!strcmp(how, "rawexit"))
		syscall(SYS_exit_group, rc);
	return rc;
}

static int semantics(void)
{
	int st = 12345;
	pid_t a = child(20, 3);
	if (a < 0 || waitpid(a, &st, 0) != a || !WIFEXITED(st) || WEXITSTATUS(st) != 3)
		return failed("waitpid's status");
	pid_t b = child(300, 0);
	st = 12345;
	if (waitpid(b, &st, WNOHANG) != 0 || st != 12345)
		return failed("WNOHANG on a running child");
	struct rusage ru;
	if (wait4(b, &st, 0, &ru) != b || !WIFEXITED(st) ||
	    ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1000000 +
	            ru.ru_stime.tv_usec < 200000)
		return failed("wait4's rusage");
	pid_t c = fork();
	if (c == 0) {
		raise(SIGSTOP);
		_exit(5);
	}
	if (waitpid(c, &st, WUNTRACED) != c || !WIFSTOPPED(st))
		return failed("WUNTRACED's stop");
	kill(c, SIGCONT);
	if (wait3(&st, 0, &ru) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 5)
		return failed("wait3 after the stop");
	pid_t d = child(1, 0);
	kill(d, SIGKILL);
	if (wait(&st) != d || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
		return failed("wait's signal status");
	errno = 0;
	if (wait(&st) != -1 || errno != ECHILD)
		return failed("ECHILD");
	printf("wait semantics ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return semantics();
	unsigned long units = strtoul(argv[2], NULL, 10);
	if (!strcmp(argv[1], "burn"))
		return reaped_hot(units), 0;
	return unseen_reap(argv[0], argv[1], units);
}
