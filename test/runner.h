/*
 * runner.h - the test harness: TEST_IMPL(name) defines a test; the runner
 * (runner.c) executes every test in a process of its own.  Helpers for
 * CPU-bound workloads and for statistical bounds live here too.
 */
#ifndef PROFIL_TEST_RUNNER_H
#define PROFIL_TEST_RUNNER_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TEST_IMPL(name) int run_test_##name(void); int run_test_##name(void)

#define FAIL_AT(...) do { \
	fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); \
	exit(1); \
} while (0)

#define ASSERT(cond) do { if (!(cond)) FAIL_AT("assertion failed: %s", #cond); } while (0)
#define ASSERT_EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) FAIL_AT("%s == %s: %lld != %lld", #a, #b, a_, b_); } while (0)
#define ASSERT_OK(call) do { if ((call) != 0) \
	FAIL_AT("%s failed: %s", #call, strerror(errno)); } while (0)
#define ASSERT_ERR(call, err) do { errno = 0; int r_ = (int)(call); \
	if (r_ != -1 || errno != (err)) FAIL_AT("%s: returned %d errno %s, want -1 %s", \
		#call, r_, strerror(errno), strerror(err)); } while (0)
/* |x - want| <= tol, printing all three on failure. */
#define ASSERT_NEAR(x, want, tol) do { double x_ = (x), w_ = (want), t_ = (tol); \
	if (!(fabs(x_ - w_) <= t_)) FAIL_AT("%s = %.4f, want %.4f +- %.4f", #x, x_, w_, t_); \
} while (0)

/*
 * NULL that the compiler cannot see: glibc declares profil() __nonnull((1)),
 * so a literal profil(NULL, 0, 0, 0) draws -Wnonnull where <unistd.h> is
 * in scope.  Tests call profil(no_buf, 0, 0, 0) to stop.
 */
static unsigned short *volatile no_buf;

/* Process and thread CPU time in seconds. */
static inline double cpu_process(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double cpu_thread(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The engine a test may find running (profil.h's enum): timers, or perf
 * events unless PROFIL_ENGINE=timer forbids them (test-engine.c checks
 * which is chosen when).
 */
#define ENGINE_RUNNING(e) ((e) == PROFIL_ENGINE_THREAD_TIMERS || \
	((e) == PROFIL_ENGINE_PERF_EVENTS && \
	 !(getenv("PROFIL_ENGINE") && strcmp(getenv("PROFIL_ENGINE"), "timer") == 0)))

/*
 * Tolerance for an observed share of n samples whose true share is p:
 * z standard deviations of the binomial, plus an allowance for what the
 * workload cannot make exact (call overhead, code outside the ranges).
 * z = 6 makes a false failure rarer than one run in 10^8.
 */
static inline double binomial_tol(double p, double n, double systematic)
{
	return 6.0 * sqrt(p * (1.0 - p) / (n > 1 ? n : 1)) + systematic;
}

/*
 * Work that takes CPU time in proportion to iters and cannot be optimised
 * away.  SPIN_FN(name) defines a distinct, non-inlined, non-merged copy,
 * so tests can tell functions apart by address.
 */
#ifdef __clang__
#define NOMERGE __attribute__((noinline))
#else
#define NOMERGE __attribute__((noinline, noipa))
#endif
#define SPIN_FN(name, salt) \
	NOMERGE unsigned long name(unsigned long iters); \
	NOMERGE unsigned long name(unsigned long iters) { \
		volatile unsigned long acc = (salt); \
		for (unsigned long i = 0; i < iters; i++) \
			acc = acc * 6364136223846793005ul + i + (salt); \
		return acc; \
	}

/*
 * A test that cannot check something under a tool says so with
 * skip_under(); it is then reported as skipped, not passed: the runner
 * process of the test (runner.c, --one) exits with TEST_SKIP_STATUS and
 * hands the reason to the parent, which prints "skip NAME (reason)".
 */
#define TEST_SKIP_STATUS 77
/* runner.c: the first reason the running test gave, "" if none. */
extern char test_skip_reason[256];

/*
 * PROFIL_TEST_TOOL names the tool the suite runs under (set by `make
 * sanitize`, `make tsan`, `make valgrind`).  Returns 1, noting the reason,
 * when running under `tool`: the caller leaves out what it cannot check.
 */
static inline int skip_under(const char *tool, const char *why)
{
	const char *t = getenv("PROFIL_TEST_TOOL");
	if (t && strcmp(t, tool) == 0) {
		if (!why || !*why)
			why = "not checked under this tool";
		printf("skipped under %s: %s\n", tool, why);
		if (!test_skip_reason[0])
			snprintf(test_skip_reason, sizeof test_skip_reason, "%s: %s", tool, why);
		return 1;
	}
	return 0;
}

/*
 * TSan runs a signal handler only when the interrupted thread next enters
 * its runtime, and valgrind only at its own scheduling points and with
 * one thread running at a time, so the sample counts there say nothing
 * about the library: tests that count samples say so and are counted
 * as skipped under `make tsan` and `make valgrind` (which check memory,
 * locking and atomics, in every test that does run).
 */
#define SKIP_IF_SAMPLES_DEFERRED() do { \
	if (skip_under("tsan", "TSan defers asynchronous signals; sample counts mean nothing there") || \
	    skip_under("valgrind", "valgrind defers signals and serialises threads")) \
		return 0; \
} while (0)

/* Address range [lo, hi) of a function of the test binary (-rdynamic). */
int function_range(void *fn, unsigned long *lo, unsigned long *hi);

/* Iterations of spin functions that take about `seconds` of CPU. */
unsigned long iters_for(double seconds);

#endif
