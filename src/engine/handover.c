/*
 * handover.c - the signal samples arrive on: installing our handler for
 * it, the program's view of it, and handing it over to a program that
 * wants it.
 *
 * While we sample on a signal, the kernel has dispatch() (dispatch.c)
 * installed for it and the program sees, through the interposed
 * sigaction() (sigwrap.c), the disposition it set itself: at first the
 * one it had before we came (cur.prog), later whatever it installs.
 * dispatch() sends our timers' expiries to sample.c and everything else
 * (a kill(), the program's own ITIMER_PROF) to the program's disposition,
 * as the kernel would have.
 * So a program that takes the signal loses nothing, even before the
 * samples have moved away, and even if they cannot move (no free
 * signal): then both share it for good, and stop gives it back.
 *
 * A program that installs a handler asks for the samples to move to
 * another free signal (signal_settle()).  The interposer only records the
 * request and wakes the sweeper, because moving the timers allocates and
 * takes the engine lock, and sigaction() must stay async-signal-safe.
 * The sweeper, profil_get_stats() and every start carry it out.
 *
 * State: cur (the signal in use) and next (the one being moved to, for
 * the moment the timers are made on it), each with the program's view.
 * Both are guarded by the sigstate lock (fault.c), also taken by
 * dispatch() for the program's signals; changed only with the engine lock
 * held too.  Kernel dispositions are set through the public sigaction()
 * (signal_sigaction_internal()), so a sanitizer runtime that interposes
 * it sees our handler.
 */
#include "engine/engine_int.h"

#include <errno.h>
#include <string.h>

/* Nonzero while this thread sets one of our own dispositions (sigwrap.c
 * then passes the call straight to libc).  Not static: glibc declares
 * sigaction() leaf (__THROW), so GCC may drop the stores around the call
 * to a variable that does not escape this file (it did: a tail call). */
__thread int signal_internal __attribute__((tls_model("initial-exec")));

int signal_sigaction_internal(int sig, const struct sigaction *act, struct sigaction *oact)
{
	signal_internal++;
	int rc = sigaction(sig, act, oact);
	signal_internal--;
	return rc;
}


struct view {
	int sig;                /* 0: none */
	struct sigaction prog;  /* the program's disposition of sig */
};

static struct view cur, next;  /* sigstate lock */
/* SIGTRAP after a run that sampled on it: a trap its events queued as
 * task work on a thread in the kernel still arrives after they are
 * closed (perf_trap.c), and would kill a program whose disposition is
 * the default.  So dispatch() stays installed, with the program's view,
 * until exec; the next run on SIGTRAP takes it over.  Sigstate lock. */
static struct view linger;
static _Atomic int sampling;    /* cur.sig, read without the lock */
static _Atomic int wanted;      /* the program installed a handler on cur */
/* The handler the kernel showed for cur.sig right after we last set it
 * ourselves (dispatch, or a sanitizer's wrapper of it: TSan wraps what
 * goes through the public sigaction(), not what goes through libc's own,
 * so it must be read back after every write of ours), and the signal a program
 * took behind our back when no other was free (signal_check_taken()).
 * Sigstate lock, and atomic too: that lock is a spin on an atomic_flag
 * taken in code TSan does not instrument (NO_TSAN), so it cannot see it;
 * lost is read by the agent without it. */
static _Atomic(void *) installed;
static _Atomic int lost;
static _Atomic int ignoring; /* exec.c set SIG_IGN on it for a moment */

NO_TSAN int signal_sampling(void)
{
	return atomic_load(&sampling);
}

NO_TSAN static struct view *view_of(int sig)
{
	return sig <= 0            ? NULL
	       : sig == cur.sig    ? &cur
	       : sig == next.sig   ? &next
	       : sig == linger.sig ? &linger
	                           : NULL;
}

/* For deliver() (dispatch.c): the program's disposition of sig, a signal
 * whose disposition is ours, into *p; 0 if sig is none of ours.  A
 * one-shot handler (SA_RESETHAND) is reset to the default for next time,
 * as the kernel does. */
NO_TSAN int signal_program_action(int sig, struct sigaction *p)
{
	sigset_t old;
	sigstate_lock(&old);
	struct view *v = view_of(sig);
	if (v) {
		*p = v->prog;
		if (signal_has_handler(p) && (p->sa_flags & SA_RESETHAND)) {
			v->prog.sa_handler = SIG_DFL;
			v->prog.sa_flags &= ~SA_SIGINFO;
		}
	}
	sigstate_unlock(&old);
	return v != NULL;
}

int signal_install(int sig)
{
	struct sigaction ours, was;
	sigset_t old;
	sigstate_lock(&old);
	int rc = signal_sigaction_internal(sig, NULL, &was);
	if (rc == 0 && linger.sig == sig) { /* dispatch() is still there */
		was = linger.prog;
		linger.sig = 0;
	}
	if (rc == 0) {
		signal_our_action(&ours);
		rc = signal_sigaction_internal(sig, &ours, NULL);
	}
	if (rc == 0) {
		cur.sig = sig;
		cur.prog = was;
		installed = fault_kernel_handler(sig);
		atomic_store(&sampling, sig);
		atomic_store(&wanted, 0);
		atomic_store(&lost, 0);
	}
	int e = errno;
	sigstate_unlock(&old);
	errno = e;
	return rc;
}

/* Gives sig back to the program: SIG_IGN first, which discards every
 * pending instance in every thread (POSIX), then its own disposition.
 * Sigstate lock held; the timers for sig are gone. */
static void give_back(int sig, const struct sigaction *prog)
{
	struct sigaction ign;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	signal_sigaction_internal(sig, &ign, NULL);
	signal_sigaction_internal(sig, prog, NULL);
}

/* Called after every timer is deleted, so nothing generates the signal any
 * more, and no handler is still sampling (engine.c drained them). */
void signal_restore(void)
{
	sigset_t old;
	int e = errno;
	sigstate_lock(&old);
	if (cur.sig == SIGTRAP)
		linger = cur; /* see its declaration */
	else if (cur.sig)
		give_back(cur.sig, &cur.prog);
	cur.sig = 0;
	atomic_store(&sampling, 0);
	atomic_store(&wanted, 0);
	sigstate_unlock(&old);
	errno = e;
}

/* exec.c, from a signal handler that interrupted our own code: sig set to
 * SIG_IGN (discards what is pending; survives exec), or back to ours. */
void signal_ignore(int sig, int on)
{
	struct sigaction sa;
	sigset_t old;
	sigstate_lock(&old);
	ignoring = on;
	if (on) {
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = SIG_IGN;
		sigemptyset(&sa.sa_mask);
	} else {
		signal_our_action(&sa);
	}
	fault_real_sigaction(sig, &sa, NULL);
	if (!on && sig == atomic_load(&sampling)) /* ours again, maybe unwrapped */
		installed = fault_kernel_handler(sig);
	sigstate_unlock(&old);
}

/* A vfork child (our memory, a disposition table of its own) about to
 * exec: each of our signals the program ignores is set ignored in the
 * child's table, so the new program finds it ignored, as without us (a
 * shell that ignored SIGTRAP ran its commands with it at the default:
 * dash starts them by vfork).  Without the lock, which the parent's
 * other threads may hold while this child runs, and writing none of our
 * memory: a view read while another thread changes it is the risk,
 * taken for a moment's exec. */
NO_TSAN void signal_ignore_for_vfork_exec(void)
{
	const struct view *views[] = {&cur, &next, &linger};
	struct sigaction ign;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
		struct view v = *views[i];
		if (v.sig > 0 && !(v.prog.sa_flags & SA_SIGINFO) && v.prog.sa_handler == SIG_IGN)
			fault_real_sigaction(v.sig, &ign, NULL);
	}
}

int signal_program_ignores(int sig)
{
	sigset_t old;
	sigstate_lock(&old);
	struct view *v = view_of(sig);
	int ign = v && !(v->prog.sa_flags & SA_SIGINFO) && v->prog.sa_handler == SIG_IGN;
	sigstate_unlock(&old);
	return ign;
}

int signal_owns_locked(int sig)
{
	return view_of(sig) != NULL;
}

int signal_user_sigaction_locked(int sig, const struct sigaction *act, struct sigaction *oact)
{
	struct view *v = view_of(sig);
	struct sigaction out = v->prog;
	if (act) {
		struct sigaction ours;
		signal_our_action(&ours);
		if (fault_real_sigaction(sig, &ours, NULL) != 0)
			return -1;
		if (v == &cur) /* what the kernel shows now is ours */
			installed = fault_kernel_handler(sig);
		v->prog = *act;
		/* A handler where there was none: ask once for the move. */
		if (v == &cur && signal_has_handler(act) && !signal_has_handler(&out)) {
			atomic_store(&wanted, 1);
			sweeper_wake();
		}
	}
	if (oact)
		*oact = out;
	return 0;
}

/* Claims sig as the next signal if it is still free; sigstate lock. */
static int claim(int sig)
{
	struct sigaction was, ours;
	if (signal_sigaction_internal(sig, NULL, &was) != 0 || signal_has_handler(&was) ||
	    was.sa_handler == SIG_IGN)
		return -1;
	signal_our_action(&ours);
	if (signal_sigaction_internal(sig, &ours, NULL) != 0)
		return -1;
	next.sig = sig;
	next.prog = was;
	return 0;
}

/*
 * Moves the samples off a signal the program installed a handler on:
 * claims a free signal, moves every timer to it (all or nothing), then
 * gives the old one back with the program's disposition.  If anything
 * fails the signal stays shared (see the header).  Engine lock held.
 */
void signal_settle(void)
{
	if (!atomic_load(&wanted) || !cur.sig)
		return;
	atomic_store(&wanted, 0);
	if (cur.sig == SIGTRAP)
		return; /* sigtrap events cannot move: shared for good */
	int from = cur.sig;
	int to = signal_free_rt(from);
	if (to < 0)
		return;
	sigset_t old;
	sigstate_lock(&old);
	int rc = claim(to);
	sigstate_unlock(&old);
	if (rc != 0)
		return;
	rc = timers_resignal(to);
	sigstate_lock(&old);
	if (rc != 0) {
		signal_sigaction_internal(to, &next.prog, NULL);
	} else {
		give_back(from, &cur.prog);
		cur = next;
		installed = fault_kernel_handler(to);
		atomic_store(&sampling, to);
		if (signal_has_handler(&cur.prog)) /* taken meanwhile: move again */
			atomic_store(&wanted, 1);
	}
	next.sig = 0;
	sigstate_unlock(&old);
}

/*
 * A program can set a disposition without our sigaction(): a raw
 * rt_sigaction system call, as Go's runtime makes for every signal at
 * start.  Our handler is then gone from the kernel, our samples go to the
 * program's handler and nothing is sampled.  The sweeper asks here on
 * every sweep (engine lock held) whether the kernel still shows what it
 * showed after our install; if not, the program owns the signal: its
 * disposition becomes the one we keep for it and the samples move to a
 * free signal, as when it installs a handler through sigaction() (our
 * handler there too on the alternate signal stack, which Go sets on its
 * threads: a goroutine's own stack is too small for ours).  Fault
 * signals taken the same way are taken back first (fault.c), so no
 * sample runs without recovery.  If no signal is free, or recovery
 * cannot be put back, sampling on it ends: returns 1 and the caller
 * deletes the timers (engine_signal_taken()); the program keeps the
 * handler it set.
 */
/* Under the sigstate lock, which TSan cannot see (a spin on an
 * atomic_flag in NO_TSAN code): so are these, as deliver() is.  Whether
 * the kernel's handler for from is no longer ours; if so, what it is
 * becomes the program's disposition. */
NO_TSAN static int kernel_took(int from)
{
	sigset_t old;
	sigstate_lock(&old);
	struct sigaction k;
	int taken = !atomic_load(&ignoring) && fault_real_sigaction(from, NULL, &k) == 0 &&
	            fault_action_handler(&k) != atomic_load(&installed);
	if (taken)
		cur.prog = k;
	sigstate_unlock(&old);
	return taken;
}

NO_TSAN static void stop_sampling_on(int from)
{
	sigset_t old;
	sigstate_lock(&old);
	cur.sig = 0;
	atomic_store(&sampling, 0);
	atomic_store(&wanted, 0);
	atomic_store(&lost, from);
	sigstate_unlock(&old);
}

int signal_check_taken(void)
{
	int from = cur.sig; /* changed only with the engine lock, held here */
	if (!from)
		return 0;
	int faults = fault_retake() != 0;
	if (!kernel_took(from) && !faults)
		return 0;
	if (!faults) {
		atomic_store(&wanted, 1);
		signal_settle();
		if (cur.sig != from)
			return 0; /* moved: sampling goes on */
	}
	stop_sampling_on(from);
	return 1;
}

int signal_lost(void)
{
	return atomic_load(&lost);
}
