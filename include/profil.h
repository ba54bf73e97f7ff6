/*
 * profil.h - execution-time profiling for Linux: profil(), its multi-range
 * forms, pcsample(), monitor() and gmon.out output.
 *
 * Link with -lprofil (pkg-config: profil) or preload libprofil.so.  The
 * library's profil() replaces glibc's; its semantics are those of
 * profil(3) and docs/contract.md: every thread is sampled, counts are in
 * units of 1/profil_hz() CPU seconds, stopping is final, and the program's
 * own signals keep working.
 *
 * Every function here is thread-safe.  None is async-signal-safe: do not
 * call them from a signal handler.
 */
#ifndef PROFIL_H
#define PROFIL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The profil agent builds the engine with PROFIL_API defined empty: its
 * copy of these functions stays hidden (agent/agent.h). */
#ifndef PROFIL_API
#define PROFIL_API __attribute__((visibility("default")))
#endif

/*
 * glibc's <unistd.h> declares profil() too, in C++ with glibc's __THROW
 * (noexcept).  Two C++ declarations of one function must agree on it, so
 * ours uses the same macro, whichever header comes first.
 */
#if defined(__cplusplus) && defined(__has_include)
#if __has_include(<sys/cdefs.h>)
#include <sys/cdefs.h>
#endif
#endif
#if defined(__cplusplus) && defined(__THROW)
#define PROFIL_THROW __THROW
#else
#define PROFIL_THROW
#endif

/*
 * Classic form (every Unix): count samples of the program counter pc in
 * buf[floor(floor((pc - offset) / 2) * scale / 65536)] when pc >= offset
 * and the index is below bufsiz / 2.  scale 0 or 1, buf NULL or bufsiz 0
 * stop profiling; scale 2 counts every sample in buf[0].
 *
 * Extended forms through the same symbol (see profil(3)):
 *   profil((unsigned short *)args, n, (size_t)-1, 0)  Tru64 profil_args[n]
 *   profil((unsigned short *)profs, (size_t)-1, 0, 0) AIX struct prof[]
 *                                                     (<profil_aix.h>)
 * Returns 0, or -1 with errno (EINVAL, EFAULT, EAGAIN, ENOMEM).
 */
PROFIL_API int profil(unsigned short *buf, size_t bufsiz, size_t offset,
                      unsigned int scale) PROFIL_THROW;

/* Tru64 multi-range argument: 32-bit counters, lowpc <= pc < highpc,
 * counter index floor(floor((pc - offset) / 4) * scale / 65536).
 * Arrays are ordered by decreasing lowpc and must not overlap. */
struct profil_args {
	unsigned int *buffer;
	void *highpc;
	void *lowpc;
	void *offset;
	unsigned int scale;
};

/* Most ranges one call of any multi-range form may give (Tru64's limit
 * was 64).  The same limit bounds sprofil()'s profcnt and the search for
 * the terminator of an AIX array. */
#define PROFIL_MAX_RANGES (1u << 20)

/*
 * sprofil() is glibc's, with glibc's ABI: include <sys/profil.h> for its
 * declaration and struct prof.  It is not declared here because AIX's
 * struct prof (<profil_aix.h>) has the same tag.  See sprofil(3).
 */

/* Samples per CPU second of each thread; the unit of every count. */
PROFIL_API unsigned int profil_hz(void);

/* Set the sampling rate (1..PROFIL_HZ_MAX).  Takes effect at once when
 * profiling is on.  Returns 0, or -1 with errno EINVAL. */
PROFIL_API int profil_set_hz(unsigned int hz);
#define PROFIL_HZ_DEFAULT 1000u
#define PROFIL_HZ_MAX 100000u

/* Which mechanism delivers samples. */
enum profil_engine {
	PROFIL_ENGINE_OFF = 0,          /* not profiling */
	PROFIL_ENGINE_THREAD_TIMERS = 1, /* one CPU-time timer per thread */
	PROFIL_ENGINE_PERF_EVENTS = 2    /* one perf_event (task-clock) per
	                                    thread, where the system allows */
};

/* Why profiling last stopped by itself (not by a call). */
enum profil_stop_reason {
	PROFIL_STOP_NONE = 0,
	PROFIL_STOP_FAULT = 1,      /* a buffer stopped being writable */
	PROFIL_STOP_PCSAMPLE_FULL = 2, /* pcsample() buffer filled up */
	PROFIL_STOP_SIGNAL_TAKEN = 3   /* the program replaced the handler of
	                                  the sampling signal without going
	                                  through sigaction() (a raw system
	                                  call: Go's runtime does it) and no
	                                  other signal was free to move to */
};

/*
 * Counters since the last call that started profiling.  Sample counts are
 * weighted: a timer expiry the kernel folded into one signal (an overrun)
 * counts as a sample of its own, so ticks / profil_hz() is CPU seconds.
 */
struct profil_stats {
	unsigned long long signals;      /* sampling signals handled */
	unsigned long long ticks;        /* weighted samples taken */
	unsigned long long in_range;     /* ... counted in a bin */
	unsigned long long out_of_range; /* ... outside every range */
	unsigned long long saturated;    /* ... whose bin was already full */
	unsigned long long overruns;     /* expiries folded into a signal */
	unsigned long long faults;       /* buffer writes that faulted */
	unsigned int hz;                 /* rate the counts are in */
	int signal;                      /* signal used, 0 when off */
	enum profil_engine engine;       /* mechanism in use */
	enum profil_stop_reason stopped; /* why it stopped by itself */
	unsigned int threads;            /* threads with a live timer */
	/* Added in 1.1 (at the end: the layout above is unchanged). */
	unsigned long long reconciled;   /* ... credited when a thread exited,
	                                    for expiries never delivered */
	unsigned int untimed;            /* threads left without a timer to
	                                    spare the signal-queue limit */
	unsigned long long exec_lost;    /* the program's own pending signals
	                                    (of the one we sample with) that
	                                    could not be queued again around an
	                                    exec: no room (RLIMIT_SIGPENDING) */
	/* Added in 1.2. */
	unsigned int real_hz;            /* distinct samples per CPU second
	                                    the engine delivers: hz with perf
	                                    events (up to the kernel's cap),
	                                    at most the kernel tick with
	                                    timers (the rest are overruns) */
	int perf_error;                  /* why perf events are not in use:
	                                    an errno value (EACCES, EPERM,
	                                    ENOSYS, EMFILE, ERANGE: rate above
	                                    the kernel's cap), 0 when in use
	                                    or not tried */
	/* Added in 1.3. */
	unsigned long long deferred;     /* weight of samples that fell where the
	                                    interrupted code blocked SIGSEGV or
	                                    SIGBUS (a faulting write could not be
	                                    recovered there): not written then,
	                                    added to that thread's next sample */
};

/* Fill *st.  Returns 0, or -1 with errno EINVAL when st is NULL. */
PROFIL_API int profil_get_stats(struct profil_stats *st);

/* Name of an engine, e.g. "thread-cputime-timers". */
PROFIL_API const char *profil_engine_name(enum profil_engine e);

/*
 * Solaris pcsample(): store raw pc values in samples[0..nsamples-1].  The
 * first call returns 0; each later call returns how many samples the
 * previous call stored.  nsamples 0 stops; a full buffer stops sampling.
 * Replaces any profil() configuration and is replaced by any.
 */
PROFIL_API long pcsample(uintptr_t samples[], long nsamples);

/*
 * Solaris/Tru64 monitor(): profile [lowpc, highpc) into buffer (bufsize
 * WORDs, unsigned short each); monitor(NULL, ...) stops and writes
 * gmon.out (PROFIL_GMON overrides the path).  See monitor(3).
 */
PROFIL_API void monitor(int (*lowpc)(void), int (*highpc)(void), unsigned short *buffer,
                        size_t bufsize, size_t nfunc);

/*
 * Write the current histogram(s), or after a stop the last ones, as
 * gmon.out files for GNU gprof: path for the executable's range, and a
 * derived name per other object (see profil_write_gmon(3)).  Writing is
 * atomic.  Returns 0, or -1 with errno.
 */
PROFIL_API int profil_write_gmon(const char *path);

#ifdef __cplusplus
}
#endif

#endif /* PROFIL_H */
