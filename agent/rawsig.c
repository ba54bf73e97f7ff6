/*
 * rawsig.c - the program's syscall(SYS_rt_sigaction, ...).
 *
 * Chromium's launcher sets every signal back to its default in a forked
 * child before it execs, by the system call through libc's syscall(), so
 * that no handler of the browser's runs in the child (its
 * ResetChildSignalHandlersToDefaults()).  sigaction() is ours
 * (src/process/sigwrap.c) and keeps our handlers in place; this call went
 * round it.  The child's own sampling event, started by our fork hook,
 * then raised SIGTRAP with the default action within the millisecond of
 * CPU the child spends before its exec, and the kernel killed it: the
 * browser waited for a process that never came (chromium --headless
 * --dump-dom hung in about one run in three; perf's signal_deliver showed
 * SIGTRAP, TRAP_PERF, sa_handler 0 in the launcher's children).  So the
 * agent interposes syscall(): an rt_sigaction of a signal we own now goes
 * the way sigaction() does (the program's disposition recorded and
 * honoured, ours kept), and an rt_sigprocmask the way pthread_sigmask()
 * does (a mask that blocks everything is set without the sampling
 * signal: process/maskwrap.c; a program that keeps its signals for a
 * signalfd was never sampled); every other call goes to libc's syscall()
 * untouched (a seccomp filter's install is noted first: seccomp.c; an
 * io_uring's setup makes a deferred helper thread first, as
 * pthread_create does: the ring's worker threads, which no sample can
 * reach, are credited by its sweeps, src/engine/ioworkers.c).
 * A raw system call by instruction (Go's runtime) still
 * bypasses this; handover.c notices that at the next sweep.
 */
#include "agent.h"
#include "../src/process/process.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

typedef long syscall_fn(long, ...);

/* libc's, found at load, so that a call from a signal handler or a vfork
 * child, where dlsym is not safe, finds it found; a library whose
 * constructor runs before ours and calls syscall() has it looked up then.
 * The agent's own calls come here too. */
static syscall_fn *_Atomic real;

__attribute__((constructor(101))) static void rawsig_resolve(void)
{
	atomic_store(&real, (syscall_fn *)dlsym(RTLD_NEXT, "syscall"));
}

__attribute__((visibility("default"))) long syscall(long number, ...)
{
	va_list ap;
	long a[6];
	va_start(ap, number);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	long rc;
	/* strict mode only with no flags and no argument, as the kernel
	 * takes it (libseccomp's probe passes a flag: EINVAL) */
	if (number == SYS_seccomp && a[0] == SECCOMP_SET_MODE_STRICT && !a[1] && !a[2])
		filter_installing_strict(); /* a sandbox (seccomp.c) */
	else if (number == SYS_seccomp && a[0] == SECCOMP_SET_MODE_FILTER)
		filter_installing((const void *)a[2]);
	if (number == SYS_io_uring_setup)
		lazy_helper_now();
	if (number == SYS_rt_sigaction &&
	    process_raw_sigaction((int)a[0], (const void *)a[1], (void *)a[2],
	                          (unsigned long)a[3], &rc))
		return rc;
	if (number == SYS_rt_sigprocmask &&
	    process_raw_sigprocmask((int)a[0], (const void *)a[1], (void *)a[2],
	                            (unsigned long)a[3], &rc))
		return rc;
	syscall_fn *fn = atomic_load(&real);
	if (!fn) {
		fn = (syscall_fn *)dlsym(RTLD_NEXT, "syscall");
		if (!fn) {
			errno = ENOSYS;
			return -1;
		}
		atomic_store(&real, fn);
	}
	return fn(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
