/*
 * fault.c - a buffer that stops being writable while it is published.
 *
 * A caller may unmap or mprotect a buffer that profiling writes into.  The
 * next sample's write then raises SIGSEGV (or SIGBUS, for a truncated file
 * mapping) inside sample.c's handler.  While profiling is on we own both
 * signals: the handler below recognises a fault raised while this thread
 * has sample_writing set, and __builtin_longjmp's back to the recovery
 * point sample_write.c armed around the write, which then withdraws the
 * table, and the sweeper stops the timers (engine_reap()).  Any other
 * fault belongs to the program and is passed on exactly as the kernel
 * would have delivered it (chain()).
 *
 * Why jumping out of a signal handler is safe here:
 *   - Only our own code is left: the fault happened between setjmp and
 *     the end of sample_record() (sample_write.c), which holds no lock
 *     and has no state a jump could tear (the counters are single atomic
 *     words).
 *   - The signal mask: entering our handler blocks SIGSEGV and SIGBUS
 *     (its sa_mask), so signals kill(2) sends in a stream cannot nest it
 *     without bound (with SA_NODEFER they did, until the stack overflowed).
 *     __builtin_longjmp does not touch the mask, so before jumping we set
 *     it to the interrupted context's (uc_sigmask: the sampling handler's,
 *     which leaves the fault signals deliverable), as rt_sigreturn would
 *     have; the sampling handler's own return then restores the program's
 *     mask exactly.  A later fault is therefore never blocked (the kernel
 *     kills a process whose blocked SIGSEGV is forced).
 *   - The stack: the jump target is a frame below us on the same stack,
 *     or, with SA_ONSTACK and a sigaltstack, on the stack we were called
 *     from; the kernel decides whether the alternate stack is in use from
 *     the stack pointer, so abandoning our frame there frees it.
 *   - Cost: nothing on the sampling path but sample_write.c's inline setjmp.
 *
 * The program's own handlers: its disposition of SIGSEGV/SIGBUS at the
 * moment profiling started is saved in prev[], and sigwrap.c routes the
 * program's later sigaction()/signal() calls for these two signals here,
 * so ours stays installed, theirs is recorded, and they read back what
 * they set.  All of that state is guarded by the sigstate lock (engine.h),
 * a spin lock taken with every signal blocked, because sigaction() is
 * async-signal-safe and may be called from any handler on any thread.
 *
 * A signal sent by kill() while the program ignores it is dropped, as the
 * kernel would have; our handler stays, so a later fault in a buffer is
 * still recovered.
 */
#include "engine/sampling.h"
#include "engine/engine_int.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>

#define NSIG_OWNED 2
static const int owned[NSIG_OWNED] = {SIGSEGV, SIGBUS};

/* All fields below: guarded by `spin` (the sigstate lock).  prev[i] is
 * the program's disposition of owned[i]; on[i] is nonzero while our
 * handler is the one installed in the kernel for owned[i]. */
static atomic_flag spin = ATOMIC_FLAG_INIT;
static struct sigaction prev[NSIG_OWNED];
static int on[NSIG_OWNED];
/* What the kernel showed for owned[i] right after we installed ours
 * (atomic: fault_retake() reads it in code TSan sees, the lock it holds
 * is invisible to TSan). */
static _Atomic(void *) installed[NSIG_OWNED];

void *fault_action_handler(const struct sigaction *k)
{
	return (k->sa_flags & SA_SIGINFO) ? (void *)k->sa_sigaction : (void *)k->sa_handler;
}

void *fault_kernel_handler(int sig)
{
	struct sigaction k;
	if (fault_real_sigaction(sig, NULL, &k) != 0)
		return NULL;
	return fault_action_handler(&k);
}
/* The process whose state this is (sigstate_mine()): set when profiling
 * installs anything, and in a fork child.  Atomic. */
static _Atomic pid_t state_pid;

/* getpid() by system call: in a vfork child, nothing cached in the
 * memory it shares with its parent can be trusted. */
NO_TSAN static pid_t raw_getpid(void)
{
	return (pid_t)syscall(SYS_getpid);
}

int sigstate_mine(void)
{
	pid_t p = atomic_load(&state_pid);
	return p != 0 && p == raw_getpid();
}

NO_TSAN static int slot_of(int sig)
{
	return sig == SIGSEGV ? 0 : sig == SIGBUS ? 1 : -1;
}

/* Set by a thread that blocks every signal for its whole life (the
 * helper, sweeper.c, which takes this lock several times a sweep): it
 * need not block them again, two system calls each time. */
static __thread int blocks_all __attribute__((tls_model("initial-exec")));

void sigstate_thread_blocks_all(void)
{
	blocks_all = 1;
}

/* Block every signal on this thread, then take the spin lock: no handler
 * can interrupt the holder, so the holder is never waiting on itself. */
void sigstate_lock(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	if (blocks_all)
		*old = all;
	else
		fault_real_sigmask(SIG_SETMASK, &all, old);
	while (atomic_flag_test_and_set_explicit(&spin, memory_order_acquire))
		sched_yield();
}

void sigstate_unlock(const sigset_t *old)
{
	atomic_flag_clear_explicit(&spin, memory_order_release);
	if (!blocks_all)
		fault_real_sigmask(SIG_SETMASK, old, NULL);
}

NO_TSAN static void handler(int sig, siginfo_t *info, void *uc);

/* Our disposition for slot i, with the program's choice of stack and of
 * restarting system calls (what a chained handler would have had).  Both
 * fault signals blocked while it runs (see the top of this file). */
NO_TSAN static int install_ours(int i)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | (prev[i].sa_flags & (SA_ONSTACK | SA_RESTART));
	sigemptyset(&sa.sa_mask);
	for (int k = 0; k < NSIG_OWNED; k++)
		sigaddset(&sa.sa_mask, owned[k]);
	if (fault_real_sigaction(owned[i], &sa, NULL) != 0)
		return -1;
	installed[i] = fault_kernel_handler(owned[i]);
	return 0;
}

/* A program can replace our handler of a fault signal without
 * sigaction() (a raw rt_sigaction system call: Go's runtime does it for
 * every signal at start), and recovery from a faulting write is gone.
 * The sweeper asks here every sweep (handover.c, signal_check_taken()):
 * what the program installed becomes its disposition, as if it had
 * called sigaction(), and ours goes back in front of it, on its stack
 * choice, passing its faults on (Go's nil checks go through it).  Returns
 * -1 if ours could not be put back (the sweeper then ends sampling). */
NO_TSAN int fault_retake(void)
{
	sigset_t old;
	sigstate_lock(&old);
	int rc = 0;
	for (int i = 0; i < NSIG_OWNED; i++) {
		struct sigaction k;
		if (!on[i] || fault_kernel_handler(owned[i]) == installed[i] ||
		    fault_real_sigaction(owned[i], NULL, &k) != 0)
			continue;
		struct sigaction was = prev[i];
		prev[i] = k;
		if (install_ours(i) != 0) {
			prev[i] = was;
			on[i] = 0; /* theirs now: stop must not restore over it */
			rc = -1;
		}
	}
	sigstate_unlock(&old);
	return rc;
}

/* The mask to leave our handler with when not by returning: the one
 * rt_sigreturn would restore, plus `also` if nonzero. */
NO_TSAN static void leave_mask(const void *ucontext, int also)
{
	sigset_t m = ((const ucontext_t *)ucontext)->uc_sigmask;
	if (also)
		sigaddset(&m, also);
	fault_real_sigmask(SIG_SETMASK, &m, NULL);
}

/* Called by a program handler's fault: deliver it as the kernel would
 * have with the program's disposition.  Returns after a handler ran, or
 * after restoring SIG_DFL/SIG_IGN so that the faulting instruction, run
 * again, takes the program's default action (core dump) itself. */
NO_TSAN static void chain(int sig, siginfo_t *info, void *uc)
{
	int i = slot_of(sig);
	sigset_t old;
	sigstate_lock(&old);
	struct sigaction p = prev[i];
	int sent = info->si_code <= 0;
	if (sent && p.sa_handler == SIG_IGN && !(p.sa_flags & SA_SIGINFO)) {
		/* kill() of an ignored signal: the kernel would have dropped
		 * it.  Ours stays installed for the buffers' sake. */
		sigstate_unlock(&old);
		return;
	}
	int direct = p.sa_handler == SIG_DFL || p.sa_handler == SIG_IGN;
	if (direct) {
		fault_real_sigaction(sig, &p, NULL);
		on[i] = 0;
	} else if (p.sa_flags & SA_RESETHAND) {
		prev[i].sa_handler = SIG_DFL; /* one-shot, as the kernel does */
		prev[i].sa_flags &= ~SA_SIGINFO;
	}
	sigstate_unlock(&old);
	if (direct) {
		/* A sent (not raised-by-fault) signal does not come back by
		 * itself: send it again now that the disposition is theirs. */
		if (sent)
			raise(sig);
		return;
	}
	/* The mask their handler would have run with: the interrupted one,
	 * its sa_mask, and the signal unless SA_NODEFER (ours blocked both
	 * fault signals).  Our return (rt_sigreturn) restores the
	 * interrupted mask afterwards. */
	sigset_t mask = ((ucontext_t *)uc)->uc_sigmask;
	sigorset(&mask, &mask, &p.sa_mask);
	if (!(p.sa_flags & SA_NODEFER))
		sigaddset(&mask, sig);
	else
		sigdelset(&mask, sig);
	fault_real_sigmask(SIG_SETMASK, &mask, NULL);
	if (p.sa_flags & SA_SIGINFO)
		p.sa_sigaction(sig, info, uc);
	else
		p.sa_handler(sig);
}

/*
 * A SIGSEGV or SIGBUS sent (kill, raise, sigqueue) while this thread runs
 * the sampling handler.  Running the program's handler now would let it
 * leave by longjmp, stranding our handler between its in-flight increment
 * and decrement, and the next stop would wait for ever.  So the signal is
 * queued again and kept blocked until the sampling handler returns (its
 * sigreturn restores the program's mask, and the signal is delivered to
 * the program then), and the sample gives up writing: with the signal
 * blocked a fault could no longer be recovered.  The same, without the
 * sample's part, for one that lands on the alternate stack (below).
 */
NO_TSAN static void defer_sent(int sig, siginfo_t *info, void *ucontext)
{
	ucontext_t *uc = ucontext;
	leave_mask(uc, sig);             /* if we jump out below */
	sigaddset(&uc->uc_sigmask, sig); /* if we return */
	syscall(SYS_rt_tgsigqueueinfo, getpid(), (pid_t)syscall(SYS_gettid), sig, info);
	if (!sample_active)
		return;
	sample_abandon = 1;
	if (sample_writing)
		__builtin_longjmp(sample_recover, 1);
}

/*
 * Whether the interrupted code ran on the thread's alternate signal stack:
 * its stack pointer within the stack the ucontext's uc_stack describes
 * (the kernel's copy of the thread's stack_t; its ss_flags say only
 * whether one is set, not whether it is in use).  The sampling handler
 * runs there when the thread has one (dispatch.c), and a sent signal that
 * lands in it outside sample_active (dispatch()'s first and last
 * instructions, the event's weighing, the lazy helper's try, the
 * kernel's return trampoline) would run the program's handler nested on
 * that stack, above our frames: where the program did not ask for it, in
 * what room is left, and a handler leaving by siglongjmp there made
 * ASan's stack unpoisoning read /proc/self/maps under a lock, which the
 * next such signal deadlocked on (masked_handler_left_by_longjmp under
 * make sanitize).  Held back the same way, it reaches the program when
 * the handler it interrupted returns: for ours, on the program's own
 * stack, as without us; for a handler of the program's that runs on the
 * alternate stack, a moment later.
 */
NO_TSAN static int interrupted_on_alt_stack(const void *ucontext)
{
	const ucontext_t *uc = ucontext;
#if defined(__x86_64__)
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.sp;
#else
	uintptr_t sp = 0;
#endif
	return signal_alt_below(ucontext, sp) != SIZE_MAX;
}

NO_TSAN static void handler(int sig, siginfo_t *info, void *uc)
{
	/* si_code > 0: raised by the kernel for this instruction, not sent. */
	if (sample_writing && info->si_code > 0) {
		leave_mask(uc, 0);
		__builtin_longjmp(sample_recover, 1);
	}
	if (info->si_code <= 0 && (sample_active || interrupted_on_alt_stack(uc))) {
		defer_sent(sig, info, uc);
		return;
	}
	chain(sig, info, uc);
}

/* Held across fork (fork.c), so the child never inherits a half-written
 * prev[].  fork_mask: the forking thread's mask, under the lock. */
static sigset_t fork_mask;

void fault_atfork_prepare(void)
{
	sigstate_lock(&fork_mask);
}

void fault_atfork_parent(void)
{
	sigstate_unlock(&fork_mask);
}

void fault_atfork_child(void)
{
	atomic_store(&state_pid, raw_getpid());
	sigstate_unlock(&fork_mask);
}

int fault_install(void)
{
	sigset_t old;
	int rc = 0;
	sigstate_lock(&old);
	atomic_store(&state_pid, raw_getpid());
	for (int i = 0; i < NSIG_OWNED && rc == 0; i++) {
		if (on[i])
			continue;
		if (fault_real_sigaction(owned[i], NULL, &prev[i]) != 0 || install_ours(i) != 0)
			rc = -1;
		else
			on[i] = 1;
	}
	int e = errno;
	sigstate_unlock(&old);
	if (rc != 0)
		fault_uninstall();
	errno = e;
	return rc;
}

void fault_uninstall(void)
{
	sigset_t old;
	int e = errno;
	sigstate_lock(&old);
	for (int i = 0; i < NSIG_OWNED; i++) {
		if (on[i])
			fault_real_sigaction(owned[i], &prev[i], NULL);
		on[i] = 0;
	}
	sigstate_unlock(&old);
	errno = e;
}

int fault_owns(int sig)
{
	int i = slot_of(sig);
	return i >= 0 && on[i];
}

int fault_user_sigaction_locked(int sig, const struct sigaction *act, struct sigaction *oact)
{
	int i = slot_of(sig);
	struct sigaction out = prev[i];
	if (act) {
		prev[i] = *act;
		if (install_ours(i) != 0) { /* follows their SA_ONSTACK */
			prev[i] = out;
			return -1;
		}
	}
	if (oact)
		*oact = out;
	return 0;
}
