/*
 * rec-state.c - prints, at main, what a program can see of its own
 * process's state, one fact a line, so that test/cli/record.t can compare
 * a run under profil record with one without: the agent must leave each
 * as the program would find it.  What differs by design is printed too
 * and left out by the test: the kernel's own view of the dispositions
 * (SigCgt: the agent's handlers, which sigaction() hides), the queued
 * signals (SigQ) and the pending ones (a sample's signal, raised while
 * the kernel writes the file), the thread count (the helper thread) and
 * the id of the first POSIX timer (timers engine).  The environment is
 * not printed: the agent passes its variables on.  Once a dlopen() in
 * the agent's constructor left program_invocation_name at "" (record.t's
 * rec-ctor case).
 *
 *   rec-state
 */
#include <errno.h>
#include <locale.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static void status_lines(void)
{
	static const char *const keys[] = {"SigPnd:", "ShdPnd:", "SigBlk:", "SigIgn:", "SigCgt:",
	                                   "SigQ:", "Threads:", "NoNewPrivs:", "Seccomp:"};
	char line[512];
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f))
		for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
			if (strncmp(line, keys[i], strlen(keys[i])) == 0)
				fputs(line, stdout);
	if (f)
		fclose(f);
}

static void signal_lines(void)
{
	for (int s = 1; s <= SIGRTMAX; s++) {
		struct sigaction sa;
		if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL)
			printf("disposition %d %s %#x\n", s, sa.sa_handler == SIG_IGN ? "ignored" : "caught",
			       (unsigned)sa.sa_flags);
	}
	sigset_t mask;
	sigprocmask(SIG_BLOCK, NULL, &mask);
	for (int s = 1; s <= SIGRTMAX; s++)
		if (sigismember(&mask, s) == 1)
			printf("blocked %d\n", s);
	stack_t ss;
	sigaltstack(NULL, &ss);
	printf("altstack %d %zu\n", ss.ss_flags, ss.ss_size);
	for (int which = ITIMER_REAL; which <= ITIMER_PROF; which++) {
		struct itimerval it;
		getitimer(which, &it);
		printf("itimer %d %ld %ld\n", which, (long)it.it_value.tv_sec, (long)it.it_value.tv_usec);
	}
}

static void process_lines(void)
{
	mode_t m = umask(022);
	umask(m);
	printf("umask %03o\n", (unsigned)m);
	printf("dumpable %d\n", prctl(PR_GET_DUMPABLE));
	printf("personality %#x\n", (unsigned)personality(0xffffffff));
	for (int i = 0; i < RLIM_NLIMITS; i++) {
		struct rlimit r;
		getrlimit(i, &r);
		printf("rlimit %d %llu %llu\n", i, (unsigned long long)r.rlim_cur,
		       (unsigned long long)r.rlim_max);
	}
	errno = 0;
	printf("nice %d\n", getpriority(PRIO_PROCESS, 0));
	printf("policy %d\n", sched_getscheduler(0));
	cpu_set_t cpus;
	sched_getaffinity(0, sizeof cpus, &cpus);
	printf("cpus %d\n", CPU_COUNT(&cpus));
	int fd = dup(0);
	printf("lowest free descriptor %d\n", fd);
	if (fd >= 0)
		close(fd);
	printf("locale %s\n", setlocale(LC_ALL, NULL));
	char cwd[4096];
	printf("cwd %s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
}

int main(int argc, char **argv)
{
	int e = errno;
	printf("errno at main %d\n", e);
	printf("argc %d argv[0] %s name %s %s\n", argc, argv[0], program_invocation_name,
	       program_invocation_short_name);
	status_lines();
	signal_lines();
	process_lines();
	timer_t t;
	struct sigevent sev = {.sigev_notify = SIGEV_NONE};
	if (timer_create(CLOCK_MONOTONIC, &sev, &t) == 0)
		printf("first timer %ld\n", (long)(intptr_t)t);
	return 0;
}
