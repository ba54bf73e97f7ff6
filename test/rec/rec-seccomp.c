/*
 * rec-seccomp HOW UNITS: a program that filters its own system calls as
 * Chromium's sandbox does, which kills the process (SIGSYS) on a
 * getrusage() of anything but RUSAGE_SELF or RUSAGE_THREAD, then runs
 * filtered_hot for UNITS and exits by exit().  HOW installs the filter:
 *   syscall  syscall(SYS_seccomp, ..., SECCOMP_FILTER_FLAG_TSYNC): every
 *            thread, the agent's helper too (Chromium's way)
 *   prctl    prctl(PR_SET_SECCOMP): the calling thread only
 *   exec     prctl(PR_SET_SECCOMP), then exec of this program as "run",
 *            which starts filtered (the kernel keeps the filter)
 * or, other filters (agent/filtercheck.c):
 *   killperf a filter that kills the process at perf_event_open(), then
 *            filtered_hot on a thread made after it
 *   killtimer one that kills it at timer_create(), which the program
 *            never calls (the agent does, for a new thread on timers),
 *            then the same
 *   killexec the killtimer filter, then a forked child that execs this
 *            program as "run" under it; prints "parent ok" once the
 *            child has exited 0
 *   probe    libseccomp's probes of the kernel: installs of nothing (a
 *            NULL program, EFAULT; strict mode with a flag, EINVAL),
 *            then this program as "run" by system(), which glibc reaps
 *            where no hook sees it, then filtered_hot unfiltered
 *   forkrace UNITS forked children, one after another, each making a
 *            thread (which makes the agent's helper at once, and it its
 *            ring file) and at once installing the killtimer filter
 *            (which ends sampling and joins the helper); prints
 *            "forkrace ok" when every child has exited 0, and names one
 *            that hung (killed by its alarm after 20 s)
 *   strict   seccomp's strict mode (read, write, _exit, sigreturn only),
 *            filtered_hot counted in loops, not by the CPU clock; ends
 *            by the _exit system call
 * Prints "filtered ok" at the end (agent/seccomp.c).
 */
#include "rec.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) static void filtered_hot(unsigned long n) { REC_BURN(n, 7); }

/* A filter that allows everything but nr, for which it kills the
 * process, installed by prctl. */
static int install_killing(long nr)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof code / sizeof code[0], code};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static void *hot_thread(void *units)
{
	filtered_hot((unsigned long)units);
	return NULL;
}

/* filtered_hot on a thread made under the filter. */
static int run_on_thread(unsigned long units)
{
	pthread_t t;
	if (pthread_create(&t, NULL, hot_thread, (void *)units) != 0 || pthread_join(t, NULL) != 0)
		return 1;
	printf("filtered ok\n");
	fflush(stdout);
	return 0;
}

/* Strict mode allows no clock: the loops a unit takes are counted
 * first, then run as many under the filter. */
__attribute__((noinline)) static unsigned long strict_hot(unsigned long loops)
{
	volatile unsigned long acc = 7;
	for (unsigned long i = 0; i < loops; i++)
		for (unsigned long j = 0; j < REC_CHECK; j++)
			acc += j ^ (acc >> 3);
	return acc;
}

static int run_strict(unsigned long units)
{
	unsigned long long t0 = rec_thread_ns();
	unsigned long probe = 200;
	strict_hot(probe);
	unsigned long long spent = rec_thread_ns() - t0;
	unsigned long loops = (unsigned long)((double)probe * REC_UNIT_NS * units / (spent ? spent : 1));
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0)
		return 2;
	strict_hot(loops);
	static const char ok[] = "filtered ok\n";
	(void)!write(1, ok, sizeof ok - 1);
	syscall(SYS_exit, 0); /* strict mode has no exit_group */
	return 1;
}

static int install(int tsync)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrusage, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 2, 0, 1), /* RUSAGE_CHILDREN is -1 */
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof code / sizeof code[0], code};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	if (tsync)
		return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
		                    SECCOMP_FILTER_FLAG_TSYNC, &prog);
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static int run(unsigned long units)
{
	filtered_hot(units);
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0) /* the filter lets this one by */
		return 1;
	printf("filtered ok\n");
	fflush(stdout);
	return 0;
}

static void *nothing(void *unused)
{
	return unused;
}

static int fork_race(unsigned long children)
{
	for (unsigned long i = 0; i < children; i++) {
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) {
			alarm(20);
			pthread_t t;
			if (pthread_create(&t, NULL, nothing, NULL) != 0 ||
			    install_killing(SYS_timer_create) != 0 || pthread_join(t, NULL) != 0)
				_exit(2);
			_exit(0);
		}
		int st;
		if (child < 0 || waitpid(child, &st, 0) != child)
			return 1;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			printf("child %lu: %s %d\n", i, WIFSIGNALED(st) ? "killed by signal" : "exit status",
			       WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			return 1;
		}
	}
	printf("forkrace ok\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "syscall";
	unsigned long units = argc > 2 ? strtoul(argv[2], NULL, 10) : 60;
	if (!strcmp(how, "run"))
		return run(units);
	if (!strcmp(how, "strict"))
		return run_strict(units);
	if (!strcmp(how, "forkrace"))
		return fork_race(units);
	if (!strcmp(how, "probe")) {
		if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, NULL) == 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 1, NULL) == 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) == 0)
			return 3; /* the kernel installed nothing: a probe */
		char cmd[4096];
		snprintf(cmd, sizeof cmd, "%s run %lu", argv[0], units);
		if (system(cmd) != 0)
			return 4;
		return run(units);
	}
	if (!strcmp(how, "killexec")) {
		if (install_killing(SYS_timer_create) != 0) {
			perror("rec-seccomp: seccomp");
			return 2;
		}
		fflush(stdout);
		pid_t child = fork();
		if (child == 0) {
			execl(argv[0], argv[0], "run", argc > 2 ? argv[2] : "60", (char *)NULL);
			_exit(127);
		}
		int st;
		if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st) ||
		    WEXITSTATUS(st) != 0)
			return 1;
		printf("parent ok\n");
		return 0;
	}
	if (!strcmp(how, "killperf") || !strcmp(how, "killtimer")) {
		if (install_killing(!strcmp(how, "killperf") ? SYS_perf_event_open
		                                             : SYS_timer_create) != 0) {
			perror("rec-seccomp: seccomp");
			return 2;
		}
		return run_on_thread(units);
	}
	if (install(!strcmp(how, "syscall")) != 0) {
		perror("rec-seccomp: seccomp");
		return 2;
	}
	if (!strcmp(how, "exec")) {
		execl(argv[0], argv[0], "run", argc > 2 ? argv[2] : "60", (char *)NULL);
		return 127;
	}
	return run(units);
}
