/*
 * rec-tracer MS CMD [ARGS...]: a tracer that attaches to a program already
 * running, as `gdb -p` and `strace -p` do (test/cli/record.t).
 *
 * Runs CMD as a child, lets it run MS milliseconds, then attaches to it
 * (PTRACE_SEIZE of its main thread: no stop of its own) and passes on
 * every signal the child is stopped for, as a tracer that lets them
 * through must, until the child ends.  Prints "stops N", the number of
 * those signal stops (each one a stop a debugger would show), and exits
 * with the child's status (128 + signal if it was killed).  Exits 2
 * without "stops" when it cannot attach (ptrace refused here).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int status_of(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Passes on what the child is stopped for until it ends; its status. */
static int follow(pid_t kid, long *stops)
{
	for (;;) {
		int st;
		if (waitpid(kid, &st, 0) < 0) {
			if (errno == EINTR)
				continue;
			perror("rec-tracer: waitpid");
			return 2;
		}
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return status_of(st);
		if (!WIFSTOPPED(st))
			continue;
		int sig = WSTOPSIG(st);
		if ((st >> 16) == PTRACE_EVENT_STOP) /* a group stop under SEIZE */
			sig = 0;
		else
			++*stops;
		ptrace(PTRACE_CONT, kid, NULL, (void *)(long)sig);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: rec-tracer MS CMD [ARGS...]\n");
		return 2;
	}
	long ms = atol(argv[1]);
	pid_t kid = fork();
	if (kid < 0)
		return 2;
	if (kid == 0) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	struct timespec nap = {ms / 1000, ms % 1000 * 1000000};
	while (nanosleep(&nap, &nap) != 0 && errno == EINTR)
		;
	if (ptrace(PTRACE_SEIZE, kid, NULL, NULL) != 0) {
		perror("rec-tracer: PTRACE_SEIZE");
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
		return 2;
	}
	long stops = 0;
	int rc = follow(kid, &stops);
	printf("stops %ld\n", stops);
	return rc;
}
