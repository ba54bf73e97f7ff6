/*
 * rec-wait: the calls that reap children behave as without the agent,
 * which interposes them to learn each child's CPU time (agent/reap.c):
 * statuses, WNOHANG's 0 with the status left alone, WUNTRACED's stops,
 * a rusage filled when asked for, ECHILD.  Prints "wait semantics ok",
 * or the first check that failed and exits 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
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

int main(void)
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
