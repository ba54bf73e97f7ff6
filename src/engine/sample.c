/*
 * sample.c - the sampling signal handler.  Everything that runs in signal
 * context lives in this file and in sample_write.c, its writers into the
 * published table (counters, pcsample slots, ring records), and
 * sample_records.c (a ring's other records), which are held to the same
 * contract and checked the same way.
 *
 * CONTRACT (checked mechanically: `make check-handler` fails if this
 * object, sample_write.o or sample_records.o, references any undefined
 * symbol outside tools/handler-allow.txt)
 *
 *   May call:  nothing.  Only compiler atomics (inline lock-prefixed
 *              instructions), arithmetic, and __builtin_setjmp (inline).
 *              No libc, no locks, no allocation.  System calls made
 *              inline (perf_trap_syscall2/3(): no libc, so no errno):
 *              a perf event's sample reads its thread's CPU clock to
 *              learn its weight; while the run is on perf events every
 *              SWITCH_WATCH_EVERY-th sample of a thread reads its
 *              rusage (RUSAGE_THREAD) and its clock (switch_watch()),
 *              and a thread's first wish for a timer, or a walk that
 *              failed at unknown code inside dlopen() (once a mark),
 *              wakes the sweeper (FUTEX_WAKE on sweeper_wakes).  All
 *              three are on the
 *              agent's seccomp lists (agent/filtercheck.c).  errno is
 *              preserved without saving it: nothing here can set it.
 *   Reads:     perf_fd_state[].tid (atomic slots, engine_int.h) to recognise
 *              our perf events' signals (si_code POLL_IN, si_fd; or
 *              SIGTRAP, TRAP_PERF, sig_data); perf_trap_period;
 *              profil_published, a pointer to an IMMUTABLE struct ptable
 *              that engine_publish() swaps atomically (its atomic pcnext
 *              aside); profil_pstats (atomic counters); sample_epoch;
 *              sample_in_fork_start, sample_in_fork_return,
 *              sample_in_dlopen (this thread's own flags, engine.h) and sample_fork_pc
 *              (written once, before any fork it matters for);
 *              switch_watch_on (atomic, switchwatch.h).
 *              For a ring table that wants stacks: unwind_published
 *              (IMMUTABLE, retired by the same handshake), the
 *              interrupted stack and the interrupted registers (the
 *              signal's ucontext, in place), read by unwind.c under
 *              this contract.
 *              sample_walk_whole() reads the same, after a sample, for
 *              lazy_helper.c (which is not bound by this contract).
 *   Writes:    perf_fd_state[].base of the event that signalled (only
 *              ever by its own thread's handler once it is enabled);
 *              the caller's counters (atomic, saturating), pcsample
 *              slots, or records into a sample ring (ring.h: space
 *              reserved by compare-and-swap, committed by a release
 *              store, never waiting for the reader); profil_pstats;
 *              profil_inflight; this thread's fault-recovery slot and
 *              its tally (sample_self: plain stores, the thread's own);
 *              its last look at its switches (watch_self, likewise),
 *              sample_in_dlopen's mark for a dlopen left to glibc
 *              (its own flag, engine.h),
 *              sample_load_wake (compare-and-swap, engine_int.h) and
 *              a wish in switch_wishes[] (compare-and-swap into a free
 *              slot; the sweeper takes them: switchwatch.h).
 *   Callers guarantee: engine_publish() does not free or reuse a table,
 *              nor return to its caller, until profil_inflight has been
 *              seen at zero after the new pointer was stored.  Both sides
 *              use sequentially consistent operations, so either the
 *              handler's increment is seen by the publisher (which waits)
 *              or the handler's load sees the new pointer.
 *
 * Fault safety: a caller's buffer may be unmapped or protected while it is
 * published.  Around each write the handler arms a per-thread recovery
 * point with __builtin_setjmp, which saves three registers inline (a few
 * nanoseconds, no call; sample_record() in sample_write.c).  fault.c's SIGSEGV/SIGBUS handler, finding the
 * fault raised while sample_writing is set on this thread, jumps back
 * here; the table is then withdrawn so no later sample touches it.  The
 * stack walk re-arms the recovery point for itself (walk_recovered()): a bad
 * stack costs that sample its callers, not the table.
 */
#include "engine/sampling.h"
#include "engine/perf_engine.h"
#include "engine/perf_trap.h"
#include "engine/switchwatch.h"
#include "unwind/unwind.h"
#include "engine/engine_int.h"

#include <ucontext.h>
#include <sys/resource.h>

__thread void *sample_recover[5] __attribute__((tls_model("initial-exec"))) HIDDEN;
__thread volatile int sample_writing __attribute__((tls_model("initial-exec"))) HIDDEN;
/* Set while this thread runs the sampling handler; sample_abandon is set
 * by fault.c when a SIGSEGV/SIGBUS sent by kill(2) lands meanwhile: it is
 * held back until we return, and this sample writes nothing more. */
__thread volatile int sample_active __attribute__((tls_model("initial-exec"))) HIDDEN;
__thread volatile int sample_abandon __attribute__((tls_model("initial-exec"))) HIDDEN;
__thread volatile int sample_in_fork_start __attribute__((tls_model("initial-exec"))) HIDDEN;
__thread volatile int sample_in_fork_return __attribute__((tls_model("initial-exec"))) HIDDEN;
uintptr_t sample_fork_pc HIDDEN;

static uintptr_t pc_of(const void *ucontext)
{
	const ucontext_t *uc = ucontext;
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_EIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#elif defined(__riscv)
	return (uintptr_t)uc->uc_mcontext.__gregs[0];
#else
#error "profil: add this architecture's program counter to pc_of()"
#endif
}

#define ADD(field, n) atomic_fetch_add_explicit(&profil_pstats.field, (n), memory_order_relaxed)

/* Whether the interrupted code blocks SIGSEGV or SIGBUS: they stay
 * blocked while we run, so fault recovery (fault.c) could not run.  The
 * mask's bits read directly: sigismember() is a call. */
static int faults_blocked(const void *ucontext)
{
	const ucontext_t *uc = ucontext;
	const unsigned long *m = (const unsigned long *)&uc->uc_sigmask;
	const unsigned bits = 8 * sizeof(unsigned long);
	return ((m[(SIGSEGV - 1) / bits] >> ((SIGSEGV - 1) % bits)) & 1) ||
	       ((m[(SIGBUS - 1) / bits] >> ((SIGBUS - 1) % bits)) & 1);
}

/* This thread's tally, read by threads.c when it exits (engine.h).  Its
 * own: plain stores, no atomics; reset when the timers' epoch moved on. */
__thread struct sample_self sample_self __attribute__((tls_model("initial-exec"))) HIDDEN;
/* Bumped by timers.c whenever the timers are made afresh. */
_Atomic unsigned int sample_epoch;

static void tally(unsigned long w, uintptr_t pc)
{
	unsigned int e = atomic_load_explicit(&sample_epoch, memory_order_relaxed);
	if (sample_self.epoch != e) {
		sample_self.epoch = e;
		sample_self.credited = 0;
	}
	sample_self.credited += w;
	sample_self.pc = pc;
}

/*
 * An event's signal's weight: the periods of this thread's CPU time since
 * the last one it credited.  With sigtrap, overflows that fell while the
 * thread was in the kernel come as one signal at its return, so the
 * clock, not the signal, says how many samples it stands for; with
 * either delivery, the event's own clock (task-clock) runs faster than
 * the thread's CPU clock by the time the host steals (perf_trap.h), and
 * the totals are defined against the CPU clock.  Rounded to the nearest
 * period (the clock is read a little after the overflow), the rest
 * carried in perf_fd_state[].base; 0 when the clock cannot be read or less
 * than half a period has passed.
 */
static unsigned long trap_weight(int fd, int64_t *now_out)
{
	int64_t per = atomic_load_explicit(&perf_trap_period, memory_order_relaxed);
	int64_t now = *now_out = perf_trap_thread_ns();
	int64_t base = atomic_load_explicit(&perf_fd_state[fd].base, memory_order_relaxed);
	if (per <= 0 || now < 0 || now <= base)
		return 0;
	int64_t w = (now - base + per / 2) / per;
	atomic_store_explicit(&perf_fd_state[fd].base, base + w * per, memory_order_relaxed);
	return (unsigned long)w;
}

atomic_int switch_watch_on;
_Atomic int switch_wishes[SWITCH_WISHES];

/* This thread's last look at its switches (switch_watch()): its own,
 * plain stores.  A forked child inherits the parent thread's; its own
 * counts, lower, start it afresh. */
static __thread struct {
	int64_t cpu_ns;
	long nvcsw;
	unsigned int samples;
} watch_self __attribute__((tls_model("initial-exec")));

/* Posts wish v (switchwatch.h); a new wish for a timer wakes the sweeper
 * (sample_wake_sweeper()): each of the thread's switches costs it until
 * it is granted. */
static void switch_wish(int v)
{
	unsigned int at = (unsigned int)(v < 0 ? -v : v) % SWITCH_WISHES;
	for (unsigned int k = 0; k < 4; k++) {
		_Atomic int *slot = &switch_wishes[(at + k) % SWITCH_WISHES];
		int cur = atomic_load_explicit(slot, memory_order_relaxed);
		if (cur == v)
			return;
		if (cur == 0 && atomic_compare_exchange_strong(slot, &cur, v)) {
			if (v > 0)
				sample_wake_sweeper();
			return;
		}
	}
}

/*
 * Every SWITCH_WATCH_EVERY samples while the run is on perf events: this
 * thread's voluntary switches per CPU second since its last look (the
 * first: since it began; switchwatch.h).  Busy on an event: a wish for a
 * timer; calm on a timer: a wish for an event, which the sweeper grants
 * only to a thread it moved for switching.  now: the thread's CPU clock
 * if the caller read it, else -1.  Two inline system calls at most.
 */
static void switch_watch(pid_t tid, int on_event, int64_t now)
{
	if (!atomic_load_explicit(&switch_watch_on, memory_order_relaxed) ||
	    watch_self.samples++ % SWITCH_WATCH_EVERY != 0)
		return;
	struct rusage ru;
	if (now < 0)
		now = perf_trap_thread_ns();
	if (now < 0 || perf_trap_syscall2(SYS_getrusage, RUSAGE_THREAD, (long)&ru) != 0)
		return;
	int64_t dns = now - watch_self.cpu_ns;
	long dsw = ru.ru_nvcsw - watch_self.nvcsw;
	if (dns >= 0 && dsw >= 0) {
		if (dns < SWITCH_WATCH_MIN_NS)
			return; /* too little CPU time to tell: look again later */
		if (on_event && dsw * 1000000000LL >= SWITCH_BUSY_RATE * dns)
			switch_wish(tid);
		else if (!on_event && dsw * 1000000000LL <= SWITCH_CALM_RATE * dns)
			switch_wish(-tid);
	}
	watch_self.cpu_ns = now;
	watch_self.nvcsw = ru.ru_nvcsw;
}

/*
 * For lazy_helper.c, in this handler after a sample: the interrupted
 * stack into pcs[] (at most max frames), under the same in-flight
 * handshake and fault recovery as a sample's walk.  The number of frames
 * when the walk reached the outermost frame and every frame lies in a
 * module of the unwind table; 0 otherwise.
 */
uint32_t sample_walk_whole(const void *uc, uint64_t *pcs, uint32_t max)
{
#if !defined(__x86_64__)
	(void)uc, (void)pcs, (void)max;
	return 0;
#else
	uint32_t n = 0;
	sample_abandon = 0;
	sample_active = 1;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_fetch_add(&profil_inflight, 1);
	const struct uw_table *ut = atomic_load(&unwind_published);
	if (ut && uc && !faults_blocked(uc)) {
		volatile uint32_t got = 0;
		sample_writing = 1; /* fault.c recovers a bad read (sample_walk_recovered()) */
		enum uw_end end = sample_walk_recovered(ut, uc, pcs, max, &got);
		sample_writing = 0;
		n = end == UW_END_COMPLETE && !sample_abandon ? got : 0;
		for (uint32_t k = 0; k < n; k++)
			if (!unwind_covers(ut, k ? pcs[k] - 1 : pcs[k]))
				n = 0;
	}
	atomic_fetch_sub(&profil_inflight, 1);
	atomic_signal_fence(memory_order_seq_cst);
	sample_active = 0;
	return n;
#endif
}

void sample_handler(int sig, siginfo_t *info, void *uc)
{
	(void)sig;
	/* Only our own timers' and events' signals are samples: a kill(2) of
	 * the same signal, or a timer of the program's, is ignored; so is a
	 * signal an event of ours queued before it was closed (tid -1).  A
	 * timer's weighs its expiries (1 + overruns), an event's the periods
	 * of CPU time since the thread's last (trap_weight()). */
	pid_t tid;
	int fd;
	unsigned long w = 1;
	int64_t now = -1;
	if (timer_tag_ours(info)) {
		tid = timer_tag_tid(info);
		w += info->si_overrun > 0 ? (unsigned long)info->si_overrun : 0;
		switch_watch(tid, 0, -1);
	} else if ((tid = perf_sig_tid_fd(info, &fd)) <= 0) {
		return;
	} else if (PERF_TRAP_ARCH && (w = trap_weight(fd, &now)) == 0) {
		return; /* an event's signal: weighed by the thread's CPU clock */
	} else {
		switch_watch(tid, 1, now);
	}

	/* Active before the in-flight increment, inactive after the decrement:
	 * a sent SIGSEGV held back (fault.c) whenever the count is raised. */
	sample_abandon = 0;
	sample_active = 1;
	atomic_signal_fence(memory_order_seq_cst);
	atomic_fetch_add(&profil_inflight, 1);
	struct ptable *t = atomic_load(&profil_published);
	if (t) {
		ADD(signals, 1);
		ADD(ticks, w);
		ADD(overruns, w - 1);
		tally(w, pc_of(uc));
		if (faults_blocked(uc) || sample_writing) {
			/* A faulting write here would kill the process: the
			 * kernel does not deliver a blocked SIGSEGV, it kills.
			 * Or this thread was writing a record outside sampling
			 * (sample_records.c: a fork's callers take a walk) with
			 * its recovery point armed, which a sample would re-arm
			 * and disarm under it.  Hold the weight for this
			 * thread's next sample. */
			sample_self.deferred += w;
			ADD(deferred, w);
		} else {
			w += sample_self.deferred;
			sample_self.deferred = 0;
			sample_record(t, tid, pc_of(uc), uc, w);
		}
	}
	atomic_fetch_sub(&profil_inflight, 1);
	atomic_signal_fence(memory_order_seq_cst);
	sample_active = 0;
}
