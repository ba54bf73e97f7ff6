/*
 * engine.h - the engine's interface: publishing a table (engine.c), the
 * engine lock, the timers (timers.c, perf_engine.c), the sampling signal
 * (signals.c, handover.c, dispatch.c) and its one handler (sample.c),
 * fault recovery and the sigstate lock (fault.c), the sweeper
 * (sweeper.c).  Used by process/, gmon/ and agent/; what the engine's
 * files say only to each other is in engine_int.h.  Includes <signal.h>,
 * so forms/ (profil.c, see docs/contract.md, "The classic call") never
 * includes it.
 */
#ifndef PROFIL_ENGINE_H
#define PROFIL_ENGINE_H

#include <signal.h>
#include <stdatomic.h>
#include <sys/types.h>

#include "base/base.h"

/*
 * engine.c.  engine_publish() replaces the published table with t (NULL
 * stops profiling).  On success the engine owns t; on failure t is freed,
 * errno is set and the previous configuration is still in force.  When it
 * returns, no signal handler will ever touch the previous table's buffers.
 * Every buffer in t must have been checked with probe_writable() first.
 */
HIDDEN int engine_publish(struct ptable *t);
/* engine_publish(), and under the same lock hold (so no other publish can
 * slip in between) take the final count of the pcsample table retired
 * most recently, 0 if none since the last take.  On failure nothing is
 * taken. */
HIDDEN int engine_publish_take(struct ptable *t, size_t *pcsample_stored);
/* engine_publish(t), t not NULL, from the helper thread: never waits for
 * the lock once the helper is asked to quit (a holder of the lock may be
 * joining it): then -1 ECANCELED, t freed. */
HIDDEN int engine_publish_helper(struct ptable *t);
/* Stops profiling from the engine's helper thread (the agent's sweep
 * hook), where engine_publish(NULL) would wait for that thread itself:
 * withdraws the published table as a faulting handler does; the helper's
 * next pass releases the timers, the signal and the fault handler
 * (engine_reap()).  0 once no handler holds the table (its buffers may
 * go), or -1 when the engine lock is busy (try again: a thread holding
 * it may be waiting for the helper). */
HIDDEN int engine_withdraw(void);
/* Called with the engine lock held to read the last published HIST table
 * (current or last stopped) for gmon output; returns a copy or NULL. */
HIDDEN struct ptable *engine_last_hist_copy(void);

/* hz.c */
HIDDEN unsigned int hz_current(void);

/*
 * Published state read by the signal handler (sample.c).  Defined in
 * engine.c, documented there.
 */
extern _Atomic(struct ptable *) profil_published HIDDEN;

/* Statistics: relaxed atomic counters, reset when profiling starts. */
struct pstats {
	_Atomic unsigned long long signals;
	_Atomic unsigned long long ticks;
	_Atomic unsigned long long in_range;
	_Atomic unsigned long long out_of_range;
	_Atomic unsigned long long saturated;
	_Atomic unsigned long long overruns;
	_Atomic unsigned long long faults;
	_Atomic unsigned long long reconciled; /* credited at thread exit */
	_Atomic unsigned long long exec_lost; /* program's signals lost at exec */
	_Atomic unsigned long long deferred; /* weight held back: SEGV blocked */
	_Atomic unsigned long long dropped;  /* signals dropped where the handler
	                                        cannot run: a %fs not libc's, too
	                                        little alternate stack (dispatch.c);
	                                        the agent's helper reports them as
	                                        lost at its sweep */
	_Atomic int stopped;
};
extern struct pstats profil_pstats HIDDEN;

/*
 * sample.c: what the handler credited on this thread (weight, since the
 * timers' epoch `epoch`) and the last pc it sampled.  threads.c reads it
 * at the thread's exit, with the sampling signal blocked, to credit the
 * expiries never delivered (sample_credit(); timers.c, cpugrid.h).
 */
struct sample_self {
	unsigned int epoch;
	unsigned long credited;
	uintptr_t pc;
	unsigned long deferred; /* weight held back while SEGV/BUS were blocked */
};
extern __thread struct sample_self sample_self
	__attribute__((tls_model("initial-exec"))) HIDDEN;
extern _Atomic unsigned int sample_epoch HIDDEN; /* bumped by timers.c */
/* Records owed (weight never delivered: counted as new ticks) plus held
 * (ticks already counted, held back by the handler) at a thread's exit. */
HIDDEN void sample_credit(pid_t tid, uintptr_t pc, unsigned long owed, unsigned long held);
/* The same for a thread whose start routine (pc) just returned to the
 * library's wrapper and was never sampled: on a ring that records stacks,
 * under the wrapper's frame and its callers, as its samples would have
 * been (sample_records.c). */
HIDDEN void sample_credit_entry(pid_t tid, uintptr_t pc, unsigned long owed, unsigned long held);
/* ... and for a thread that was sampled (pc: its last sample's): on a
 * ring, for that sample's stack (ring.h RING_REPEAT). */
HIDDEN void sample_credit_repeat(pid_t tid, uintptr_t pc, unsigned long owed, unsigned long held);
/* Weight w at a marker (ring.h: RING_PC_STARTUP, RING_PC_AGENT) of a ring
 * table: CPU time before sampling began (agent.c).  Outside signal
 * context. */
HIDDEN void sample_credit_startup(pid_t tid, uintptr_t marker, unsigned long w);
/* A ring's record of a thread's name (ring.h RING_THREAD), outside signal
 * context; nothing when the published table is not a ring. */
HIDDEN void sample_thread_name(pid_t tid, const char name[16]);
/* A child's CPU time (ns, its own and its reaped descendants') as this
 * process reaped it, for a ring's reader (ring.h RING_REAPED);
 * async-signal-safe, as a SIGCHLD handler may reap. */
HIDDEN void sample_child_cpu(uint32_t pid, uint64_t cpu_ns);
/* A whole ring record into ring table t, published or not (agent/defer.c);
 * async-signal-safe. */
HIDDEN void sample_record_into(struct ptable *t, const void *rec);
/* rec's head (size bytes) and the calling thread's callers after it, the
 * leading frames in the library and in also's module (libc's, through
 * one of its functions) left out, at most depth (1: none), into ring table t
 * (sample_records.c); async-signal-safe. */
HIDDEN void sample_record_callers(struct ptable *t, const void *rec, uint32_t size,
                                  uint32_t depth, uintptr_t also);
/* The same callers walked now into pcs (room words), written later with
 * sample_record_given(): a fork's callers, walked in the parent, whose
 * pages of unwind tables are mapped (agent/child.c).  The words, or 0 when
 * there are no stacks or room cut the walk short of depth
 * (sample_records.c); async-signal-safe. */
HIDDEN uint32_t sample_callers_walk(uint64_t *pcs, uint32_t room, uint32_t depth,
                                    uintptr_t also);
HIDDEN void sample_record_given(struct ptable *t, const void *rec, uint32_t size,
                                const uint64_t *pcs, uint32_t n);
/* Set on a forked child's one thread while fork.c starts its profiling
 * (the atfork child handler, the agent's hook within it): a sample taken
 * then is that start's cost, recorded into a ring table at RING_PC_AGENT,
 * not at the pc it interrupted.  The expiries of the time the handler
 * spends with signals blocked (the helper thread's creation, a
 * millisecond or more where page faults are dear) came in one sample at
 * the unblocking system call, and a loop of fork()+_exit() showed libc's
 * syscall() as its hottest function (47%).  The thread's own: plain
 * stores by fork.c, read by sample.c on the same thread. */
extern __thread volatile int sample_in_fork_start __attribute__((tls_model("initial-exec"))) HIDDEN;
/* Set on the forking thread while fork.c's atfork parent handler runs:
 * the expiries of the fork (the kernel's copy of the address space, with
 * every signal blocked from the prepare handler on) arrive when that
 * handler unblocks them, in our code under libc's handler runner, and a
 * loop of forks showed 23% of its time in the agent's sigprocmask.  Such
 * a sample is recorded at sample_fork_pc, the C library's fork(), under
 * the frames that called it.  sample_fork_pc: written once by fork.c's
 * constructor, before any fork; 0 leaves such samples where they fell
 * (the agent's fork word leaves the module holding it out, too). */
extern __thread volatile int sample_in_fork_return __attribute__((tls_model("initial-exec"))) HIDDEN;
extern uintptr_t sample_fork_pc HIDDEN;
/* Set on a thread while the agent's dlopen() wrapper runs the C library's
 * (agent/dlopen.c open_then_poll()): the new library's constructors run
 * inside that call, before the unwind tables know its code, so every
 * sample in them ended "[unknown]".  A sample of this thread whose walk
 * fails at a pc no table covers wakes the helper then, once a mark
 * (sample_write.c wake_for_load()), and its module poll adds the library:
 * the constructors' later samples walk whole.  This thread's own plain
 * stores, read by its handler (which may clear it, below); a child
 * forked inside the call returns through the wrapper too, which clears
 * it. */
extern __thread volatile int sample_in_dlopen __attribute__((tls_model("initial-exec"))) HIDDEN;
/* sample_in_dlopen's value for a dlopen() left to the C library, which
 * returns to its caller without the agent: the handler takes the mark
 * off at this thread's first sample whose walk is whole (the library's
 * rows are in, or the thread has left it) or when it has woken the
 * helper (each mark wakes it once at most). */
#define SAMPLE_IN_DLOPEN_UNTIL_WHOLE 2
/* Its values while the wrapper's call runs: marked, and marked after the
 * one wake the mark may make. */
#define SAMPLE_IN_DLOPEN_CALL 1
#define SAMPLE_IN_DLOPEN_WOKEN 3

/*
 * engine lock: serialises every configuration change.  Never taken in
 * signal context.  Held across fork by the atfork handlers.
 */
HIDDEN void engine_lock(void);
HIDDEN void engine_unlock(void);
HIDDEN int engine_lock_bounded(void); /* 0 taken; -1 held here or busy 200 ms */
/* Sweeper, lock held: stop timers left running after a fault withdrew
 * the published table. */
HIDDEN void engine_reap(void);

/* timers.c (engine lock held for all of these) */
HIDDEN int timers_start(int sig, unsigned int hz); /* all threads; -1 errno */
HIDDEN void timers_stop(void);                      /* delete every timer */
/* Drops dead threads' entries and covers new threads; lists them only
 * when something may have changed (timers_scan.c).  nthreads: the kernel's
 * count (/proc/self/stat), 0 if unknown; leader_ended: whether the main
 * thread has ended by that same stat (1, 0), -1 if unknown. */
HIDDEN int timers_rescan(unsigned int nthreads, int leader_ended);
/* ioworkers.c: io_uring's worker threads credited their CPU time up to
 * now (at a process's end; the engine lock taken, bounded). */
HIDDEN void engine_ioworkers_settle(void);
HIDDEN int timers_add_self(void);      /* calling thread, if not covered */
HIDDEN int timers_add_born(void);      /* same, counting from its CPU time 0 */
/* At the calling thread's exit: delete its timer and say in *owed how many
 * expiries of its grid (cpugrid.h) it passed beyond the `credited` ones its
 * handler saw; -1 if it had no timer. */
HIDDEN int timers_reconcile_self(unsigned long credited, unsigned long *owed);
HIDDEN int timers_signal(void);        /* signal in use, 0 when stopped */
HIDDEN void timers_forget_all(void);   /* after fork in the child: the
                                          parent's timers do not exist */
HIDDEN unsigned int timers_hz(void);
HIDDEN pid_t timers_owner(void);       /* process the timers belong to;
                                          atomic, readable without lock */

/* signals.c, handover.c (engine lock held, not in signal context) */
/* Set once by the profil agent before it starts: signal_choose() takes a
 * free real-time signal before SIGPROF (unless PROFIL_SIGNAL names it).
 * A program profiling itself takes SIGPROF, and glibc's gmon (-pg) does
 * it with its internal sigaction, which sigwrap.c cannot see: until the
 * sweeper noticed (up to 100 ms), our expiries reached gprof's handler,
 * each counted as 10 ms (+0.25 s on one run of 0.46 s). */
extern int signal_avoid_prof HIDDEN;
/* Sampling signal, or 0: atomic, read without the lock by sigwrap.c. */
HIDDEN int signal_sampling(void);
/* Sweeper: whether the program replaced our handler without sigaction()
 * and no signal was free to move to (1: sampling on it has ended; the
 * caller deletes the timers). */
HIDDEN int signal_check_taken(void);
/* The signal so taken, 0 if none since profiling started; atomic. */
HIDDEN int signal_lost(void);

/* timers.c: threads on perf events move to timers, and no thread gets an
 * event from now on (a seccomp filter would refuse the events' calls). */
HIDDEN void engine_events_forbid(void);
/* Threads moved from their perf event to a timer in this run because they
 * blocked and woke often (switchwatch.h); any thread, no lock. */
HIDDEN unsigned int engine_switch_moved(void);

/* sweeper.c: the fallback thread that covers threads no hook saw. */
HIDDEN int sweeper_start(void);
/* Engine lock held: stops the sweeper if it runs (1) for a moment in
 * which the program's threads must be the only ones (credwrap.c), and
 * starts it again. */
HIDDEN int sweeper_pause(void);
HIDDEN void sweeper_resume(void);
HIDDEN void sweeper_forget(void);
/* The agent's recording is over (its table withdrawn: engine_withdraw()):
 * the helper's next sweep releases the timers or events (engine_reap())
 * and then the helper ends, leaving a process that outlived its
 * recording (a daemon, a background job) without a thread of ours. */
HIDDEN void sweeper_retire(void);
/* lastthread.c: the program's threads made through our pthread_create
 * (threads.c), so that the sweeper leaves once they and the main thread
 * have all ended:
 * counted up before a thread exists, down as its last act; reset to the
 * one thread left in a forked child. */
HIDDEN void sweeper_thread_born(void);
HIDDEN void sweeper_thread_gone(void);
HIDDEN void sweeper_threads_reset(int n);

/* helper_files.c: files the helper thread keeps open between sweeps, in
 * its own descriptor table.  helper_file() gives the descriptor of path
 * (opened with flags at the first call), or -1 outside such a helper
 * (the caller then opens and closes it); helper_files_own_table() is said
 * by the helper once its table is its own.  helper_file_read() reads a
 * file (kept or just opened) whole from offset 0 into buf, NUL-terminated;
 * its length, or -1 when nothing was read (those two, with the status
 * readers, in engine_int.h). */
enum helper_file { HELPER_STATUS, HELPER_MAX_RATE, HELPER_LOCK, HELPER_FILES };
HIDDEN int helper_file(enum helper_file which, const char *path, int flags);

/* lazy_helper.c: the helper made at the program's first pthread_create
 * or dlclose, or at a safe sample once the process has run a while, not
 * at a start or fork (the agent only: helper_lazy, set before its
 * start).  sweeper_begin() starts it or
 * defers it; lazy_helper_now() makes a deferred one (a call that is not
 * async-signal-safe itself: pthread_create, dlclose); lazy_helper_sample()
 * tries after a sample while lazy_helper_pending() (signal context: the
 * proof in lazy_helper.c); lazy_helper_clear() forgets a deferral (a
 * stop, a fork); lazy_helper_block() ends deferrals for good (a seccomp
 * filter is in force or being installed): it waits for a making under
 * way, and makes a deferred helper itself.  The engine's own calls
 * (lazy_helper_sample(), _pending(), _clear()) are in engine_int.h. */
extern _Atomic int helper_lazy HIDDEN;
HIDDEN int sweeper_begin(void);
HIDDEN void lazy_helper_now(void);
/* The main thread's CPU time after which a deferred helper is wanted:
 * its first sweep comes 100 ms after it is made, and its making costs a
 * millisecond at worst, 2% of this.  A process whose main thread used
 * this much and whose maps no sweep read reads them at exit()
 * (agent/aliases.c). */
#define LAZY_HELPER_CPU_NS (50 * 1000000LL)
/* The same for a forked child sampled into a scratch ring (agent/defer.c):
 * a shell's child that execs within it never makes one, and one killed
 * later has its samples in a file by then, all but the last few. */
#define LAZY_HELPER_SOON_NS (5 * 1000000LL)
HIDDEN void lazy_helper_block(void);

/* sweeper.c: called every sweep, no lock held (agent/). */
extern void (*_Atomic sweeper_tick_hook)(void) HIDDEN;
/* sweeper.c: called once as the helper thread starts, before its first
 * sweep, no lock held, every signal blocked (agent/: a forked child's ring
 * file is made there, agent/defer.c). */
extern void (*_Atomic sweeper_start_hook)(void) HIDDEN;
/* lazy_helper.c: the next deferral of the helper makes it at the first
 * safe sample after LAZY_HELPER_SOON_NS, not LAZY_HELPER_CPU_NS (a forked
 * child the agent samples into a scratch ring: agent/defer.c).  Cleared by
 * that deferral. */
extern _Atomic int lazy_helper_soon HIDDEN;

/* threads.c: in a forked child, the sweeper's count of our threads reset
 * to the one thread there (fork.c). */
HIDDEN void threads_forked_child(void);
/*
 * Under ThreadSanitizer the program's pthread_create is TSan's, which
 * calls ours, whose trampoline would run in the new thread before TSan
 * has set the thread up (it crashed there).  A TSan build therefore does
 * not interpose: the sweeper covers new threads within SWEEP_MS.
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PROFIL_NO_HOOK 1
#endif
#endif
#ifdef __SANITIZE_THREAD__
#define PROFIL_NO_HOOK 1
#endif

/* sweeper.c: libc's pthread_create (dlsym RTLD_NEXT, or __pthread_create
 * in a static link), and a thread created with it, never hooked. */
HIDDEN int (*threads_real_create(void))(pthread_t *, const pthread_attr_t *,
                                        void *(*)(void *), void *);

/* Code reachable from sigaction(): a sanitizer runtime calls sigaction()
 * while it initialises, before instrumented code may run (TSan crashed
 * in __tsan_func_entry).  Exempt it from ThreadSanitizer. */
#define NO_TSAN __attribute__((no_sanitize("thread")))

/* Install our SIGSEGV/SIGBUS handler, saving the program's (engine lock
 * held, when profiling starts).  -1 with errno on failure, nothing kept. */
HIDDEN NO_TSAN int fault_install(void);
/* Give the program back its dispositions (engine lock held).  Preserves
 * errno. */
HIDDEN NO_TSAN void fault_uninstall(void);
/* Whether sig is SIGSEGV or SIGBUS and our handler holds it (sigstate
 * lock held). */
HIDDEN NO_TSAN int fault_owns(int sig);
/* sigaction() as the program sees it for an owned sig: reads and writes
 * the saved disposition instead of the kernel's (sigstate lock held). */
HIDDEN NO_TSAN int fault_user_sigaction_locked(int sig, const struct sigaction *act,
                                       struct sigaction *oact);

/*
 * The sigstate lock guards the program's view of every signal we own
 * (fault.c: SIGSEGV and SIGBUS; signals.c: the sampling signal).  A spin
 * lock taken with every signal blocked on this thread, so no handler can
 * interrupt its holder: sigaction() is async-signal-safe and programs
 * call it from handlers.  The holder never waits for anything else.
 */
HIDDEN NO_TSAN void sigstate_lock(sigset_t *old);
HIDDEN NO_TSAN void sigstate_unlock(const sigset_t *old);
/* Said by a thread whose every signal stays blocked all its life (the
 * helper): its sigstate_lock() then leaves its mask alone. */
HIDDEN NO_TSAN void sigstate_thread_blocks_all(void);
/* Whether this process is the one whose signal state this memory holds:
 * false in a vfork child (shared memory) or a raw clone's child, whose
 * calls the interposers pass straight to libc.  Async-signal-safe. */
HIDDEN NO_TSAN int sigstate_mine(void);

/* handover.c, sigstate lock held: whether sig is the sampling signal (or
 * the one it is moving to), and sigaction() as the program sees it. */
HIDDEN NO_TSAN int signal_owns_locked(int sig);
HIDDEN NO_TSAN int signal_user_sigaction_locked(int sig, const struct sigaction *act,
                                        struct sigaction *oact);
/* exec.c, in a vfork child: our signals the program ignores set ignored
 * in the child's own table, nothing of ours touched (handover.c). */
HIDDEN NO_TSAN void signal_ignore_for_vfork_exec(void);
/* exec.c: the sampling signal set to SIG_IGN (on) or back to ours. */
HIDDEN void signal_ignore(int sig, int on);
/* exec.c: whether the program's view of sig, a signal whose disposition
 * is ours (in use, being moved to, or SIGTRAP lingering), is SIG_IGN. */
HIDDEN int signal_program_ignores(int sig);
/* handover.c: nonzero while this thread is inside
 * signal_sigaction_internal() (sigwrap.c then passes straight to libc). */
extern __thread int signal_internal __attribute__((tls_model("initial-exec"))) HIDDEN;

/* fork.c: hold the sigstate lock across fork (every signal blocked). */
HIDDEN NO_TSAN void fault_atfork_prepare(void);
HIDDEN NO_TSAN void fault_atfork_parent(void);
HIDDEN NO_TSAN void fault_atfork_child(void);  /* also: this process owns */
/* libc_calls.c: libc's sigaction, bypassing our interposer (sigwrap.c). */
HIDDEN NO_TSAN int fault_real_sigaction(int sig, const struct sigaction *act,
                                struct sigaction *oact);
/* libc's pthread_sigmask(), bypassing our interposer (maskwrap.c): every
 * mask the library sets for itself goes through here, as it is.  The raw
 * form is the system call itself; the other is it too, except under TSan
 * (libc_calls.c says why), where the interposer sees
 * fault_sigmask_internal. */
HIDDEN NO_TSAN int fault_real_sigmask(int how, const sigset_t *set, sigset_t *old);
HIDDEN NO_TSAN int fault_raw_sigmask(int how, const sigset_t *set, sigset_t *old);
#ifdef PROFIL_NO_HOOK
extern __thread int fault_sigmask_internal __attribute__((tls_model("initial-exec"))) HIDDEN;
#endif
/* Nonzero while fault_raw_sigmask() makes its system call on this
 * thread: the agent interposes syscall() (agent/rawsig.c), and its
 * rt_sigprocmask path (process/maskwrap.c) must let our own masks (the
 * sigstate lock's "block everything", the helper's) through as they are. */
extern __thread int fault_raw_sigmask_own __attribute__((tls_model("initial-exec"))) HIDDEN;

/* dispatch.c: whether si is one of the engine's samples (an expiry of
 * our timers, or a signal of one of our perf events, live or closed),
 * never the program's own signal.  Async-signal-safe: atomic loads. */
HIDDEN NO_TSAN int engine_signal_is_sample(const siginfo_t *si);

#endif /* PROFIL_ENGINE_H */
