/*
 * libc_calls.c - libc's sigaction() and pthread_sigmask() underneath our
 * interposers (process/sigwrap.c, process/maskwrap.c), for every
 * disposition and mask the library sets for itself: the fault handler
 * (fault.c), the sampling signal (signals.c, handover.c), the helper
 * thread.  They run in signal handlers and before our constructors, so
 * neither goes through dlsym.
 */
#include "engine/engine_int.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>

/* libc's own sigaction (glibc exports __sigaction): no dlsym, so it works
 * in signal handlers and before constructors ran. */
extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *oact);

int fault_real_sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	return __sigaction(sig, act, oact);
}

/* Clears sig in s by its bit: glibc's sigdelset() and sigismember()
 * refuse its internal signals (EINVAL, and errno set). */
static void clear_bit(sigset_t *s, int sig)
{
	unsigned long *w = (unsigned long *)(void *)s;
	const int bits = 8 * (int)sizeof *w;
	w[(sig - 1) / bits] &= ~(1ul << ((sig - 1) % bits));
}

/* engine.h: set around fault_raw_sigmask()'s system call. */
__thread int fault_raw_sigmask_own __attribute__((tls_model("initial-exec")));

/* glibc's pthread_sigmask() as it is (nptl/pthread_sigmask.c): its two
 * internal signals (cancellation, setxid; SIGRTMIN - 2 and - 1 as the
 * kernel numbers them) are never blocked; the error number is returned
 * and errno left alone (signal handlers call this).  A system call rather
 * than dlsym: async-signal-safe, usable before our constructors ran, and
 * glibc exports no other name for it. */
int fault_raw_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	sigset_t copy;
	if (set && (how == SIG_BLOCK || how == SIG_SETMASK)) {
		copy = *set;
		clear_bit(&copy, 32);
		clear_bit(&copy, 33);
		set = &copy;
	}
	int e = errno;
	fault_raw_sigmask_own++; /* through the agent's syscall(): ours, as it is */
	long rc = syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
	fault_raw_sigmask_own--;
	int err = rc == 0 ? 0 : errno;
	errno = e;
	return err;
}

#ifdef PROFIL_NO_HOOK
/* Under ThreadSanitizer: through its pthread_sigmask interceptor, which
 * runs the signals it held back before it returns.  After a bare system
 * call they ran at its next interceptor instead, which could be inside
 * our sigstate lock, whose holder then waited on itself for ever
 * (interpose_sigaction_in_handler under `make tsan`).  Our own
 * interposer (maskwrap.c) passes the call straight on. */
__thread int fault_sigmask_internal __attribute__((tls_model("initial-exec")));

int fault_real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	fault_sigmask_internal++;
	int rc = pthread_sigmask(how, set, old);
	fault_sigmask_internal--;
	return rc;
}
#else
int fault_real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return fault_raw_sigmask(how, set, old);
}
#endif
