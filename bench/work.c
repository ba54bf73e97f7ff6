/*
 * work.c - the synthetic workloads of bench/harness.sh, one binary so that
 * every profiler sees the same code.
 *
 *   work burn N UNITS        N threads, each burns UNITS units (fixed work:
 *                            overhead runs compare CPU time for equal work)
 *   work spin N SECONDS      N threads spin for SECONDS of wall time (totals
 *                            and fairness: the CPU used is measured, not
 *                            assumed), thread i in its own function spin_i%8
 *   work attr UNITS          one thread: share_a 25%, share_b 25%, share_c
 *                            10%, share_d 40% of UNITS (attribution)
 *   work short COUNT MS      COUNT threads of MS ms of CPU each, at most 2
 *                            alive at a time (short-lived threads)
 *   work idle N SECONDS      N threads asleep for SECONDS (sweeper cost)
 *   work startstop N         with libprofil preloaded: N threads alive,
 *                            time profil() start and stop (latency), and
 *                            the resident memory profiling added
 *
 * Every mode ends with one line on stdout, key=value pairs: cpu= the
 * process's CPU seconds (getrusage RUSAGE_SELF, read after the threads are
 * joined), and for spin the per-thread CPU seconds, tcpu0= ... tcpuN-1=.
 *
 * Threads call gperftools' ProfilerRegisterThread when it is loaded (looked
 * up with dlsym, nothing is linked): with CPUPROFILE_PER_THREAD_TIMERS=1 it
 * samples only registered threads, and without it the call is harmless.
 *
 * The work unit is a dependent chain of multiplications and adds: no memory
 * traffic and no system calls, so its CPU time does not depend on what else
 * runs, and it cannot be folded away (the result is stored to a volatile).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define UNIT_ITERS 100000ul /* about 0.1 ms per unit on this machine's cores */
#define MAX_THREADS 1024

static volatile uint64_t sink;

/* Resident memory of the process, KiB (/proc/self/statm's second field). */
static long rss_kib(void)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}
static atomic_int stop_flag;

#define BURN(name, salt)                                                       \
	__attribute__((noinline)) static void name(unsigned long units)        \
	{                                                                      \
		uint64_t x = (salt);                                           \
		for (unsigned long u = 0; u < units; u++)                      \
			for (unsigned long i = 0; i < UNIT_ITERS; i++)         \
				x = x * 6364136223846793005ull + (salt);       \
		sink = x;                                                      \
	}

/* attr: four functions with the same loop, so equal units are equal CPU. */
BURN(share_a, 1)
BURN(share_b, 3)
BURN(share_c, 5)
BURN(share_d, 7)
BURN(burn, 9)

/* spin: eight copies, so each of up to 8 threads has a function of its own
 * and any profiler's per-function counts are its per-thread counts. */
#define SPIN(k)                                                                \
	__attribute__((noinline)) static void spin_##k(void)                   \
	{                                                                      \
		uint64_t x = k;                                                \
		while (!atomic_load_explicit(&stop_flag, memory_order_relaxed)) \
			for (int i = 0; i < 10000; i++)                        \
				x = x * 6364136223846793005ull + k;            \
		sink = x;                                                      \
	}
SPIN(0) SPIN(1) SPIN(2) SPIN(3) SPIN(4) SPIN(5) SPIN(6) SPIN(7)
static void (*const spins[8])(void) = {spin_0, spin_1, spin_2, spin_3,
                                       spin_4, spin_5, spin_6, spin_7};

static double cpu_self(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static double clock_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void register_thread(void)
{
	void (*reg)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "ProfilerRegisterThread");
	if (reg)
		reg();
}

struct job {
	pthread_t t;
	int k;
	unsigned long units;
	double cpu;
};

static void *burn_main(void *p)
{
	struct job *j = p;
	register_thread();
	burn(j->units);
	return NULL;
}

static void *spin_main(void *p)
{
	struct job *j = p;
	register_thread();
	spins[j->k % 8]();
	j->cpu = clock_s(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/* Idle threads block in read() on a pipe that main closes at the end: no
 * wakeups of their own, so what the process spends is the profiler's. */
static int idle_pipe[2];
static atomic_long idle_ready; /* threads about to block */

static void *idle_main(void *p)
{
	char c;
	(void)p;
	atomic_fetch_add(&idle_ready, 1);
	while (read(idle_pipe[0], &c, 1) < 0)
		;
	return NULL;
}

static void start(struct job *j, void *(*fn)(void *))
{
	int e = pthread_create(&j->t, NULL, fn, j);
	if (e) {
		fprintf(stderr, "work: pthread_create: %s\n", strerror(e));
		exit(1);
	}
}

static int usage(void)
{
	fputs("usage: work burn N UNITS | spin N SECONDS | attr UNITS | short COUNT MS |"
	      " idle N SECONDS | startstop N\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return usage();
	const char *mode = argv[1];
	long n = atol(argv[2]);
	double arg = argc > 3 ? atof(argv[3]) : 0;
	static struct job jobs[MAX_THREADS];
	/* N counts threads alive at once except for attr and short. */
	if (n < 1 || (n > MAX_THREADS && strcmp(mode, "attr") && strcmp(mode, "short")))
		return usage();

	if (pipe(idle_pipe) != 0) {
		perror("work: pipe");
		return 1;
	}
	if (!strcmp(mode, "burn")) {
		for (long i = 0; i < n; i++) {
			jobs[i].units = (unsigned long)arg;
			start(&jobs[i], burn_main);
		}
		for (long i = 0; i < n; i++)
			pthread_join(jobs[i].t, NULL);
		printf("cpu=%.4f\n", cpu_self());
	} else if (!strcmp(mode, "spin")) {
		for (long i = 0; i < n; i++) {
			jobs[i].k = (int)i;
			start(&jobs[i], spin_main);
		}
		struct timespec d = {(time_t)arg, (long)((arg - (double)(time_t)arg) * 1e9)};
		nanosleep(&d, NULL);
		atomic_store(&stop_flag, 1);
		for (long i = 0; i < n; i++)
			pthread_join(jobs[i].t, NULL);
		printf("cpu=%.4f", cpu_self());
		for (long i = 0; i < n && i < 8; i++)
			printf(" tcpu%ld=%.4f", i, jobs[i].cpu);
		printf("\n");
	} else if (!strcmp(mode, "attr")) {
		/* Interleaved in small slices, so a burst of load on the machine
		 * hits all four alike: 100 rounds of 25/25/10/40. */
		unsigned long u = (unsigned long)n / 100;
		for (int r = 0; r < 100; r++) {
			share_a(u * 25 / 100);
			share_b(u * 25 / 100);
			share_c(u * 10 / 100);
			share_d(u * 40 / 100);
		}
		printf("cpu=%.4f\n", cpu_self());
	} else if (!strcmp(mode, "short")) {
		/* Calibrate the units for MS ms on this thread first. */
		double t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
		burn(50);
		double per = (clock_s(CLOCK_THREAD_CPUTIME_ID) - t0) / 50;
		unsigned long units = (unsigned long)(arg / 1000 / (per > 0 ? per : 1e-4) + 0.5);
		if (units < 1)
			units = 1;
		struct job pair[2];
		for (long i = 0; i < n; i += 2) {
			int m = i + 1 < n ? 2 : 1;
			for (int k = 0; k < m; k++) {
				pair[k].units = units;
				start(&pair[k], burn_main);
			}
			for (int k = 0; k < m; k++)
				pthread_join(pair[k].t, NULL);
		}
		printf("cpu=%.4f units=%lu\n", cpu_self(), units);
	} else if (!strcmp(mode, "idle")) {
		for (long i = 0; i < n; i++)
			start(&jobs[i], idle_main);
		/* Idle means idle: the window opens once every thread has
		 * reached its read() and a profiler's helper has had two sweeps
		 * (100 ms each) to take in the new threads; their start-up
		 * (an agent's per-thread set-up, its first listing of 1,000
		 * threads) is creation, not idling. */
		struct timespec ms = {0, 1000000}, settle = {0, 250000000};
		while (atomic_load(&idle_ready) < n)
			nanosleep(&ms, NULL);
		nanosleep(&settle, NULL);
		double c0 = cpu_self(), w0 = clock_s(CLOCK_MONOTONIC);
		struct timespec d = {(time_t)arg, (long)((arg - (double)(time_t)arg) * 1e9)};
		nanosleep(&d, NULL);
		double c1 = cpu_self(), w1 = clock_s(CLOCK_MONOTONIC);
		close(idle_pipe[1]);
		for (long i = 0; i < n; i++)
			pthread_join(jobs[i].t, NULL);
		/* idle= CPU of the whole process while the threads slept, as a
		 * fraction of one CPU: the sweeper's and the timers' cost. */
		printf("cpu=%.4f idle=%.5f\n", cpu_self(), (c1 - c0) / (w1 - w0));
	} else if (!strcmp(mode, "startstop")) {
		int (*prof)(unsigned short *, size_t, size_t, unsigned int) =
			(int (*)(unsigned short *, size_t, size_t, unsigned int))dlsym(
				RTLD_DEFAULT, "profil");
		int ours = dlsym(RTLD_DEFAULT, "profil_hz") != NULL;
		for (long i = 0; i < n - 1; i++)
			start(&jobs[i], idle_main);
		static unsigned short buf[1 << 16];
		/* resident before, not counted as ours (a volatile store per
		 * page: a memset of zeros may be dropped by the compiler) */
		for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i += 512)
			((volatile unsigned short *)buf)[i] = 0;
		burn(100);                   /* so are burn's pages and stack */
		rss_kib();                   /* and stdio's (malloc's first heap) */
		long rss0 = rss_kib();
		double t0 = clock_s(CLOCK_MONOTONIC);
		int rc1 = prof(buf, sizeof buf, (size_t)&main & ~(size_t)0xffff, 0x10000);
		double t1 = clock_s(CLOCK_MONOTONIC);
		burn(100);
		long rss1 = rss_kib();
		double t2 = clock_s(CLOCK_MONOTONIC);
		int rc2 = prof(NULL, 0, 0, 0);
		double t3 = clock_s(CLOCK_MONOTONIC);
		close(idle_pipe[1]);
		for (long i = 0; i < n - 1; i++)
			pthread_join(jobs[i].t, NULL);
		printf("cpu=%.4f impl=%s start_us=%.1f stop_us=%.1f rss_kib=%ld rc=%d\n",
		       cpu_self(), ours ? "ours" : "glibc", (t1 - t0) * 1e6, (t3 - t2) * 1e6,
		       rss1 - rss0, rc1 | rc2);
	} else {
		return usage();
	}
	return 0;
}
