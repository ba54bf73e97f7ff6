/*
 * reap.c - telling the recorder what each reaped child cost.
 *
 * A process's samples and its agent's accounts (account.c) cover its CPU
 * time up to the agent's last look: what the kernel counts after, at its
 * exit (unmapping its memory, closing its files, ending its threads),
 * no sample can.  For one long program that is nothing; for a shell loop
 * or a build it was 18-22% of the CPU the kernel counted (300 /bin/true:
 * 0.40 CPU s of samples for 0.52 s; a fork+_exit child: 128 us at the
 * kernel's exit, against 248 us before it).  The parent learns the
 * child's whole CPU time when it reaps it: wait4() returns it (the
 * child's own and its reaped descendants', RUSAGE_BOTH).  So the calls
 * that reap (wait, waitpid, wait3, wait4) are interposed, made as wait4
 * with a rusage of our own when the program passed none, and each child
 * reaped is written into our ring (ring.h RING_REAPED); the recorder
 * credits the part no image of the child accounted for
 * (cli/record/reaped.c).  waitid() returns no rusage and is left alone,
 * as are children reaped by the kernel (SIGCHLD ignored) and by glibc's
 * own internal calls (system()): those keep their exits uncounted.
 *
 * The program sees the same call: the same arguments to the kernel (a
 * rusage pointer aside), the same result, status and errno (the ring
 * write makes no system call).  A SIGCHLD handler may reap: the write is
 * async-signal-safe (sample.c).
 */
#include "agent.h"
#include "../src/engine/engine.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

typedef pid_t wait4_fn(pid_t, int *, int, struct rusage *);
static wait4_fn *real_wait4;

__attribute__((constructor(101))) static void reap_resolve(void)
{
	real_wait4 = (wait4_fn *)dlsym(RTLD_NEXT, "wait4");
}

static uint64_t ns_of(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000u + (uint64_t)tv->tv_usec * 1000u;
}

static pid_t reaping_wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	struct rusage mine;
	int st = 0;
	pid_t r = real_wait4 ? real_wait4(pid, &st, options, ru ? ru : &mine)
	                     : (pid_t)syscall(SYS_wait4, pid, &st, options, ru ? ru : &mine);
	if (r > 0) {
		if (status)
			*status = st;
		if ((WIFEXITED(st) || WIFSIGNALED(st)) && agent_running()) {
			const struct rusage *u = ru ? ru : &mine;
			int e = errno;
			sample_child_cpu((uint32_t)r, ns_of(&u->ru_utime) + ns_of(&u->ru_stime));
			errno = e;
		}
	}
	return r;
}

__attribute__((visibility("default"))) pid_t wait4(pid_t pid, int *status, int options,
                                                   struct rusage *ru)
{
	return reaping_wait4(pid, status, options, ru);
}

__attribute__((visibility("default"))) pid_t wait3(int *status, int options, struct rusage *ru)
{
	return reaping_wait4(-1, status, options, ru);
}

__attribute__((visibility("default"))) pid_t waitpid(pid_t pid, int *status, int options)
{
	return reaping_wait4(pid, status, options, NULL);
}

__attribute__((visibility("default"))) pid_t wait(int *status)
{
	return reaping_wait4(-1, status, 0, NULL);
}
