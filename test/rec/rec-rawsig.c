/*
 * rec-rawsig.c - a forked child sets every signal back to its default by
 * the rt_sigaction system call through libc's syscall(), as Chromium's
 * launcher does before it execs, then works: under the agent its
 * samples must go on and must not kill it (agent/rawsig.c).
 *
 *   rec-rawsig [UNITS]   the child runs reset_hot for UNITS of CPU time
 *                        (rec.h); the parent prints how the child ended
 *   rec-rawsig mask UNITS
 *                        blocks every signal by the rt_sigprocmask system
 *                        call through syscall(), as runtimes that keep
 *                        signals for a signalfd do, then runs masked_hot;
 *                        prints whether the kernel's mask reads back full
 */
#include "rec.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* The kernel's struct sigaction on x86-64 and aarch64. */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

static void reset_all(void)
{
	struct ksigaction k;
	memset(&k, 0, sizeof k);
	k.handler = (void *)SIG_DFL;
	for (int sig = 1; sig <= 64; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			syscall(SYS_rt_sigaction, sig, &k, NULL, sizeof k.mask);
}

__attribute__((noinline)) static void reset_hot(unsigned long units)
{
	REC_BURN(units, 0x52);
}

__attribute__((noinline)) static void masked_hot(unsigned long units)
{
	REC_BURN(units, 0x53);
}

/* The mask through the system call, then read back through it too. */
static int mask_all(void)
{
	unsigned long all = ~0ul, now = 0;
	if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, sizeof all) != 0 ||
	    syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, &now, sizeof now) != 0)
		return -1;
	/* SIGKILL and SIGSTOP are never blocked; glibc's own two (32, 33),
	 * which pthread_sigmask() never blocks, are not looked at: under the
	 * agent the call is made as pthread_sigmask() would make it */
	unsigned long want = ~0ul & ~(1ul << (SIGKILL - 1)) & ~(1ul << (SIGSTOP - 1)) &
	                     ~(1ul << 31) & ~(1ul << 32);
	printf("mask reads back %s\n", (now & want) == want ? "full" : "partial");
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "mask") == 0) {
		if (mask_all() != 0)
			return 1;
		masked_hot(strtoul(argv[2], NULL, 10));
		return 0;
	}
	unsigned long units = argc > 1 ? strtoul(argv[1], NULL, 10) : 10;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		reset_all();
		reset_hot(units);
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid)
		return 1;
	if (WIFSIGNALED(st))
		printf("child killed by signal %d\n", WTERMSIG(st));
	else
		printf("child exited %d\n", WEXITSTATUS(st));
	return 0;
}
