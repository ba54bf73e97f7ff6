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
 * (cli/record/reaped.c).
 *
 * Children reaped where no hook sees it (waitid(), which returns no
 * rusage; glibc's own calls inside system() and pclose(); a raw wait4
 * system call, as Go's runtime makes) are in the process's total too,
 * which its parent learns, and the recorder took them for the process's
 * exit: a Python script that ran a 350 ms child by os.system() was
 * credited 1.81 times the CPU the kernel counted, and `go build` showed
 * its compiler's time (a static program, not profiled) at the go
 * command's "[process exit]". The kernel keeps the sum of the children a
 * process reaped (RUSAGE_CHILDREN), so reaps_settle() writes what it
 * grew by beyond what the hooks told as one reap of pid 0, no process's:
 * from the helper at every sweep, at exit(), _exit() and exec. Their
 * exits stay uncounted, and a program that ends without our destructor
 * (Go's raw exit_group) keeps the children it reaped after the last
 * sweep in its exit. Children reaped by the kernel (SIGCHLD ignored) are
 * in no total. Not in a process that filters its system calls
 * (seccomp.c): Chromium's sandbox kills one that asks RUSAGE_CHILDREN,
 * so there the children's time is taken for the exit, as before.
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
#include <stdatomic.h>
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

/*
 * What this image's hooks told since its start, and the kernel's sum of
 * reaped children then (reaps_begin()).  A reap is under way from the
 * hook's call until it has told: the kernel adds the child to the sum
 * before wait4 returns, so a settle meanwhile would count it again.
 * reaps_settle() therefore reads the sum only between two equal counts
 * of reaps begun, with as many ended.  Written by any thread (a SIGCHLD
 * handler too: atomics only); reset by reaps_begin() in a forked child,
 * which inherits the parent's counts, maybe with a reap under way.
 */
static _Atomic uint64_t told_ns, base_ns;
static atomic_uint told_count, reaps_begun, reaps_ended;

uint64_t reaps_children_ns(void)
{
	struct rusage ru;
	if (syscall(SYS_getrusage, RUSAGE_CHILDREN, &ru) != 0)
		return 0;
	return ns_of(&ru.ru_utime) + ns_of(&ru.ru_stime);
}

void reaps_begin(uint64_t children_ns)
{
	atomic_store(&base_ns, children_ns);
	atomic_store(&told_ns, 0);
	atomic_store(&told_count, 0);
	atomic_store(&reaps_begun, 0);
	atomic_store(&reaps_ended, 0);
}

static void tell(uint32_t pid, uint64_t ns)
{
	sample_child_cpu(pid, ns);
	atomic_fetch_add(&told_ns, ns);
	atomic_fetch_add(&told_count, 1);
}

void reaps_settle(void)
{
	unsigned begun = atomic_load(&reaps_begun);
	if (begun != atomic_load(&reaps_ended) || !agent_running())
		return;
	/* Chromium's sandbox kills a process that asks RUSAGE_CHILDREN */
	if (!filter_enter())
		return;
	uint64_t now = reaps_children_ns();
	filter_leave();
	uint64_t seen = atomic_load(&base_ns) + atomic_load(&told_ns);
	if (atomic_load(&reaps_begun) != begun)
		return;
	/* each reap's rusage is truncated to microseconds, utime and stime
	 * apart, and so is the kernel's sum: up to 2 us a reap either way */
	uint64_t slack = 2000u * (atomic_load(&told_count) + 1u);
	if (now > seen + slack)
		tell(0, now - seen);
}

static pid_t reaping_wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
	struct rusage mine;
	int st = 0;
	atomic_fetch_add(&reaps_begun, 1);
	pid_t r = real_wait4 ? real_wait4(pid, &st, options, ru ? ru : &mine)
	                     : (pid_t)syscall(SYS_wait4, pid, &st, options, ru ? ru : &mine);
	if (r > 0) {
		if (status)
			*status = st;
		if ((WIFEXITED(st) || WIFSIGNALED(st)) && agent_running()) {
			const struct rusage *u = ru ? ru : &mine;
			int e = errno;
			tell((uint32_t)r, ns_of(&u->ru_utime) + ns_of(&u->ru_stime));
			errno = e;
		}
	}
	atomic_fetch_add(&reaps_ended, 1);
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
