/*
 * rec.h - programs that `profil record` tests profile (test/rec/).  Each
 * hot function burns a known amount of its thread's CPU time, so their
 * shares are known: equal units, equal CPU time.
 *
 * Why CPU time and not a fixed amount of work: a profiler divides CPU
 * time, and on a virtual machine equal work is not equal CPU time.  Two
 * threads doing the same loop on two vCPUs were measured at 60/40 in one
 * CI run and 50/50 in the next (a neighbour on the host's sibling
 * hyperthread slows one vCPU; the guest still counts the time as the
 * thread's), which no sampling bound derived from the sample count can
 * absorb.  The loop asks the thread's CPU clock once per REC_CHECK
 * iterations (about 1.4 ms here; the clock is a system call of well
 * under a microsecond), so the clock's own code gets a few hundredths
 * of a percent of the samples and a call overshoots by at most one
 * check's worth of work.
 */
#ifndef PROFIL_TEST_REC_H
#define PROFIL_TEST_REC_H

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* One unit: 5 ms of the thread's CPU time (about what REC_UNIT
 * iterations of the loop below take on the development machine). */
#define REC_UNIT_NS 5000000ULL
#define REC_UNIT 4000000UL
#define REC_CHECK (REC_UNIT / 4)

static inline unsigned long long rec_thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL +
	       (unsigned long long)ts.tv_nsec;
}

/* The same loop body everywhere.  salt makes each copy's code differ:
 * GCC merges identical functions (-fipa-icf), which would give two hot
 * functions one name. */
#define REC_BURN(units, salt) do { \
	volatile unsigned long rec_acc_ = (salt); \
	unsigned long long rec_end_ = rec_thread_ns() + \
	                              (unsigned long long)(units) * REC_UNIT_NS; \
	while (rec_thread_ns() < rec_end_) \
		for (unsigned long rec_i_ = 0; rec_i_ < REC_CHECK; rec_i_++) \
			rec_acc_ += rec_i_ ^ (rec_acc_ >> 3); \
} while (0)

/* The library name beside the program named self (its argv[0]), opened
 * with dlopen; NULL with the reason on stderr. */
static inline void *rec_open_beside(const char *self, const char *name)
{
	char path[4096];
	const char *slash = strrchr(self, '/');
	snprintf(path, sizeof path, "%.*s%s", slash ? (int)(slash - self + 1) : 0, self, name);
	void *h = dlopen(path, RTLD_NOW);
	if (!h)
		fprintf(stderr, "%s: %s\n", self, dlerror());
	return h;
}

/* librecplug.so, so opened */
static inline void *rec_open_plug(const char *self)
{
	return rec_open_beside(self, "librecplug.so");
}

void lib_hot(unsigned long units);   /* librec.so */
void plug_hot(unsigned long units);  /* librecplug.so, dlopen'ed */
void alt_hot(unsigned long units);   /* librecalt.so, dlopen'ed */
unsigned long recctor_burned(void); /* librecctor.so: what its constructor burned */
/* librecargs.c: what its constructor was passed (rec-ctor dlopen()s it) */
int recargs_argc(void);
const char *recargs_argv0(void);

#endif
