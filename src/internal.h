/*
 * internal.h - the range table every interface form compiles to, and the
 * engine calls that publish it.  Nothing here is exported: the library is
 * built with -fvisibility=hidden and only PROFIL_API names leave it.
 *
 * The shape of the library:
 *
 *   profil.c, forms_*.c, sprofil.c, pcsample.c, monitor.c
 *       validate a caller's arguments and build a struct ptable
 *   engine.c
 *       publishes a table atomically, retires the old one (waiting for
 *       handlers still reading it), and starts/stops the timers
 *   timers.c, threads.c, signals.c, handover.c
 *       one CPU-time timer per thread; thread creation interposed; the
 *       sampling signal chosen and installed
 *   sample.c
 *       the signal handler: reads the published table, bumps one counter
 */
#ifndef PROFIL_INTERNAL_H
#define PROFIL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profil.h"

struct ring_file;

#define HIDDEN __attribute__((visibility("hidden")))

/* How a range turns a pc into a counter. */
enum prange_kind {
	PRANGE_HIST = 0, /* counter index from the bin formula */
	PRANGE_TICK = 1  /* every sample counts in counter 0 (scale 2) */
};

/*
 * One histogram: samples with lowpc <= pc < highpc count in
 *   buf[floor(floor((pc - offset) >> shift) * scale / 65536)]
 * when that index is below nbins.  shift is 1 for 16-bit forms (2 bytes of
 * text per counter at scale 0x10000) and 2 for Tru64's 32-bit counters.
 * width is the counter size in bytes: 2 or 4.  buf is aligned to width.
 */
struct prange {
	uintptr_t lowpc;
	uintptr_t highpc;
	uintptr_t offset;
	void *buf;
	size_t nbins;
	uint32_t scale;
	uint8_t shift;
	uint8_t width;
	uint8_t kind;
};

enum ptable_mode {
	PTABLE_HIST = 0,    /* ranges[] histograms */
	PTABLE_PCSAMPLE = 1, /* raw pcs into pcbuf (Solaris pcsample) */
	PTABLE_RING = 2      /* records into a shared sample ring (ring.h) */
};

/* Which public form built the table; kept for profil_write_gmon(). */
enum ptable_form {
	PFORM_CLASSIC = 0,
	PFORM_TRU64,
	PFORM_AIX,
	PFORM_SPROFIL,
	PFORM_PCSAMPLE,
	PFORM_MONITOR,
	PFORM_RING
};

/*
 * The configuration the signal handler reads.  Built by a caller, then
 * published by engine_publish(); from then on IMMUTABLE except the fields
 * marked atomic, until engine_publish() of a successor has returned, after
 * which no handler can still be reading it and it is freed.
 *
 * ranges[] is sorted by ascending lowpc and does not overlap, so the
 * handler finds a pc's range by binary search.  overflow, when set, points
 * at a counter that receives samples outside every range (sprofil's
 * overflow bin).
 */
struct ptable {
	enum ptable_mode mode;
	enum ptable_form form;
	void *overflow;      /* NULL, or a counter of overflow_width bytes */
	uint8_t overflow_width;

	uintptr_t *pcbuf;    /* PTABLE_PCSAMPLE: caller's array */
	size_t pccap;        /* its length */
	_Atomic size_t pcnext; /* atomic: next free slot (may pass pccap) */

	struct ring_file *ring; /* PTABLE_RING: control block (ring.h) */
	unsigned char *ring_data; /* its record area, ring->data_size bytes */
	uint32_t stack_depth;   /* PTABLE_RING: most frames per sample (leaf
	                           included, <= RING_MAX_DEPTH); 0 or 1: the
	                           leaf only (unwind.h) */

	size_t nranges;
	struct prange ranges[];
};

/* Largest number of ranges one table may hold (documented in profil(3)). */
#define PTABLE_MAX_RANGES (1u << 20)

/* ptable.c */
HIDDEN struct ptable *ptable_new(size_t nranges);
HIDDEN void ptable_free(struct ptable *t);
/* Sort ranges by lowpc; EINVAL if two overlap or one is empty. */
HIDDEN int ptable_sort_check(struct ptable *t);
/* Highest pc + 1 that bin arithmetic can map below nbins (for HIST). */
HIDDEN uintptr_t prange_end(const struct prange *r);

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
/* Called with the engine lock held to read the last published HIST table
 * (current or last stopped) for gmon output; returns a copy or NULL. */
HIDDEN struct ptable *engine_last_hist_copy(void);

/* probe.c: 0 if [p, p+len) is entirely mapped writable, else -1 EFAULT.
 * Reads /proc/self/maps; touches no byte of the range. */
HIDDEN int probe_writable(const void *p, size_t len);

/* hz.c */
HIDDEN unsigned int hz_current(void);
/* One line on stderr: "profil: NAME=VALUE what". */
HIDDEN void env_warning(const char *name, const char *value, const char *what);

/*
 * Published state read by the signal handler (sample.c).  Defined in
 * engine.c, documented there.
 */
extern _Atomic(struct ptable *) profil_published HIDDEN;
extern _Atomic unsigned int profil_inflight HIDDEN;

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

/*
 * engine lock: serialises every configuration change.  Never taken in
 * signal context.  Held across fork by the atfork handlers.
 */
HIDDEN void engine_lock(void);
HIDDEN void engine_unlock(void);
HIDDEN int engine_trylock(void);     /* 0 when taken */
HIDDEN int engine_held_here(void);   /* this thread holds it (or is taking
                                        or releasing it) */
/* Sweeper, lock held: stop timers left running after a fault withdrew
 * the published table. */
HIDDEN void engine_reap(void);
/* inflight.c: waits until no handler is between its profil_inflight
 * increment and decrement. */
HIDDEN void inflight_drain(void);

/* timers.c (engine lock held for all of these) */
HIDDEN int timers_start(int sig, unsigned int hz); /* all threads; -1 errno */
HIDDEN void timers_stop(void);                      /* delete every timer */
HIDDEN int timers_set_hz(unsigned int hz);
HIDDEN int timers_resignal(int sig);      /* all timers to sig, all or nothing */
HIDDEN int timers_rescan(void);        /* cover new threads, drop dead ones */
HIDDEN int timers_add_self(void);      /* calling thread, if not covered */
HIDDEN int timers_add_born(void);      /* same, counting from its CPU time 0 */
/* At the calling thread's exit: delete its timer and say in *owed how many
 * expiries of its grid (cpugrid.h) it passed beyond the `credited` ones its
 * handler saw; -1 if it had no timer. */
HIDDEN int timers_reconcile_self(unsigned long credited, unsigned long *owed);
HIDDEN unsigned int timers_count(void);
HIDDEN unsigned int timers_untimed(void); /* threads refused a timer */
HIDDEN int timers_signal(void);        /* signal in use, 0 when stopped */
HIDDEN void timers_forget_all(void);   /* after fork in the child: the
                                          parent's timers do not exist */
HIDDEN void timers_exclude(pid_t tid); /* never sample this thread */
HIDDEN unsigned int timers_hz(void);
HIDDEN pid_t timers_owner(void);       /* process the timers belong to;
                                          atomic, readable without lock */

/* signals.c, handover.c (engine lock held, not in signal context) */
HIDDEN int signal_choose(void);        /* signal number, or -1 errno */
HIDDEN int signal_free_rt(int not);    /* a free real-time signal, or -1 */
HIDDEN int signal_install(int sig);    /* records the program's disposition */
HIDDEN void signal_restore(void);      /* discards pending, gives it back */
/* Carries out a move the program asked for by installing a handler on
 * the sampling signal (the interposer only records it). */
HIDDEN void signal_settle(void);
/* Sampling signal, or 0: atomic, read without the lock by sigwrap.c. */
HIDDEN int signal_sampling(void);

/* sweeper.c: the fallback thread that covers threads no hook saw. */
HIDDEN int sweeper_start(void);
HIDDEN void sweeper_stop(void);        /* joins it; engine lock held */
HIDDEN void sweeper_forget(void);
HIDDEN void sweeper_wake(void);        /* sweep now; async-signal-safe */
/* The program's threads made through our pthread_create (threads.c), so
 * that the sweeper leaves once they and the main thread have all ended:
 * counted up before a thread exists, down as its last act; reset to the
 * one thread left in a forked child. */
HIDDEN void sweeper_thread_born(void);
HIDDEN void sweeper_thread_gone(void);
HIDDEN void sweeper_threads_reset(int n);

/* sweeper.c: called every sweep, no lock held (agent/). */
extern void (*_Atomic sweeper_tick_hook)(void) HIDDEN;
/* unwind_cache.c: an object's GNU build-id from its notes in memory; its
 * length, 0 if none (or longer than cap). */
struct dl_phdr_info;
HIDDEN size_t object_build_id(const struct dl_phdr_info *info, uint8_t *out, size_t cap);
/* fork.c: called last in a forked child, engine lock not held (agent/). */
extern void (*_Atomic fork_child_hook)(void) HIDDEN;

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
HIDDEN int threads_create_raw(pthread_t *th, const pthread_attr_t *attr,
                              void *(*fn)(void *), void *arg);      /* after fork in the child */

#endif /* PROFIL_INTERNAL_H */
