/*
 * safety.h - helpers shared by the safety tests (issue 3): spinning
 * threads, snapshots of process state, tool-aware skipping.
 */
#ifndef PROFIL_TEST_SAFETY_H
#define PROFIL_TEST_SAFETY_H

#include "runner.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "profil.h"

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000 /* set by libc, not by the program */
#endif

/* Seconds of stress from PROFIL_STRESS (make stress), else dflt. */
static inline double stress_seconds(double dflt)
{
	const char *s = getenv("PROFIL_STRESS");
	return s && *s ? atof(s) : dflt;
}

static inline double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Threads that burn CPU until spinners_stop(). */
struct spinners {
	atomic_int run;
	int n;
	pthread_t th[16];
};

static void *spinner_main(void *p)
{
	struct spinners *s = p;
	volatile unsigned long x = 0;
	while (atomic_load_explicit(&s->run, memory_order_relaxed))
		for (int i = 0; i < 10000; i++)
			x = x * 31 + (unsigned long)i;
	return NULL;
}

static inline void spinners_start(struct spinners *s, int n)
{
	atomic_store(&s->run, 1);
	s->n = n;
	for (int i = 0; i < n; i++)
		ASSERT_EQ(pthread_create(&s->th[i], NULL, spinner_main, s), 0);
}

static inline void spinners_stop(struct spinners *s)
{
	atomic_store(&s->run, 0);
	for (int i = 0; i < s->n; i++)
		pthread_join(s->th[i], NULL);
	s->n = 0;
}

/*
 * Burn about `seconds` of CPU on this thread.  The work is a calibrated
 * number of iterations (iters_for()), not a loop that reads the thread's
 * CPU clock: on Linux 6.18 a thread that reads its own CPU clock thousands
 * of times a second while it competes for a CPU can go hundreds of
 * milliseconds without its CPU timer being fired (the expiries are then
 * delivered at once as an overrun), which would make the totals at the
 * end of a short test depend on that kernel behaviour rather than on ours.
 */
static inline void burn(double seconds)
{
	volatile unsigned long x = 0;
	unsigned long n = iters_for(seconds);
	for (unsigned long i = 0; i < n; i++)
		x = x * 31 + i;
}

/* Entries in a /proc/self directory (fd, task). */
static inline int count_dir(const char *path)
{
	DIR *d = opendir(path);
	ASSERT(d);
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		n += de->d_name[0] != '.';
	closedir(d);
	return n - (strcmp(path, "/proc/self/fd") == 0); /* opendir's own */
}

/* What profiling must leave as it found: dispositions, threads, fds. */
struct proc_state {
	struct sigaction prof, segv, bus, rtmax;
	int nfd, ntask;
};

static inline void proc_state_get(struct proc_state *p)
{
	memset(p, 0, sizeof *p);
	sigaction(SIGPROF, NULL, &p->prof);
	sigaction(SIGSEGV, NULL, &p->segv);
	sigaction(SIGBUS, NULL, &p->bus);
	sigaction(SIGRTMAX, NULL, &p->rtmax);
	p->nfd = count_dir("/proc/self/fd");
	p->ntask = count_dir("/proc/self/task");
}

#define ASSERT_SAME_ACTION(a, b) do { \
	ASSERT((a).sa_handler == (b).sa_handler); \
	ASSERT_EQ((a).sa_flags & ~SA_RESTORER, (b).sa_flags & ~SA_RESTORER); \
} while (0)

static inline void proc_state_same(const struct proc_state *a, const struct proc_state *b)
{
	ASSERT_SAME_ACTION(a->prof, b->prof);
	ASSERT_SAME_ACTION(a->segv, b->segv);
	ASSERT_SAME_ACTION(a->bus, b->bus);
	ASSERT_SAME_ACTION(a->rtmax, b->rtmax);
	ASSERT_EQ(a->nfd, b->nfd);
	ASSERT_EQ(a->ntask, b->ntask);
}

/* Waits up to `secs` for profiling to turn itself off. */
static inline int wait_engine_off(double secs)
{
	struct profil_stats st;
	double end = mono_now() + secs;
	do {
		ASSERT_OK(profil_get_stats(&st));
		if (st.engine == PROFIL_ENGINE_OFF)
			return 1;
		usleep(10000);
	} while (mono_now() < end);
	return 0;
}

#endif
