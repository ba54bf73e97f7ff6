/*
 * seccomp.c - what the agent stops doing once the program filters its
 * own system calls.
 *
 * A sandbox (Chromium's GPU and utility processes, anything built on
 * libseccomp) installs a seccomp filter that kills the process on a call
 * it does not expect; Chromium's allows getrusage() for RUSAGE_SELF and
 * RUSAGE_THREAD only, and raises SIGSYS for RUSAGE_CHILDREN, which the
 * agent asks at every sweep of its helper and at exit (reap.c).  The
 * signal handler makes no system call; the calls the agent makes only to
 * keep its accounts exact are the ones to give up.  So:
 *
 *   - a filter in force when the agent starts ("Seccomp: 2" in
 *     /proc/self/status, read once a start: perf_probe_status()), or one
 *     the program installs through prctl(PR_SET_SECCOMP) or libc's
 *     syscall(SYS_seccomp) (rawsig.c), both interposed here, marks the
 *     process filtered;
 *   - a call of the agent's that a filter may refuse is made between
 *     filter_enter() and filter_leave(), and only when filter_enter()
 *     says no filter is, or is about to be, in force.  The install marks
 *     first and waits for calls under way to leave: with sequentially
 *     consistent atomics, either the call sees the mark or the install
 *     sees the call, never neither.
 *
 * A filter installed through either interposed call is also asked, by
 * running its program (bpf.c) before the install, what it would refuse
 * of the calls the agent may still make (filtercheck.c): the perf
 * engine's only, and every thread moves to a timer; anything else, and
 * sampling ends in the process there (agent_stop_sandboxed()).  Strict
 * mode refuses the calling thread everything but read, write, _exit and
 * sigreturn: that thread's samples must come without a call, so the
 * threads move to timers.
 *
 * A filter installed by a raw system call instruction (Go's runtime) is
 * not seen until the next start, and one in force at a start cannot be
 * read (the default engine is then the timers: perf_engine.c); the mark
 * is kept by a forked child (the kernel keeps the filter too).
 */
#include "agent.h"
#include "../src/engine/engine.h"
#include "../src/engine/perf_engine.h"
#include "../src/base/base.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdlib.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>

static atomic_int filtered, calls_under_way;

void filter_note_start(void)
{
	int seccomp = 0;
	long tracer = 0;
	perf_probe_status(&seccomp, &tracer);
	if (seccomp) { /* 1: a filter (mode 2) */
		atomic_store(&filtered, 1);
		lazy_helper_block(); /* the helper as before: not from a sample */
	}
}

int filter_enter(void)
{
	atomic_fetch_add(&calls_under_way, 1);
	if (!atomic_load(&filtered))
		return 1;
	atomic_fetch_sub(&calls_under_way, 1);
	return 0;
}

void filter_leave(void)
{
	atomic_fetch_sub(&calls_under_way, 1);
}

/* In a forked child: a call the parent's other threads had under way
 * will never leave here, and an install would wait for it for ever. */
void filter_after_fork(void)
{
	atomic_store(&calls_under_way, 0);
}

/* The filter's program, copied out of the caller's memory without
 * faulting on a bad pointer (the kernel answers that with EFAULT, and so
 * must we: copyin.c), into *out (NULL when we have no memory for it):
 * 1.  0 for a program the kernel will not install (no pointer, an
 * unreadable one, no instructions or too many: EFAULT or EINVAL):
 * libseccomp asks the kernel which flags it knows by installing NULL
 * with each, at the start of every program that uses it (man-db's man,
 * apt), and nothing of ours may change for that. */
static int copy_program(const struct sock_fprog *user, struct sock_filter **out, size_t *len)
{
	struct sock_fprog p;
	*out = NULL;
	if (!user || copyin_prefix(&p, user, sizeof p) != sizeof p || !p.len ||
	    p.len > BPF_MAXINSNS || !p.filter)
		return 0;
	size_t bytes = p.len * sizeof *p.filter;
	struct sock_filter *f = mem_alloc(bytes);
	if (f && copyin_prefix(f, p.filter, bytes) != bytes) {
		mem_free(f);
		return 0;
	}
	*out = f;
	*len = p.len;
	return 1;
}

/* Marked, and the agent's calls under way are waited out. */
static void mark_filtered(void)
{
	lazy_helper_block(); /* no thread made from a sample from now on */
	atomic_store(&filtered, 1);
	while (atomic_load(&calls_under_way) > 0)
		sched_yield(); /* one system call of ours: microseconds */
}

void filter_installing(const void *sock_fprog)
{
	if (!sigstate_mine())
		return; /* a vfork child: the memory, the ring, the helper are its parent's */
	struct sock_filter *f;
	size_t len = 0;
	if (!copy_program(sock_fprog, &f, &len))
		return; /* nothing will be installed */
	agent_defer_end(); /* a forked child's ring file, while it may be made */
	/* what it would refuse; everything, if we could not copy it */
	unsigned refused = f ? filter_refusals(f, len)
	                     : FILTER_REFUSES_EVENTS | FILTER_REFUSES_AGENT;
	mem_free(f);
	if (refused & FILTER_REFUSES_AGENT)
		agent_stop_sandboxed();
	else if (refused & FILTER_REFUSES_EVENTS)
		engine_events_forbid();
	mark_filtered();
}

/* Strict mode allows the calling thread read, write, _exit and
 * sigreturn, and nothing to any other thread: its samples must come
 * without a call (a timer's), and it can make no thread or child that
 * the rest would concern. */
void filter_installing_strict(void)
{
	if (!sigstate_mine())
		return;
	agent_defer_end();
	engine_events_forbid();
	mark_filtered();
}

typedef int prctl_fn(int, unsigned long, unsigned long, unsigned long, unsigned long);
static prctl_fn *_Atomic real_prctl;

__attribute__((constructor(101))) static void filter_resolve(void)
{
	atomic_store(&real_prctl, (prctl_fn *)dlsym(RTLD_NEXT, "prctl"));
}

__attribute__((visibility("default"))) int prctl(int option, ...)
{
	va_list ap;
	unsigned long a[4];
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (option == PR_SET_SECCOMP && a[0] == SECCOMP_MODE_STRICT)
		filter_installing_strict();
	else if (option == PR_SET_SECCOMP)
		filter_installing((const void *)a[1]);
	prctl_fn *fn = atomic_load(&real_prctl);
	if (!fn && !(fn = (prctl_fn *)dlsym(RTLD_NEXT, "prctl"))) {
		errno = ENOSYS;
		return -1;
	}
	return fn(option, a[0], a[1], a[2], a[3]);
}
