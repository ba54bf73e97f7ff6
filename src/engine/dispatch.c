/*
 * dispatch.c - what runs when the sampling signal arrives: our handler,
 * dispatch(), installed for it (handover.c says when), sends our timers'
 * and events' expiries to sample.c and everything else (a kill(), the
 * program's own ITIMER_PROF) to the program's disposition of the signal,
 * as the kernel would have.
 *
 * Signal context.  Unlike sample.c, a program signal here runs the
 * program's handler, so this file is not held to sample.c's contract; it
 * takes the sigstate lock (fault.c: a spin with every signal blocked)
 * only to read the program's view (signal_program_action(), handover.c).
 */
#include "engine/sampling.h"
#include "engine/perf_engine.h"
#include "engine/engine_int.h"
#include "engine/restart.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>

NO_TSAN static void dispatch(int sig, siginfo_t *info, void *uc);

NO_TSAN int signal_has_handler(const struct sigaction *sa)
{
	return sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN;
}

/* Our disposition.  On the thread's alternate signal stack when it has
 * one (SA_ONSTACK, whatever the program chose for the signal): a thread
 * may be running on a stack too small for the kernel's signal frame and
 * the handler's walk, and an alternate stack is how a program says so.
 * Go runs C-called code on a 4 KiB goroutine stack with nothing mapped
 * below it, sets a 32 KiB alternate stack on every thread that runs Go,
 * and asks every handler for SA_ONSTACK; without it a sample there wrote
 * into Go's heap (test/rec/rec-smallstack.c).  On a thread without one,
 * SA_ONSTACK changes nothing.  A program signal passed on (deliver())
 * runs its handler there too, asked or not: while the program's handler
 * and our samples share the signal, until the samples move.  Samples
 * never make a system call fail with EINTR (SA_RESTART).  Nothing may interrupt the
 * sampling handler but SIGSEGV and SIGBUS: fault.c must catch a write into
 * a buffer that went bad (the kernel kills a process whose fault signal
 * is blocked), and holds back those that kill(2) sends meanwhile.
 * SIGILL, SIGFPE and SIGTRAP stay blocked: the handler raises none, and a
 * program handler for one sent by kill(2) could otherwise interrupt ours
 * and leave by longjmp, stranding it (issue 9, item 8). */
/*
 * Except under valgrind (3.19, Debian 12's): its signal delivery never
 * grows a thread's stack for the frame of a handler with SA_ONSTACK, even
 * on a thread without an alternate stack, where the frame goes on the
 * thread's own (ML_(sf_maybe_extend_stack) tests the handler's flag, not
 * the stack it chose): a sample in a main thread whose stack had yet to
 * grow that far killed it ("Can't extend stack ... during signal
 * delivery", make valgrind-unit, multirange_sprofil_errors).  Asked once,
 * at the first install (not in a handler).
 */
static int onstack_flag = -1;

NO_TSAN static int our_stack_flag(void)
{
	if (onstack_flag < 0) {
		onstack_flag = engine_under_valgrind() ? 0 : SA_ONSTACK;
	}
	return onstack_flag;
}

NO_TSAN void signal_our_action(struct sigaction *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sa_sigaction = dispatch;
	sa->sa_flags = SA_SIGINFO | SA_RESTART | our_stack_flag();
	sigfillset(&sa->sa_mask);
	sigdelset(&sa->sa_mask, SIGSEGV);
	sigdelset(&sa->sa_mask, SIGBUS);
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
	struct sigaction p;
	int v = signal_program_action(sig, &p);
	if (v && sig == SIGTRAP && p.sa_handler == SIG_DFL && !(p.sa_flags & SA_SIGINFO)) {
		default_trap(sig);
		errno = e;
		return;
	}
	if (!v || !signal_has_handler(&p)) {
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

/* What the sample path needs below dispatch()'s frame: 1.6 KiB measured
 * with a walk of a few frames (test/rec/rec-smallstack.c: its alternate
 * stack's deepest write, less the kernel's frame, 2.9 KiB on a CPU with
 * AVX-512), twice that for margin.  The walk writes its frames straight
 * into the ring, so a deeper stack costs no more (sample_write.c). */
#define SAMPLE_STACK_ROOM 3072

/* The bytes of the thread's alternate signal stack below addr when addr
 * lies on it; SIZE_MAX when it does not, or the thread has none.  uc_stack
 * is the kernel's copy of the thread's stack_t (its ss_flags never say
 * SS_ONSTACK: only SS_DISABLE tells), and "on it" is the kernel's own
 * test, on_sig_stack(): a stack that grows down owns its top address and
 * not its lowest.  Both users of the question ask it here, with one bound:
 * the room a sample has (signal_alt_room()) and whether a sent fault
 * interrupted a handler running there (fault.c). */
NO_TSAN size_t signal_alt_below(const void *ucontext, uintptr_t addr)
{
	const stack_t *ss = &((const ucontext_t *)ucontext)->uc_stack;
	uintptr_t lo = (uintptr_t)ss->ss_sp;
	if ((ss->ss_flags & SS_DISABLE) || addr <= lo || addr - lo > ss->ss_size)
		return SIZE_MAX;
	return addr - lo;
}

/* The bytes left below the caller's frame when this handler runs on the
 * alternate signal stack; SIZE_MAX on any other.  Not inlined, so the
 * frame measured is one below the caller's: the margin errs safe. */
NO_TSAN __attribute__((noinline)) size_t signal_alt_room(const void *ucontext)
{
	return signal_alt_below(ucontext, (uintptr_t)__builtin_frame_address(0));
}

NO_TSAN int engine_signal_is_sample(const siginfo_t *si)
{
	return timer_tag_ours(si) || perf_sig_ours(si);
}

NO_TSAN static void dispatch(int sig, siginfo_t *info, void *uc)
{
	if (!libc_thread_pointer()) {
		/* Neither a sample nor a program signal can be handled here
		 * without thread-local storage: dropped, and counted (the
		 * agent's helper reports them as lost at its sweep). */
		atomic_fetch_add_explicit(&profil_pstats.dropped, 1, memory_order_relaxed);
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
	if (engine_signal_is_sample(info)) {
		if (signal_alt_room(uc) < SAMPLE_STACK_ROOM) {
			/* A program's alternate stack too small for a sample
			 * beside the kernel's frame: writing on would overflow
			 * it into whatever lies below.  Counted in
			 * profil_pstats.dropped: the agent's helper reports the
			 * count as lost at its next sweep; without a helper, the
			 * time shows at [unsampled] in a recording. */
			atomic_fetch_add_explicit(&profil_pstats.dropped, 1,
			                          memory_order_relaxed);
			return;
		}
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
