/*
 * handover.c - the signal samples arrive on: our handler for it, the
 * program's view of it, and handing it over to a program that wants it.
 *
 * While we sample on a signal, the kernel has dispatch() installed for it
 * and the program sees, through the interposed sigaction() (sigwrap.c),
 * the disposition it set itself: at first the one it had before we came
 * (cur.prog), later whatever it installs.  dispatch() sends our timers'
 * expiries to sample.c and everything else (a kill(), the program's own
 * ITIMER_PROF) to the program's disposition, as the kernel would have.
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
 * Both are guarded by the sigstate lock (fault.h), also taken by
 * dispatch() for the program's signals; changed only with the engine lock
 * held too.  Kernel dispositions are set through the public sigaction()
 * (signal_sigaction_internal()), so a sanitizer runtime that interposes
 * it sees our handler.
 */
#include "engine/sampling.h"
#include "engine/perf_engine.h"
#include "engine/engine.h"
#include "engine/restart.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <errno.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>

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

NO_TSAN static int has_handler(const struct sigaction *sa)
{
	return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

NO_TSAN static void dispatch(int sig, siginfo_t *info, void *uc);

/* Our disposition, on the program's stack choice.  Samples never make a
 * system call fail with EINTR (SA_RESTART).  Nothing may interrupt the
 * sampling handler but SIGSEGV and SIGBUS: fault.c must catch a write into
 * a buffer that went bad (the kernel kills a process whose fault signal
 * is blocked), and holds back those that kill(2) sends meanwhile.
 * SIGILL, SIGFPE and SIGTRAP stay blocked: the handler raises none, and a
 * program handler for one sent by kill(2) could otherwise interrupt ours
 * and leave by longjmp, stranding it (issue 9, item 8). */
NO_TSAN static void our_action(struct sigaction *sa, const struct sigaction *prog)
{
	memset(sa, 0, sizeof *sa);
	sa->sa_sigaction = dispatch;
	sa->sa_flags = SA_SIGINFO | SA_RESTART | (prog->sa_flags & SA_ONSTACK);
	sigfillset(&sa->sa_mask);
	sigdelset(&sa->sa_mask, SIGSEGV);
	sigdelset(&sa->sa_mask, SIGBUS);
}

NO_TSAN static struct view *view_of(int sig)
{
	return sig <= 0            ? NULL
	       : sig == cur.sig    ? &cur
	       : sig == next.sig   ? &next
	       : sig == linger.sig ? &linger
	                           : NULL;
}

/*
 * A SIGTRAP that is not ours (an int3, a kill) where the program left
 * the default: it must end the process with a core dump, as it would
 * have without us, not vanish.  The default is put back for a moment
 * and the signal raised again on this thread; a tracer may swallow it,
 * and then our disposition returns.
 */
NO_TSAN static void default_trap(int sig)
{
	struct sigaction dfl, ours;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	if (fault_real_sigaction(sig, &dfl, &ours) != 0)
		return;
	fault_real_sigmask(SIG_UNBLOCK, &one, NULL);
	syscall(SYS_tgkill, getpid(), (pid_t)syscall(SYS_gettid), sig);
	fault_real_sigmask(SIG_BLOCK, &one, NULL);
	fault_real_sigaction(sig, &ours, NULL);
}

/* A signal that is not our sample, delivered as the kernel would have
 * with the program's disposition (SIG_DFL too is dropped: while we hold
 * the signal, a stray one of ours must not kill the process). */
NO_TSAN static void deliver(int sig, siginfo_t *info, void *uc)
{
	int e = errno;
	sigset_t old;
	sigstate_lock(&old);
	struct view *v = view_of(sig);
	struct sigaction p;
	if (v)
		p = v->prog;
	if (v && has_handler(&p) && (p.sa_flags & SA_RESETHAND)) {
		v->prog.sa_handler = SIG_DFL; /* one-shot, as the kernel does */
		v->prog.sa_flags &= ~SA_SIGINFO;
	}
	sigstate_unlock(&old);
	if (v && sig == SIGTRAP && p.sa_handler == SIG_DFL && !(p.sa_flags & SA_SIGINFO)) {
		default_trap(sig);
		errno = e;
		return;
	}
	if (!v || !has_handler(&p)) {
		errno = e;
		return;
	}
	/* The mask their handler would have run with; our return
	 * (rt_sigreturn) restores the interrupted one afterwards. */
	sigset_t mask = ((ucontext_t *)uc)->uc_sigmask;
	sigorset(&mask, &mask, &p.sa_mask);
	if (!(p.sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	fault_real_sigmask(SIG_SETMASK, &mask, NULL);
	errno = e;
	if (p.sa_flags & SA_SIGINFO)
		p.sa_sigaction(sig, info, uc);
	else
		p.sa_handler(sig);
}

/*
 * Whether the interrupted thread's thread pointer is libc's.  Everything
 * below reads thread-local storage (errno, the handler's own state), at
 * fixed offsets from it.  A runtime can point it elsewhere: Go without
 * cgo sets %fs to its own per-thread block, on every thread, the main one
 * included, even when it is linked dynamically with libc (it was seen:
 * our first sample there wrote into Go's heap and the program died of
 * SIGSEGV).  glibc's block begins with a pointer to itself, repeated at
 * offset 16 (tcbhead_t: tcb, dtv, self); Go's holds zeros there.
 */
NO_TSAN static inline int libc_thread_pointer(void)
{
#if defined(__x86_64__)
	uintptr_t tcb, self;
	__asm__ volatile("movq %%fs:0, %0" : "=r"(tcb));
	__asm__ volatile("movq %%fs:16, %0" : "=r"(self));
	return tcb != 0 && tcb == self;
#else
	return 1;
#endif
}

NO_TSAN static void dispatch(int sig, siginfo_t *info, void *uc)
{
	if (!libc_thread_pointer()) {
		/* Neither a sample nor a program signal can be handled here
		 * without thread-local storage: dropped, and counted (the
		 * profil agent reports them as lost). */
		atomic_fetch_add_explicit(&profil_pstats.foreign, 1, memory_order_relaxed);
		return;
	}
#if defined(__SANITIZE_ADDRESS__)
	/* The kernel wrote *info and *uc on the stack below the interrupted
	 * frame, where ASan's shadow can still describe frames of earlier
	 * calls: once, in a fork child's new thread, it took the read of
	 * info->si_value for a stack overflow into a dead frame and died in
	 * its own CHECK describing it (make sanitize, safety_fork).  They are
	 * valid memory: say so before anything reads them. */
	__asan_unpoison_memory_region(info, sizeof *info);
	__asan_unpoison_memory_region(uc, sizeof(ucontext_t));
#endif
	/* Every delivery of this signal, a sample or not: our SA_RESTART may
	 * have swallowed the EINTR a program signal asked for (restart.h). */
	restart_give_back_eintr(uc, sig);
	if (timer_tag_ours(info) || perf_sig_ours(info)) {
		/* The sample path touches no errno, but a write it recovers
		 * from (a buffer unmapped under it) leaves by the fault
		 * handler's longjmp, past whatever restores errno around a
		 * signal handler: under TSan, its own handler's (make tsan
		 * reported "signal handler spoils errno" in
		 * gmon_keep_buffer_unmapped_at_stop, 4 runs in 60).  Here,
		 * with the thread pointer known to be libc's, errno is safe
		 * to save.  deliver() keeps its own, around the program's
		 * handler only. */
		int e = errno;
		sample_handler(sig, info, uc);
		if (lazy_helper_pending()) /* the helper, once safe (lazy_helper.c) */
			lazy_helper_sample(uc);
		errno = e;
	} else {
		deliver(sig, info, uc);
	}
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
		our_action(&ours, &was);
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
		struct view *v = view_of(sig);
		our_action(&sa, v ? &v->prog : &sa);
	}
	fault_real_sigaction(sig, &sa, NULL);
	if (!on && sig == atomic_load(&sampling)) /* ours again, maybe unwrapped */
		installed = fault_kernel_handler(sig);
	sigstate_unlock(&old);
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
		our_action(&ours, act); /* their SA_ONSTACK */
		if (fault_real_sigaction(sig, &ours, NULL) != 0)
			return -1;
		if (v == &cur) /* what the kernel shows now is ours */
			installed = fault_kernel_handler(sig);
		v->prog = *act;
		/* A handler where there was none: ask once for the move. */
		if (v == &cur && has_handler(act) && !has_handler(&out)) {
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
	if (signal_sigaction_internal(sig, NULL, &was) != 0 || has_handler(&was) ||
	    was.sa_handler == SIG_IGN)
		return -1;
	/* On the stack the program chose for the signal it takes from us. */
	struct sigaction stack_choice = was;
	stack_choice.sa_flags |= cur.prog.sa_flags & SA_ONSTACK;
	our_action(&ours, &stack_choice);
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
		if (has_handler(&cur.prog)) /* taken meanwhile: move again */
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
 * free signal, as when it installs a handler through sigaction(), with
 * that handler's stack choice (Go's handlers ask for the alternate signal
 * stack: a goroutine's own is too small for ours).  Fault signals taken
 * the same way are taken back first (fault.c), so no sample runs without
 * recovery.  If no signal is free, or recovery cannot be put back,
 * sampling on it ends: returns 1 and the caller deletes the timers
 * (engine_signal_taken()); the program keeps the handler it set.
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
