/*
 * threads.c - samples per CPU second of whichever profiler is loaded, with
 * N threads spinning in parallel (issue 2).
 *
 *   threads N SECONDS [-v]
 *
 * The same binary measures every implementation, so the only difference
 * between runs is what the dynamic linker resolves:
 *
 *   plain                          glibc's profil() (ITIMER_PROF)
 *   LD_PRELOAD=libprofil.so        ours (one CPU-time timer per thread)
 *   LD_PRELOAD=libprofiler.so      gperftools' CPU profiler (ProfilerStart)
 *
 * That is why nothing of ours is linked in: profil_hz() and friends are
 * looked up with dlsym and their presence says which profil() we got.
 *
 * Method.  N threads are created first and wait on a barrier, so every
 * implementation sees them (glibc's timer is process-wide anyway; ours
 * must find threads that predate the call).  Then: read the process CPU
 * clock, start profiling, release the threads, sleep SECONDS, stop the
 * threads, join them, stop profiling, read the CPU clock again.  All the
 * CPU time between the two reads is inside the profiling window.
 *
 * Each thread spins in a function of its own, all of them in one section
 * (bench_spin) so that sorting their addresses gives each one's exact
 * extent and nothing else sits between them: a sample is attributed to a
 * thread by its pc alone.  The histogram itself is a plain classic one,
 * one counter per 2 bytes over the whole program text, as a user of
 * profil() would set it up.
 *
 * Output: one line of key=value pairs for bench/run.sh, e.g.
 *   impl=ours threads=2 hz=1000 cpu=3.998 samples=3991 per_cpu_s=998.2
 *   ratio=0.998 signals=1000 sig_per_cpu_s=250.1 spread=1.01 other=0
 *   wall=2.001
 * ratio is samples / (cpu * hz): 1.0 means every CPU second was sampled
 * at the advertised rate.  signals counts the profiling signals handled,
 * i.e. distinct observations of a pc (see below where it is computed).  spread is the largest over the smallest
 * per-thread samples-per-CPU-second: 1.0 means each thread is sampled in
 * proportion to the CPU it used (normalising by each thread's own CPU
 * time keeps scheduler unevenness out of the figure).  other counts
 * samples in the text but in no spin function (main thread, startup).
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profil.h" /* types only: nothing of ours is linked (see above) */

#define MAX_THREADS 16

/* Linker-provided bounds: the text profil() histograms, and our section. */
extern char __executable_start[], etext[];
extern char __start_bench_spin[], __stop_bench_spin[];

static atomic_int stop_flag;

struct worker {
	pthread_t th;
	int index;
	void (*spin)(void);
	double cpu;   /* this thread's CPU seconds while released */
	uintptr_t lo, hi; /* extent of its spin function */
	unsigned long long samples;
};

static struct worker workers[MAX_THREADS];
static pthread_barrier_t barrier;

/*
 * Sixteen spin functions.  Each adds a different constant so that no two
 * bodies are identical: gcc's -fipa-icf (on at -O2) would otherwise fold
 * them into one and every thread would share an address range.  noinline
 * keeps each a real function with an address of its own.
 */
#define SPIN(k)                                                              \
	__attribute__((noinline, section("bench_spin"))) static void         \
	spin_##k(void)                                                       \
	{                                                                    \
		unsigned long n = 0;                                         \
		while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) \
			n += k + 1;                                          \
		sink += n;                                                   \
	}
static _Atomic unsigned long sink; /* the work must be observable */
SPIN(0) SPIN(1) SPIN(2) SPIN(3) SPIN(4) SPIN(5) SPIN(6) SPIN(7)
SPIN(8) SPIN(9) SPIN(10) SPIN(11) SPIN(12) SPIN(13) SPIN(14) SPIN(15)

static void (*const spins[MAX_THREADS])(void) = {
	spin_0, spin_1, spin_2, spin_3, spin_4, spin_5, spin_6, spin_7,
	spin_8, spin_9, spin_10, spin_11, spin_12, spin_13, spin_14, spin_15,
};

static double ts_sec(const struct timespec *t)
{
	return (double)t->tv_sec + (double)t->tv_nsec / 1e9;
}

static double clock_sec(clockid_t c)
{
	struct timespec t;
	if (clock_gettime(c, &t) != 0) {
		perror("clock_gettime");
		exit(1);
	}
	return ts_sec(&t);
}

static void *worker_main(void *p)
{
	struct worker *w = p;
	pthread_barrier_wait(&barrier);
	/* Own CPU time from release on: creation and waiting are excluded,
	 * they happened before profiling started. */
	double t0 = clock_sec(CLOCK_THREAD_CPUTIME_ID);
	w->spin();
	w->cpu = clock_sec(CLOCK_THREAD_CPUTIME_ID) - t0;
	return NULL;
}

static int cmp_worker_lo(const void *a, const void *b)
{
	const struct worker *x = *(struct worker *const *)a;
	const struct worker *y = *(struct worker *const *)b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Give every spin function (all of them, not only the n in use, so the
 * extents are exact) its [lo, hi): from its address to the next one's. */
static void spin_extents(void)
{
	struct worker *order[MAX_THREADS];
	for (int i = 0; i < MAX_THREADS; i++) {
		workers[i].lo = (uintptr_t)spins[i];
		order[i] = &workers[i];
	}
	qsort(order, MAX_THREADS, sizeof order[0], cmp_worker_lo);
	for (int i = 0; i < MAX_THREADS; i++) {
		order[i]->hi = i + 1 < MAX_THREADS ? order[i + 1]->lo
		                                   : (uintptr_t)__stop_bench_spin;
		if (order[i]->hi <= order[i]->lo) {
			fprintf(stderr, "threads: spin functions share an address\n");
			exit(1);
		}
	}
}

/* ---- gperftools: profile file (see its docs/cpuprofile-fileformat) ---- */

typedef int profiler_start_fn(const char *);
typedef void profiler_stop_fn(void);

/*
 * Sum the samples of a gperftools CPU profile and attribute each record by
 * its first pc, the interrupted one.  Words are native (64-bit here):
 * header 0, 3, 0, period_us, 0; then records count, npcs, pc[npcs]; then
 * the trailer 0, 1, 0.  Returns the rate (1e6 / period) or 0 on error.
 */
static unsigned int pprof_read(const char *path, int n,
                               unsigned long long *total,
                               unsigned long long *other)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 0;
	}
	uintptr_t h[5];
	unsigned int hz = 0;
	if (fread(h, sizeof h[0], 5, f) != 5 || h[0] != 0 || h[1] != 3 || h[4] != 0 ||
	    h[3] == 0)
		goto out;
	*total = *other = 0;
	for (;;) {
		uintptr_t rec[2], pc0 = 0;
		if (fread(rec, sizeof rec[0], 2, f) != 2)
			goto out;
		if (rec[0] == 0 && rec[1] == 1)
			break; /* trailer */
		for (uintptr_t i = 0; i < rec[1]; i++) {
			uintptr_t pc;
			if (fread(&pc, sizeof pc, 1, f) != 1)
				goto out;
			if (i == 0)
				pc0 = pc;
		}
		*total += rec[0];
		int hit = 0;
		for (int t = 0; t < n; t++)
			if (pc0 >= workers[t].lo && pc0 < workers[t].hi) {
				workers[t].samples += rec[0];
				hit = 1;
			}
		if (!hit && pc0 >= (uintptr_t)__executable_start && pc0 < (uintptr_t)etext)
			*other += rec[0];
	}
	hz = (unsigned int)(1000000 / h[3]);
out:
	if (!hz)
		fprintf(stderr, "threads: %s: not a gperftools CPU profile\n", path);
	fclose(f);
	return hz;
}

static void usage(void)
{
	fprintf(stderr, "usage: threads N SECONDS [-v]   (1 <= N <= %d)\n", MAX_THREADS);
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "-v") != 0))
		usage();
	int n = atoi(argv[1]);
	double secs = atof(argv[2]);
	int verbose = argc == 4;
	if (n < 1 || n > MAX_THREADS || !(secs > 0 && secs < 3600))
		usage();

	/* Which profiler did the dynamic linker give us? */
	unsigned int (*our_hz)(void) = (unsigned int (*)(void))dlsym(RTLD_DEFAULT, "profil_hz");
	int (*our_stats)(struct profil_stats *) =
		(int (*)(struct profil_stats *))dlsym(RTLD_DEFAULT, "profil_get_stats");
	profiler_start_fn *gp_start = (profiler_start_fn *)dlsym(RTLD_DEFAULT, "ProfilerStart");
	profiler_stop_fn *gp_stop = (profiler_stop_fn *)dlsym(RTLD_DEFAULT, "ProfilerStop");
	const char *impl;
	unsigned int hz;
	int is_gp = 0;
	if (our_hz) {
		impl = "ours";
		hz = our_hz();
	} else if (gp_start && gp_stop) {
		/* gperftools owns SIGPROF and ITIMER_PROF; glibc's profil()
		 * would take both over, so it is not called in this mode. */
		impl = "gperftools";
		is_gp = 1;
		hz = 0; /* read from the profile's header */
	} else {
		/* glibc's profil() arms ITIMER_PROF at 1e6 / __profile_frequency()
		 * microseconds; on Linux that is AT_CLKTCK (USER_HZ), 100. */
		int (*pf)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "__profile_frequency");
		impl = "glibc";
		hz = pf ? (unsigned int)pf() : (unsigned int)sysconf(_SC_CLK_TCK);
	}

	spin_extents();

	/* The histogram: the whole program text, one counter per 2 bytes.
	 * The spin section is inside it unless the linker put it elsewhere. */
	uintptr_t lo = (uintptr_t)__executable_start, hi = (uintptr_t)etext;
	if ((uintptr_t)__start_bench_spin < lo)
		lo = (uintptr_t)__start_bench_spin;
	if ((uintptr_t)__stop_bench_spin > hi)
		hi = (uintptr_t)__stop_bench_spin;
	size_t bytes = (hi - lo + 1) & ~(size_t)1;
	unsigned short *buf = calloc(bytes / 2, sizeof *buf);
	if (!buf) {
		perror("calloc");
		return 1;
	}

	if (pthread_barrier_init(&barrier, NULL, (unsigned)n + 1) != 0) {
		fprintf(stderr, "threads: pthread_barrier_init failed\n");
		return 1;
	}
	for (int i = 0; i < n; i++) {
		workers[i].index = i;
		workers[i].spin = spins[i];
		int e = pthread_create(&workers[i].th, NULL, worker_main, &workers[i]);
		if (e) {
			fprintf(stderr, "threads: pthread_create: %s\n", strerror(e));
			return 1;
		}
	}

	char gp_path[64];
	snprintf(gp_path, sizeof gp_path, "/tmp/bench-threads-%ld.prof", (long)getpid());

	double cpu0 = clock_sec(CLOCK_PROCESS_CPUTIME_ID);
	double wall0 = clock_sec(CLOCK_MONOTONIC);
	if (is_gp) {
		if (!gp_start(gp_path)) {
			fprintf(stderr, "threads: ProfilerStart failed\n");
			return 1;
		}
	} else if (profil(buf, bytes, lo, 0x10000) != 0) {
		perror("profil");
		return 1;
	}
	pthread_barrier_wait(&barrier);

	/* Absolute deadline: a profiling signal interrupts the sleep (EINTR
	 * even under SA_RESTART), and resuming must not extend it. */
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)secs;
	until.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;

	atomic_store(&stop_flag, 1);
	for (int i = 0; i < n; i++)
		pthread_join(workers[i].th, NULL);

	/* A NULL the compiler cannot see: glibc declares profil's buffer
	 * __nonnull, and a literal NULL would trip -Wnonnull. */
	unsigned short *volatile none = NULL;
	struct profil_stats st;
	int have_stats = 0;
	if (is_gp) {
		gp_stop();
	} else if (profil(none, 0, 0, 0) != 0) {
		perror("profil(stop)");
		return 1;
	}
	double cpu = clock_sec(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
	double wall = clock_sec(CLOCK_MONOTONIC) - wall0;

	/* Ours keeps its counters after a stop: a cross-check for -v. */
	if (our_stats)
		have_stats = our_stats(&st) == 0;

	unsigned long long total = 0, other = 0, saturated = 0, signals;
	if (is_gp) {
		hz = pprof_read(gp_path, n, &total, &other);
		if (!verbose)
			unlink(gp_path);
		if (!hz)
			return 1;
	} else {
		for (size_t b = 0; b < bytes / 2; b++) {
			if (!buf[b])
				continue;
			uintptr_t pc = lo + 2 * b; /* scale 0x10000: bin b is 2 bytes */
			int hit = 0;
			for (int t = 0; t < n; t++)
				if (pc >= workers[t].lo && pc < workers[t].hi) {
					workers[t].samples += buf[b];
					hit = 1;
				}
			if (!hit)
				other += buf[b];
			saturated += buf[b] == 0xffff;
			total += buf[b];
		}
	}

	/*
	 * Signals: distinct looks at a pc.  Ours credits a signal that stands
	 * for several timer expiries (the kernel checks CPU timers once per
	 * tick) with all of them, at the pc it saw, so its sample counts can
	 * exceed its observations; glibc's and gperftools' handlers take one
	 * sample per signal.
	 */
	signals = have_stats ? st.signals : total;

	/* Spread: largest / smallest per-thread samples per CPU second. */
	double rmin = -1, rmax = 0;
	for (int t = 0; t < n; t++) {
		double r = workers[t].cpu > 0 ? (double)workers[t].samples / workers[t].cpu : 0;
		if (rmin < 0 || r < rmin)
			rmin = r;
		if (r > rmax)
			rmax = r;
	}
	char spread[32];
	if (rmin > 0)
		snprintf(spread, sizeof spread, "%.2f", rmax / rmin);
	else
		snprintf(spread, sizeof spread, "inf"); /* a thread never sampled */

	printf("impl=%s threads=%d hz=%u cpu=%.3f samples=%llu per_cpu_s=%.1f ratio=%.3f "
	       "signals=%llu sig_per_cpu_s=%.1f spread=%s other=%llu wall=%.3f\n",
	       impl, n, hz, cpu, total, cpu > 0 ? (double)total / cpu : 0.0,
	       cpu > 0 && hz ? (double)total / (cpu * hz) : 0.0, signals,
	       cpu > 0 ? (double)signals / cpu : 0.0, spread, other, wall);
	if (saturated)
		fprintf(stderr, "threads: warning: %llu bins saturated, totals are low\n",
		        saturated);
	if (verbose) {
		for (int t = 0; t < n; t++)
			fprintf(stderr, "  thread %2d: cpu %.3f s  samples %llu  per cpu s %.1f  "
			        "[%#" PRIxPTR ", %#" PRIxPTR ")\n",
			        t, workers[t].cpu, workers[t].samples,
			        workers[t].cpu > 0 ? (double)workers[t].samples / workers[t].cpu : 0.0,
			        workers[t].lo, workers[t].hi);
		fprintf(stderr, "  histogram [%#" PRIxPTR ", %#" PRIxPTR ") %zu bytes, sink %lu\n",
		        lo, hi, bytes, atomic_load(&sink));
		if (have_stats)
			fprintf(stderr, "  profil_get_stats: ticks %llu in_range %llu out_of_range %llu "
			        "overruns %llu signals %llu engine %d\n",
			        st.ticks, st.in_range, st.out_of_range, st.overruns, st.signals,
			        (int)st.engine);
		if (is_gp)
			fprintf(stderr, "  profile kept: %s\n", gp_path);
	}
	return 0;
}
