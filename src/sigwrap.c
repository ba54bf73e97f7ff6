/*
 * sigwrap.c - the program's sigaction() and signal() calls.
 *
 * While profiling is on, fault.c's handler must stay the one the kernel
 * calls for SIGSEGV and SIGBUS, or a buffer that went bad would crash the
 * program (or run the program's handler for our fault).  A program that
 * installs its own handler after profiling started is common: profiling
 * may start in a constructor (monitor(), LD_PRELOAD) before main() sets
 * up a crash handler.  So these entry points are interposed like
 * pthread_create (threads.c): for SIGSEGV and SIGBUS they go through
 * fault_user_sigaction(), which records the program's disposition (and
 * chains to it for every fault that is not ours) and returns the one it
 * set; every other signal goes straight to libc.
 *
 * The signal we sample with is handed over the same way: a program that
 * sets a disposition for it gets it, and sampling moves to another free
 * signal (signals.c, signal_hand_over()).
 *
 * Limits (documented in profil(3)): a raw rt_sigaction system call, and
 * sigset()/sigvec(), bypass this; their handler would then replace ours
 * until profiling restarts, and a later bad buffer would reach it.
 *
 * libc's own implementation is reached as __sigaction, which glibc
 * exports (x86-64, aarch64: GLIBC_2.2.5/2.17); no dlsym, so this works
 * in signal handlers and before our constructors ran.
 */
#include "fault.h"

#include <errno.h>
#include <string.h>

extern int __sigaction(int sig, const struct sigaction *act, struct sigaction *oact);

#define API __attribute__((visibility("default"))) NO_TSAN

int fault_real_sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	return __sigaction(sig, act, oact);
}

/* Every disposition change the program makes comes through here. */
NO_TSAN static int program_sigaction(int sig, const struct sigaction *act,
                                     struct sigaction *oact)
{
	if (act && sig == signal_sampling() && signal_hand_over(sig, act, oact) == 0)
		return 0;
	return fault_user_sigaction(sig, act, oact);
}

API int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	return program_sigaction(sig, act, oact);
}

/* signal() with the given flags and mask-self rule, as glibc builds it. */
NO_TSAN static sighandler_t set_handler(int sig, sighandler_t fn, int flags, int mask_self)
{
	if (fn == SIG_ERR || sig < 1 || sig >= NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	struct sigaction act, old;
	memset(&act, 0, sizeof act);
	act.sa_handler = fn;
	sigemptyset(&act.sa_mask);
	if (mask_self)
		sigaddset(&act.sa_mask, sig);
	act.sa_flags = flags;
	if (program_sigaction(sig, &act, &old) != 0)
		return SIG_ERR;
	return old.sa_handler;
}

API sighandler_t bsd_signal(int sig, sighandler_t fn);
API sighandler_t sysv_signal(int sig, sighandler_t fn);

/* BSD semantics: glibc's signal() and bsd_signal(). */
API sighandler_t signal(int sig, sighandler_t fn)
{
	return set_handler(sig, fn, SA_RESTART, 1);
}

API sighandler_t bsd_signal(int sig, sighandler_t fn)
{
	return set_handler(sig, fn, SA_RESTART, 1);
}

/* System V semantics: what strict ISO C programs get for signal(). */
API sighandler_t sysv_signal(int sig, sighandler_t fn)
{
	return set_handler(sig, fn, SA_RESETHAND | SA_NODEFER, 0);
}

API sighandler_t __sysv_signal(int sig, sighandler_t fn);
API sighandler_t __sysv_signal(int sig, sighandler_t fn)
{
	return set_handler(sig, fn, SA_RESETHAND | SA_NODEFER, 0);
}
