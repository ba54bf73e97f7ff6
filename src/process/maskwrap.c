/*
 * maskwrap.c - the program's pthread_sigmask() and sigprocmask().
 *
 * Programs block every signal in threads that must not run handlers:
 * xz makes each worker thread with all signals blocked, CPython's
 * signal.pthread_sigmask(SIG_BLOCK, range(1, NSIG)) does it on request,
 * thread pools and runtimes do it in helper threads.  Such a mask blocks
 * the signal samples arrive on too, for the thread's whole life: its CPU
 * time was never sampled (xz -T4 compressing 30 MB: 17 CPU s, 25
 * samples, all on the main thread), or surfaced as one weight where the
 * signal was unblocked.  A mask like that cannot mean our signal, which
 * the program does not know of: so while a signal carries samples, a mask
 * that blocks most real-time signals (a "block everything" mask:
 * sigfillset(), every real-time signal, or "all but SIGPROF", which a
 * program with a profiler of its own may set) reaches the kernel without
 * the sampling signal and the fault signals the handler needs to write
 * (SIGSEGV, SIGBUS: sample.c holds a sample back while they are blocked),
 * and the program reads back the mask it set, those included.  When the
 * samples move to another signal or profiling stops, what was hidden
 * goes back into the kernel's mask at the thread's next call.  A mask
 * that blocks the sampling signal and leaves
 * most real-time signals alone names it on purpose (to wait for it with
 * sigwait(), or to hold samples off a stretch of code) and is set as
 * given: that CPU time is credited where the signal is unblocked again.
 *
 * The program's view of the hidden signals' bits is kept per thread
 * (view_bits); a thread made through our pthread_create starts with its
 * creator's view, or, when its attributes carry a mask
 * (pthread_attr_setsigmask_np, applied by glibc), with that mask set
 * again through here (threads.c).  The handler
 * this lets run writes only its own memory (sample.c), so the program
 * cannot tell it ran, except through the time it takes.  exec.c gives a
 * new program the mask the program set, view included.
 *
 * Async-signal-safe (both functions are): no lock, one atomic load, one
 * system call.  Not in a vfork child (shared memory), not while no signal
 * carries samples: then libc's behaviour exactly.  An rt_sigprocmask
 * system call made through libc's syscall() comes here too
 * (process_raw_sigprocmask(), from agent/rawsig.c).  Limits: one made by
 * a system call instruction, the old BSD and System V calls (sigblock(),
 * sigsetmask(), sighold(): glibc makes them without its exported
 * pthread_sigmask), and the masks of sigsuspend(), pselect(),
 * ppoll(), epoll_pwait() and signal handlers' sa_mask, are set as given
 * (those last only while a call sleeps or a handler runs).  When such a
 * call unblocks what our last call left blocked, the view is forgotten
 * at our next call or exec (view_current()): the program's own mask
 * wins.
 */
#include "process/process.h"
#include "engine/engine.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

const char process_maskwrap_linked = 1; /* process.h: for static links */

#define API __attribute__((visibility("default"))) NO_TSAN

/* The signals a "block everything" mask is set without: the sampling
 * signal, and the fault signals, without which the handler cannot write
 * (sample.c holds a sample back while the interrupted code blocks
 * SIGSEGV or SIGBUS: a fault in its write would kill the process). */
enum { HIDE_SAMPLING, HIDE_SEGV, HIDE_BUS, NHIDE };

/* Which of them this thread's program code believes blocked while the
 * kernel has them unblocked (bit i: hidden[i]), and the sampling signal
 * that bit 0 is about.  Only this thread reads or writes them. */
static __thread unsigned int view_bits __attribute__((tls_model("initial-exec")));
static __thread int view_sig __attribute__((tls_model("initial-exec")));
/* The kernel's mask (signals 1-64) as our last call left it while the
 * view hid something.  A program can change its mask without us: a raw
 * rt_sigprocmask, or the BSD calls glibc makes without its exported
 * pthread_sigmask.  dash clears its mask after a vfork with sigsetmask(0);
 * the view, still "everything blocked", then went with the next exec,
 * and every program of a pipeline after the script's first command
 * started with SIGPROF, SIGSEGV and SIGBUS blocked.  A signal the kernel
 * no longer blocks, that our call left blocked, means the view is stale:
 * view_current() forgets it.  (A mask with more blocked is kept: a
 * handler's sa_mask while it runs.) */
static __thread unsigned long long view_kernel __attribute__((tls_model("initial-exec")));

/* Signals 1-64 of set as bits, without those the kernel never blocks
 * (SIGKILL, SIGSTOP) and the two glibc keeps for itself (32, 33, which
 * fault_raw_sigmask() takes out as glibc does). */
NO_TSAN static unsigned long long mask_bits(const sigset_t *set)
{
	unsigned long long m = 0;
	for (int s = 1; s <= 64 && s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP && s != 32 && s != 33 && sigismember(set, s) == 1)
			m |= 1ull << (s - 1);
	return m;
}

/* The view, forgotten if the kernel's mask was lowered behind us. */
NO_TSAN static unsigned int view_current(void)
{
	sigset_t now;
	if (view_bits && fault_raw_sigmask(SIG_BLOCK, NULL, &now) == 0 &&
	    (mask_bits(&now) & view_kernel) != view_kernel)
		view_bits = 0;
	return view_bits;
}

/* Whether set blocks at least half the real-time signals other than sig
 * (glibc's two internal ones aside): a mask for "everything". */
NO_TSAN static int blocks_everything(const sigset_t *set, int sig)
{
	int in = 0, all = 0;
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		if (s != sig) {
			all++;
			in += sigismember(set, s) == 1;
		}
	return all > 0 && 2 * in >= all;
}

/* The program's view after how/set of one hidden signal s (bit b),
 * stripping it from in when it is to be hidden. */
NO_TSAN static unsigned int view_after(int how, sigset_t *in, int s, unsigned int b,
                                       unsigned int view, int everything)
{
	int named = sigismember(in, s) == 1;
	if (how == SIG_UNBLOCK)
		return named ? 0 : view & b;
	if (named && everything) {
		sigdelset(in, s);
		return b;
	}
	if (how == SIG_SETMASK || named)
		return 0; /* set as given: the kernel holds the bit */
	return view & b;
}

/* What no longer needs hiding goes back into the kernel's mask as the
 * program set it: the signal samples moved off (handover.c), or every
 * hidden signal once profiling stopped.  At this thread's next call. */
NO_TSAN static void settle_view(int sig)
{
	sigset_t back;
	sigemptyset(&back);
	if ((view_bits & (1u << HIDE_SAMPLING)) && view_sig != sig) {
		sigaddset(&back, view_sig);
		view_bits &= ~(1u << HIDE_SAMPLING);
	}
	if (!sig) {
		if (view_bits & (1u << HIDE_SEGV))
			sigaddset(&back, SIGSEGV);
		if (view_bits & (1u << HIDE_BUS))
			sigaddset(&back, SIGBUS);
		view_bits = 0;
	}
	if (!sigisemptyset(&back))
		fault_raw_sigmask(SIG_BLOCK, &back, NULL);
}

NO_TSAN static int program_sigmask(int how, const sigset_t *set, sigset_t *old)
{
#ifdef PROFIL_NO_HOOK
	if (fault_sigmask_internal) /* our own mask, by way of TSan's interceptor */
		return fault_raw_sigmask(how, set, old);
#endif
	if (!sigstate_mine())
		return fault_raw_sigmask(how, set, old);
	int sig = signal_sampling();
	if (view_current())
		settle_view(sig);
	if (!sig)
		return fault_raw_sigmask(how, set, old);
	if (set && how != SIG_BLOCK && how != SIG_UNBLOCK && how != SIG_SETMASK)
		return EINVAL;
	const int hidden[NHIDE] = {sig, SIGSEGV, SIGBUS};
	unsigned int view = view_bits, next = view;
	sigset_t in;
	if (set) {
		in = *set; /* before anything is written: set and old may alias */
		/* not only with the sampling signal in it: "all but SIGPROF",
		 * which a program with a profiler of its own may set, still
		 * blocks the fault signals the handler needs */
		int everything = blocks_everything(&in, sig);
		next = 0;
		for (int i = 0; i < NHIDE; i++)
			next |= view_after(how, &in, hidden[i], 1u << i, view, everything);
	}
	sigset_t prev;
	int rc = fault_raw_sigmask(how, set ? &in : NULL, &prev);
	if (rc != 0)
		return rc;
	if (set && next) /* what the kernel holds now */
		view_kernel = how == SIG_SETMASK ? mask_bits(&in)
		            : how == SIG_BLOCK   ? mask_bits(&prev) | mask_bits(&in)
		                                 : mask_bits(&prev) & ~mask_bits(&in);
	for (int i = 0; i < NHIDE; i++)
		if (view & (1u << i))
			sigaddset(&prev, hidden[i]);
	view_bits = next;
	view_sig = sig;
	if (old)
		*old = prev;
	return 0;
}

API int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return program_sigmask(how, set, old);
}

API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	int rc = program_sigmask(how, set, old);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

int process_raw_sigprocmask(int how, const void *kset, void *koset, unsigned long setsize,
                            long *rc)
{
	unsigned long word;
	sigset_t in, out;
	/* our own masks (fault_raw_sigmask(), which the call below makes
	 * too, through syscall()) go to the kernel as they are */
	if (fault_raw_sigmask_own || setsize != sizeof word || !sigstate_mine() ||
	    !signal_sampling())
		return 0; /* libc's: as the kernel takes it */
	sigemptyset(&in);
	if (kset) {
		memcpy(&word, kset, sizeof word); /* signals 1-64, as sigset_t begins */
		memcpy(&in, &word, sizeof word);
	}
	int e = program_sigmask(how, kset ? &in : NULL, &out);
	if (e != 0) {
		errno = e;
		*rc = -1;
		return 1;
	}
	if (koset) {
		memcpy(&word, &out, sizeof word);
		memcpy(koset, &word, sizeof word);
	}
	*rc = 0;
	return 1;
}

struct mask_view process_mask_view(void)
{
	struct mask_view v = {view_current(), view_sig, view_kernel};
	return v;
}

void process_mask_inherit(struct mask_view v)
{
	view_bits = v.bits;
	view_sig = v.sig;
	view_kernel = v.kernel;
}

void process_mask_adopt(const sigset_t *mask)
{
	program_sigmask(SIG_SETMASK, mask, NULL);
}

/* A process's first thread inherits its mask across exec (and exec.c
 * gives a new program the mask the program set, view included): a
 * program spawned by a thread that blocked every signal started with the
 * sampling signal blocked, and was never sampled (posix_spawn with
 * POSIX_SPAWN_SETSIGMASK of a full set: its 0.3 CPU s all at
 * [unsampled]).  The mask found is taken as if the program had set it
 * through here. */
void process_mask_take_inherited(void)
{
	sigset_t cur;
	int sig = signal_sampling();
	if (sig && fault_raw_sigmask(SIG_BLOCK, NULL, &cur) == 0 && sigismember(&cur, sig))
		program_sigmask(SIG_SETMASK, &cur, NULL);
}

sigset_t process_mask_hidden(int sig)
{
	sigset_t h;
	sigemptyset(&h);
	view_current();
	if (sig && view_sig == sig && (view_bits & (1u << HIDE_SAMPLING)))
		sigaddset(&h, sig);
	if (view_bits & (1u << HIDE_SEGV))
		sigaddset(&h, SIGSEGV);
	if (view_bits & (1u << HIDE_BUS))
		sigaddset(&h, SIGBUS);
	return h;
}
