/*
 * engine_int.h - the engine's own declarations: what its files (src/engine/)
 * say to each other and no other part calls.  engine.h, which this
 * includes, is the interface the other parts use (process/, gmon/,
 * agent/); `make check-layout` fails if a file outside src/engine/
 * includes this one.
 */
#ifndef PROFIL_ENGINE_INT_H
#define PROFIL_ENGINE_INT_H

#include <pthread.h>

#include "engine/engine.h"

/* hz.c */
/* One line on stderr: "profil: NAME=VALUE what". */
HIDDEN void env_warning(const char *name, const char *value, const char *what);

/* engine lock (engine.c) */
HIDDEN int engine_trylock(void);     /* 0 when taken */
HIDDEN int engine_held_here(void);   /* this thread holds it (or is taking
                                        or releasing it) */

/* timers.c (engine lock held) */
HIDDEN int timers_set_hz(unsigned int hz);
HIDDEN int timers_resignal(int sig);      /* all timers to sig, all or nothing */
HIDDEN unsigned int timers_count(void);
HIDDEN unsigned int timers_untimed(void); /* threads refused a timer */
HIDDEN void timers_exclude(pid_t tid); /* never sample this thread */

/* signals.c, handover.c (engine lock held, not in signal context) */
HIDDEN int signal_choose(void);        /* signal number, or -1 errno */
HIDDEN int signal_free_rt(int not);    /* a free real-time signal, or -1 */
/* backlog.c: a thread's blocked mask from /proc (bit 0: signal 1), 0 if
 * it has gone. */
HIDDEN unsigned long long engine_blocked_mask(pid_t tid);
HIDDEN int signal_install(int sig);    /* records the program's disposition */
HIDDEN void signal_restore(void);      /* discards pending, gives it back */
/* Carries out a move the program asked for by installing a handler on
 * the sampling signal (the interposer only records it). */
HIDDEN void signal_settle(void);
/* engine.c, sweeper: ends sampling after signal_check_taken() said 1. */
HIDDEN void engine_signal_taken(void);

/* perf_engine.c: whether a seccomp filter is in force ("Seccomp: 2" in
 * /proc/self/status); a guest must then not try system calls the program
 * does not make itself (a filter may kill rather than fail them). */
HIDDEN int engine_seccomp_filtered(void);

/* lastthread.c: field n (proc(5)'s numbering, n >= 3) of the text of a
 * /proc stat file, or NULL: counted after the command name, which may
 * hold any byte but ends with the last ')'. */
HIDDEN const char *engine_stat_field(const char *buf, int n);
/* The text of thread tid's /proc stat file into buf (NUL-terminated):
 * 0, or -1 (errno ENOENT: it has gone). */
HIDDEN int engine_thread_stat(pid_t tid, char *buf, size_t size);
/* A thread's starttime (field 22: clock ticks after boot), 0 if unknown
 * (errno ENOENT: it has gone). */
HIDDEN unsigned long long engine_thread_start(pid_t tid);
/* A thread's state letter (field 3) from its open stat file, read again
 * from the start (the kernel generates it anew), or from the file at
 * path: 'X' when the task is gone, 0 if unknown.  *nthreads, if asked:
 * num_threads (field 20), 0 if unknown. */
HIDDEN char engine_stat_state_at(int fd, unsigned int *nthreads);
HIDDEN char engine_stat_state_of(const char *path, unsigned int *nthreads);
HIDDEN int engine_state_ended(char state);  /* a zombie, or gone */
/* Whether the program's threads have all ended, the sweeper (self) aside,
 * given the main thread's state: final once yes (lastthread.c). */
HIDDEN int sweeper_alone(pid_t self, char main_state);
/* Bumped by each sweeper_thread_born() and _gone() and by a reset
 * (engine.h): a sweep lists the threads again when it has moved
 * (timers_scan.c). */
HIDDEN unsigned long sweeper_thread_events(void);

/* sweeper.c: the helper thread itself. */
HIDDEN void sweeper_stop(void);        /* joins it; engine lock held */
HIDDEN int sweeper_quitting(void);     /* a stop has asked it to end */
HIDDEN void sweeper_wake(void);        /* sweep now; async-signal-safe */
/* The word sweeper_wake() bumps and wakes (sweeper.c); the sampling
 * handler does the same with an inline futex wake (switchwatch.h). */
extern atomic_int sweeper_wakes HIDDEN;
/* sample_write.c: sweeper_wake() for the sampling handler, its futex
 * wake made inline (perf_trap.h: no libc, no errno). */
HIDDEN void sample_wake_sweeper(void);
/* 1 while a wake for a library being loaded is out (engine.h
 * sample_in_dlopen): set by the sampling handler by compare-and-swap
 * before its wake, cleared by the sweeper before each sweep's module
 * poll, so that code no table will ever cover (a JIT's) wakes it at most
 * once a sweep. */
extern atomic_int sample_load_wake HIDDEN;
/* A thread made with libc's pthread_create (threads_real_create()),
 * never hooked. */
HIDDEN int threads_create_raw(pthread_t *th, const pthread_attr_t *attr,
                              void *(*fn)(void *), void *arg);

/* helper_files.c (engine.h says what each does) */
HIDDEN void helper_files_own_table(void);
HIDDEN ssize_t helper_file_read(int fd, char *buf, size_t size);
/* /proc/self/status read whole into buf as helper_file_read() does,
 * through the kept descriptor where there is one. */
HIDDEN ssize_t helper_read_status(char *buf, size_t size);
/* In a status file's text: what follows "\nName:" and its blanks, or NULL. */
HIDDEN const char *status_field(const char *buf, const char *name);

/* lazy_helper.c (engine.h says what each does) */
HIDDEN void lazy_helper_sample(const void *uc);
HIDDEN int lazy_helper_pending(void);
HIDDEN void lazy_helper_clear(void);

/* handover.c: sigaction() for our own dispositions, through libc's (a
 * sanitizer runtime interposing sigaction() sees them; our interposer,
 * sigwrap.c, passes the call straight on while signal_internal is set).
 */
HIDDEN NO_TSAN int signal_sigaction_internal(int sig, const struct sigaction *act,
                                     struct sigaction *oact);
/* dispatch.c: our disposition of a sampling signal (dispatch(), with
 * every signal but SIGSEGV and SIGBUS blocked, SA_RESTART, SA_ONSTACK);
 * whether sa is a handler (neither SIG_DFL nor SIG_IGN). */
HIDDEN NO_TSAN void signal_our_action(struct sigaction *sa);
HIDDEN NO_TSAN int signal_has_handler(const struct sigaction *sa);
/* dispatch.c, in a handler: bytes of the alternate signal stack below addr
 * (signal_alt_below()) or below the caller (signal_alt_room()) when that
 * lies on it; SIZE_MAX when it does not. */
HIDDEN NO_TSAN size_t signal_alt_below(const void *ucontext, uintptr_t addr);
HIDDEN NO_TSAN size_t signal_alt_room(const void *ucontext);
/* perf_trap.c: the process runs under valgrind (its vgpreload_*.so in
 * LD_PRELOAD): no sigtrap events, no SA_ONSTACK (dispatch.c). */
HIDDEN int engine_under_valgrind(void);
/* handover.c, for dispatch.c (takes the sigstate lock): the program's
 * disposition of sig, one of ours, into *p, a one-shot handler reset for
 * next time; 0 if sig is none of ours. */
HIDDEN NO_TSAN int signal_program_action(int sig, struct sigaction *p);

/* fault.c, sweeper: puts our SIGSEGV/SIGBUS handler back in front of one the
 * program installed without sigaction(); -1 if it could not. */
HIDDEN int fault_retake(void);
/* The handler libc's own sigaction() reads back for sig: the kernel's
 * (handover.c and fault.c compare it with what they installed). */
HIDDEN void *fault_kernel_handler(int sig);
/* The handler a disposition names (sa_sigaction or sa_handler). */
HIDDEN void *fault_action_handler(const struct sigaction *k);

/* Its address identifies our timers' signals (defined in timers.c). */
extern const char profil_timer_tag HIDDEN;
/*
 * The sigev_value our timer for thread tid carries.  On 64-bit systems the
 * high half is the low 32 bits of &profil_timer_tag (unique to this copy
 * of the library in the process) and the low half is tid, so the handler
 * learns which thread it interrupted with no system call.  On 32-bit
 * systems the value is &profil_timer_tag alone and the tid reads as 0.
 */
static inline void *timer_tag(pid_t tid)
{
#if UINTPTR_MAX > 0xffffffffu
	return (void *)(((uintptr_t)(uint32_t)(uintptr_t)&profil_timer_tag << 32) |
	                (uint32_t)tid);
#else
	(void)tid;
	return (void *)&profil_timer_tag;
#endif
}

/* Whether si is one of our timers' expiries (not a kill(2), nor a timer
 * of the program's on the same signal). */
static inline int timer_tag_ours(const siginfo_t *si)
{
	if (si->si_code != SI_TIMER)
		return 0;
#if UINTPTR_MAX > 0xffffffffu
	return ((uintptr_t)si->si_value.sival_ptr >> 32) ==
	       (uint32_t)(uintptr_t)&profil_timer_tag;
#else
	return si->si_value.sival_ptr == &profil_timer_tag;
#endif
}

static inline pid_t timer_tag_tid(const siginfo_t *si)
{
	return (pid_t)(uint32_t)(uintptr_t)si->si_value.sival_ptr;
}

/* Descriptors at or above this are never used for an event (the handler's
 * table below has one slot per descriptor number). */
#define PERF_FD_MAX 16384

/*
 * The handler's state per event, indexed by the event's descriptor number
 * (fasync delivery) or by its slot (sigtrap events, which are held by
 * mappings: perf_mapped.c).  One struct a number rather than an array a
 * field: a process's first events use the first numbers, and their
 * fields written at its start, and again in a forked child (copy on
 * write), are one page instead of three (docs/benchmarks.md "2026-12-05,
 * fourth").  Read by the signal handler (sample.c), and by dispatch.c and
 * exec.c to tell our signals from the program's.
 *
 * tid says what descriptor number fd is to us:
 *     0   not ours (never was, or the program's since);
 *     > 0 our live event sampling thread tid = the value;
 *     -1  one of ours, closed: a signal it queued before it was closed
 *         may still arrive and is ignored, never passed to the program.
 * Written atomically with the engine lock held: set to the tid before the
 * event is enabled, to -1 before the descriptor is closed.  It stays -1
 * until we reuse the number, so the program's own O_ASYNC descriptor that
 * gets the number of a closed one of ours, with F_SETSIG on the very
 * signal we sample with, would lose its signals to us (documented in
 * profil(3)).
 *
 * gen: the generation a sigtrap event's sig_data carries (below), bumped
 * with the engine lock held before each event on the number is opened.
 *
 * base: the thread's CPU time (ns) up to which its samples have been
 * credited.  Set when the event is enabled to the thread's CPU time
 * (engine lock); after that written only by the handler on the event's
 * own thread (perf_trap.h).  Relaxed atomics: one writer at a time, never
 * torn.
 *
 * page, start: perf_mapped.c's, never read by the handler: the mapping
 * that holds a mapped event (NULL: the slot is free) and its thread's
 * start time in clock ticks (0: not kept).  Engine lock.  Here, not in
 * an array of their own, because a process's first event then writes one
 * page of this table, not two: a page fault at every start and a
 * copy-on-write fault after every fork, on each side.
 */
struct perf_fd_state {
	_Atomic int tid;
	_Atomic unsigned int gen;
	_Atomic int64_t base;
	void *page;
	unsigned long long start;
};
extern struct perf_fd_state perf_fd_state[PERF_FD_MAX] HIDDEN;

#ifndef TRAP_PERF
#define TRAP_PERF 6 /* <asm-generic/siginfo.h>; glibc 2.36 lacks it */
#endif

/* A sigtrap event's sig_data (perf_trap.h), given back after si_addr in
 * the kernel's siginfo (union _sigfault._perf._data), which glibc 2.36
 * does not name. */
typedef unsigned long __attribute__((may_alias)) perf_trap_word;
static inline unsigned long perf_trap_data(const siginfo_t *si)
{
	return *(const perf_trap_word *)(const void *)((const char *)&si->si_addr +
	                                               sizeof(void *));
}

/*
 * A sigtrap event's sig_data: its descriptor number in the low 16 bits,
 * and above them the generation perf_fd_state[].gen held for that number
 * when the event was opened.  A trap queued by an event already closed
 * can arrive after the number went to a new event (perf_trap.c); the
 * generation tells the two apart.
 */
#define PERF_TRAP_FD_BITS 16

/* The descriptor whose event sent si: si_fd of a fasync signal (POLL_IN;
 * never on SIGTRAP, whose code 1 is TRAP_BRKPT), the descriptor of a
 * sigtrap one; -1 when si comes from no event.  *stale is set for a trap
 * of an earlier event that had the same number. */
static inline int perf_sig_fd_of(const siginfo_t *si, int *stale)
{
	*stale = 0;
	if (si->si_signo == SIGTRAP) {
		if (si->si_code != TRAP_PERF)
			return -1;
		unsigned long d = perf_trap_data(si);
		unsigned int fd = (unsigned int)(d & ((1ul << PERF_TRAP_FD_BITS) - 1));
		if (fd >= PERF_FD_MAX)
			return -1;
		*stale = (unsigned int)(d >> PERF_TRAP_FD_BITS) !=
		         atomic_load_explicit(&perf_fd_state[fd].gen, memory_order_relaxed);
		return (int)fd;
	}
	if (si->si_code != POLL_IN || (unsigned int)si->si_fd >= PERF_FD_MAX)
		return -1;
	return si->si_fd;
}

/* For a signal from one of our events: the thread it samples (> 0), or -1
 * for a stale one of a closed event; 0 when the signal is not ours.
 * *fdp: the event's descriptor (or slot), -1 if none. */
static inline int perf_sig_tid_fd(const siginfo_t *si, int *fdp)
{
	int stale, fd = *fdp = perf_sig_fd_of(si, &stale);
	if (fd < 0)
		return 0;
	int tid = atomic_load_explicit(&perf_fd_state[fd].tid, memory_order_relaxed);
	/* a stale trap is ours all the same (never the program's) */
	return stale && tid != 0 ? -1 : tid;
}

static inline int perf_sig_tid(const siginfo_t *si)
{
	int fd;
	return perf_sig_tid_fd(si, &fd);
}

static inline int perf_sig_ours(const siginfo_t *si)
{
	return perf_sig_tid(si) != 0;
}

#endif
