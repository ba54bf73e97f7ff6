/*
 * clonewrap.c - a thread made by the C library's clone() is found by the
 * helper thread's sweeps, so the helper is made first.
 *
 * A thread made by clone() (CLONE_THREAD), not pthread_create, has no
 * hook of ours: the helper's sweeps (every 100 ms) find it, and
 * timers_scan.c credits what it ran until then at [unsampled] on it.
 * But the agent makes the helper lazily (lazy_helper.c), at the
 * program's first pthread_create or dlclose or after 50 ms of the main
 * thread's CPU: a main thread that made its worker with clone() and then
 * only waited never had one, and the worker was never sampled, its CPU
 * all counted at the process's exit.  A clone() of a thread is taken for
 * a safe point to make a deferred helper (pthread_create), as
 * pthread_create and dlclose are: a program makes its threads outside
 * signal handlers.  One that cloned a thread from a handler that
 * interrupted malloc could deadlock here; crash reporters, which do make
 * threads in handlers, use the raw system call (breakpad's
 * linux_syscall_support), which passes by.
 *
 * Only the program's calls through the PLT come here: glibc's own
 * threads, fork and posix_spawn use its internal clone, and a raw
 * syscall(SYS_clone) or clone3 passes by (its thread is still found,
 * once something else has made the helper).  The child starts at fn on
 * its own stack, so nothing of this frame is in it; the call passes all
 * seven arguments on, as glibc's clone reads them whatever the flags.
 *
 * Not in the static library: in a static link this clone would take the
 * place of libc's, and dlsym would find nothing to pass the call to.
 */
#include "process/process.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <errno.h>
#include <sys/types.h>

#ifndef PROFIL_NO_HOOK

typedef int clone_fn(int (*)(void *), void *, int, void *, ...);

static clone_fn *_Atomic real_clone;

/* libc's clone: looked up at load (clone_init), or at the first call if
 * another library's constructor made a thread before ours ran. */
static clone_fn *libc_clone(void)
{
	clone_fn *f = atomic_load(&real_clone);
	if (!f) {
		f = (clone_fn *)dlsym(RTLD_NEXT, "clone");
		atomic_store(&real_clone, f);
	}
	return f;
}

__attribute__((constructor)) static void clone_init(void)
{
	(void)libc_clone();
}

__attribute__((visibility("default")))
int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	pid_t *parent_tid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *child_tid = va_arg(ap, pid_t *);
	va_end(ap);
	clone_fn *real = libc_clone();
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (flags & CLONE_THREAD)
		lazy_helper_now(); /* a deferred helper: this is a safe point */
	if (flags & (CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWUSER | CLONE_NEWPID))
		process_ns_changing(flags); /* the child inherits what the hook does */
	return real(fn, stack, flags, arg, parent_tid, tls, child_tid);
}

#endif
