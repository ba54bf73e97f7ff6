/*
 * sigwrap.c - the program's sigaction(), signal() and siginterrupt().
 *
 * While profiling is on we own a few signals: SIGSEGV and SIGBUS, whose
 * handler (fault.c) must stay the one the kernel calls or a buffer that
 * went bad would crash the program, and the signal samples arrive on
 * (handover.c).  A program that sets its own disposition for one of them
 * after profiling started is common: profiling may start in a constructor
 * (monitor(), LD_PRELOAD) before main() sets up a crash handler.  So these
 * entry points are interposed like pthread_create (threads.c): for an
 * owned signal the program's disposition is recorded, read back as it
 * was set, and honoured by our handler; every other signal goes straight
 * to libc, with exactly libc's behaviour.
 *
 * Async-signal-safe, as POSIX makes sigaction(): no allocation, no lock
 * but the sigstate spin lock, taken with every signal blocked (engine.h,
 * fault.c).
 * Moving the samples away from a signal the program takes is only
 * requested here and carried out later (handover.c).
 *
 * Only in the process whose state this memory holds: a vfork child shares
 * our memory (CPython's subprocess resets every signal in one before
 * exec), so everything it calls passes straight to libc.
 *
 * signal(), bsd_signal() and ssignal() are glibc's BSD signal(): they
 * restart system calls unless siginterrupt() asked otherwise for that
 * signal, which glibc remembers in a set of its own; we keep the same set
 * (every siginterrupt() comes through here) and build the same call.
 *
 * Limits (documented in profil(3)): a raw rt_sigaction system call, and
 * sigset()/sigvec(), bypass this; their handler would then replace ours
 * until profiling restarts.
 *
 * libc's own sigaction is reached as __sigaction, which glibc exports
 * (x86-64, aarch64: GLIBC_2.2.5/2.17); no dlsym, so this works in signal
 * handlers and before our constructors ran.
 */
#include "process/process.h"
#include "engine/engine.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

const char process_sigwrap_linked = 1; /* process.h: for static links */

#define API __attribute__((visibility("default"))) NO_TSAN

/* Every disposition change the program makes comes through here.  The
 * caller's structs are copied before anything is written, so act and
 * oact may be the same, and a bad pointer faults outside the lock. */
NO_TSAN static int program_sigaction(int sig, const struct sigaction *act,
                                     struct sigaction *oact)
{
	if (signal_internal || !sigstate_mine())
		return fault_real_sigaction(sig, act, oact);
	struct sigaction in, out;
	if (act)
		in = *act;
	sigset_t old;
	sigstate_lock(&old);
	int rc;
	if (fault_owns(sig))
		rc = fault_user_sigaction_locked(sig, act ? &in : NULL, &out);
	else if (signal_owns_locked(sig))
		rc = signal_user_sigaction_locked(sig, act ? &in : NULL, &out);
	else
		rc = fault_real_sigaction(sig, act ? &in : NULL, &out);
	int e = errno;
	sigstate_unlock(&old);
	if (rc == 0 && oact)
		*oact = out;
	errno = e;
	return rc;
}

API int sigaction(int sig, const struct sigaction *act, struct sigaction *oact)
{
	return program_sigaction(sig, act, oact);
}

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000 /* the kernel's; glibc sets it itself */
#endif

/* The kernel's struct for rt_sigaction on x86-64 and aarch64 (sa_mask of
 * the sigsetsize argument, 8 bytes). */
struct ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

NO_TSAN static int valid(int sig)
{
	return sig >= 1 && sig < NSIG && sig <= 64;
}

NO_TSAN static int owned_now(int sig)
{
	sigset_t old;
	sigstate_lock(&old);
	int owned = fault_owns(sig) || signal_owns_locked(sig);
	sigstate_unlock(&old);
	return owned;
}

int process_raw_sigaction(int sig, const void *kact, void *koact, unsigned long setsize,
                          long *rc)
{
	if (signal_internal || !sigstate_mine() || setsize != sizeof(unsigned long) ||
	    !valid(sig) || !owned_now(sig))
		return 0;
	struct ksigaction k;
	struct sigaction in, out;
	memset(&in, 0, sizeof in);
	if (kact) {
		memcpy(&k, kact, sizeof k);
		in.sa_handler = (sighandler_t)k.handler;
		in.sa_flags = (int)(k.flags & ~(unsigned long)SA_RESTORER);
		sigemptyset(&in.sa_mask);
		memcpy(&in.sa_mask, &k.mask, sizeof k.mask);
	}
	*rc = program_sigaction(sig, kact ? &in : NULL, &out);
	if (*rc == 0 && koact) {
		memset(&k, 0, sizeof k);
		k.handler = (void *)out.sa_handler;
		k.flags = (unsigned long)(unsigned)out.sa_flags;
		k.restorer = (void *)out.sa_restorer;
		memcpy(&k.mask, &out.sa_mask, sizeof k.mask);
		memcpy(koact, &k, sizeof k);
	}
	return 1;
}

/* Signals siginterrupt() made interruptible: bit sig - 1.  Atomic. */
static _Atomic unsigned long long interruptible;

/* signal() with the given flags and mask-self rule, as glibc builds it. */
NO_TSAN static sighandler_t set_handler(int sig, sighandler_t fn, int flags, int mask_self)
{
	if (fn == SIG_ERR || !valid(sig)) {
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

/* BSD semantics: glibc's signal(), bsd_signal() and ssignal(). */
NO_TSAN static sighandler_t bsd(int sig, sighandler_t fn)
{
	int intr = valid(sig) && (atomic_load(&interruptible) >> (sig - 1) & 1);
	return set_handler(sig, fn, intr ? 0 : SA_RESTART, 1);
}

API sighandler_t bsd_signal(int sig, sighandler_t fn);
API sighandler_t ssignal(int sig, sighandler_t fn);
API sighandler_t sysv_signal(int sig, sighandler_t fn);
API sighandler_t __sysv_signal(int sig, sighandler_t fn);
API int siginterrupt(int sig, int flag);

API sighandler_t signal(int sig, sighandler_t fn)
{
	return bsd(sig, fn);
}

API sighandler_t bsd_signal(int sig, sighandler_t fn)
{
	return bsd(sig, fn);
}

API sighandler_t ssignal(int sig, sighandler_t fn)
{
	return bsd(sig, fn);
}

/* System V semantics: what strict ISO C programs get for signal(). */
API sighandler_t sysv_signal(int sig, sighandler_t fn)
{
	return set_handler(sig, fn, SA_RESETHAND | SA_NODEFER, 0);
}

API sighandler_t __sysv_signal(int sig, sighandler_t fn)
{
	return set_handler(sig, fn, SA_RESETHAND | SA_NODEFER, 0);
}

/* libc's siginterrupt, which also updates libc's own set; resolved at
 * load (dlsym is not async-signal-safe).  NULL when linked statically. */
static int (*real_siginterrupt)(int, int);

__attribute__((constructor)) static void sigwrap_init(void)
{
	real_siginterrupt = (int (*)(int, int))dlsym(RTLD_NEXT, "siginterrupt");
}

/* glibc's siginterrupt: SA_RESTART off (flag) or on, read-modify-write. */
NO_TSAN static int toggle_restart(int sig, int flag)
{
	struct sigaction sa;
	if (program_sigaction(sig, NULL, &sa) != 0)
		return -1;
	if (flag)
		sa.sa_flags &= ~SA_RESTART;
	else
		sa.sa_flags |= SA_RESTART;
	return program_sigaction(sig, &sa, NULL);
}

API int siginterrupt(int sig, int flag)
{
	if (!valid(sig)) {
		errno = EINVAL;
		return -1;
	}
	if (flag)
		atomic_fetch_or(&interruptible, 1ull << (sig - 1));
	else
		atomic_fetch_and(&interruptible, ~(1ull << (sig - 1)));
	if (signal_internal || !sigstate_mine())
		return real_siginterrupt ? real_siginterrupt(sig, flag) : toggle_restart(sig, flag);
	sigset_t old;
	sigstate_lock(&old);
	int owned = fault_owns(sig) || signal_owns_locked(sig);
	int rc = owned || !real_siginterrupt ? 0 : real_siginterrupt(sig, flag);
	int e = errno;
	sigstate_unlock(&old);
	errno = e;
	/* An owned signal: the same read-modify-write on the program's view
	 * (not atomic with respect to other callers, nor is glibc's). */
	return owned || !real_siginterrupt ? toggle_restart(sig, flag) : rc;
}
