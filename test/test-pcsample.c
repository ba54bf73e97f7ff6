/*
 * test-pcsample.c - Solaris pcsample(): return values (first call 0, then
 * the previous call's count), fill-up, restart, mutual exclusion with
 * profil(), errors, and threads.
 */
#include "runner.h"

#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>

#include "profil.h"

SPIN_FN(spin_pc, 41)
SPIN_FN(spin_pt0, 42)
SPIN_FN(spin_pt1, 43)
SPIN_FN(spin_pt2, 44)

#define SENTINEL ((uintptr_t)0x5a5a5a5a)

static uintptr_t *sample_buf(size_t n)
{
	uintptr_t *b = malloc(n * sizeof *b);
	ASSERT(b);
	for (size_t i = 0; i < n; i++)
		b[i] = SENTINEL;
	return b;
}

/* Slots before the first sentinel; every later slot must be untouched. */
static size_t written(const uintptr_t *b, size_t n)
{
	size_t k = 0;
	while (k < n && b[k] != SENTINEL)
		k++;
	for (size_t i = k; i < n; i++)
		ASSERT_EQ(b[i], SENTINEL);
	return k;
}

static size_t in_fn(const uintptr_t *b, size_t n, void *fn)
{
	unsigned long lo, hi;
	size_t c = 0;
	ASSERT_OK(function_range(fn, &lo, &hi));
	for (size_t i = 0; i < n; i++)
		c += b[i] >= lo && b[i] < hi;
	return c;
}

TEST_IMPL(pcsample_counts_and_pcs)
{
	SKIP_IF_SAMPLES_DEFERRED();
	size_t cap = 100000;
	uintptr_t *b = sample_buf(cap), dummy = 0;
	unsigned long iters = iters_for(0.4); /* calibrated before sampling */
	double c0 = cpu_process();
	ASSERT_EQ(pcsample(b, (long)cap), 0); /* first call */
	spin_pc(iters);
	long n = pcsample(&dummy, 0); /* stops; reports the previous call */
	double cpu = cpu_process() - c0;
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_EQ(st.engine, PROFIL_ENGINE_OFF);
	ASSERT_EQ(n, written(b, cap));
	ASSERT_EQ(n, st.in_range);
	ASSERT_NEAR((double)n / (cpu * profil_hz()), 1.0, 0.1);
	/* raw pcs: nearly all inside the function that burned the CPU */
	double share = (double)in_fn(b, (size_t)n, (void *)spin_pc) / (double)n;
	ASSERT_NEAR(share, 1.0, binomial_tol(0.95, (double)n, 0.05));
	ASSERT_EQ(pcsample(&dummy, 0), 0); /* the previous call stored nothing */
	free(b);
	return 0;
}

TEST_IMPL(pcsample_fills_up_and_stops)
{
	SKIP_IF_SAMPLES_DEFERRED();
	size_t cap = 50, guard = 1000;
	uintptr_t *b = sample_buf(cap + guard), dummy = 0;
	ASSERT_EQ(pcsample(b, (long)cap), 0);
	spin_pc(iters_for(0.3)); /* about 300 samples at 1000 Hz */
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_EQ(st.stopped, PROFIL_STOP_PCSAMPLE_FULL);
	ASSERT(st.ticks > cap);
	ASSERT_EQ(st.in_range, cap);
	ASSERT_EQ(pcsample(&dummy, 0), (long)cap);
	ASSERT_EQ(written(b, cap + guard), cap); /* nothing past nsamples */
	free(b);
	return 0;
}

/* Each call reports the previous one, across restarts and a profil(). */
TEST_IMPL(pcsample_restart_and_profil)
{
	SKIP_IF_SAMPLES_DEFERRED();
	size_t cap = 20000;
	uintptr_t *a = sample_buf(cap), *b = sample_buf(cap), dummy = 0;
	ASSERT_EQ(pcsample(a, (long)cap), 0);
	spin_pc(iters_for(0.1));
	long na = pcsample(b, (long)cap); /* restart into b */
	ASSERT(na > 0);
	spin_pc(iters_for(0.1));
	/* profil() replaces pcsample: b stops filling */
	unsigned short hist[16] = {0};
	ASSERT_OK(profil(hist, sizeof hist, 0, 2));
	size_t nb = written(b, cap);
	spin_pc(iters_for(0.1));
	ASSERT_EQ(written(b, cap), nb);
	ASSERT(hist[0] > 0);
	/* the next pcsample() reports what b received, and replaces profil() */
	ASSERT_EQ(pcsample(a, (long)cap), (long)nb);
	unsigned short h0 = hist[0];
	spin_pc(iters_for(0.05));
	ASSERT_EQ(hist[0], h0);
	long na2 = pcsample(&dummy, 0);
	ASSERT(na2 > 0);
	ASSERT_EQ(pcsample(&dummy, 0), 0);
	free(a), free(b);
	return 0;
}

TEST_IMPL(pcsample_errors)
{
	size_t cap = 10000;
	uintptr_t *a = sample_buf(cap), dummy = 0;
	ASSERT_EQ(pcsample(a, (long)cap), 0);
	/* negative: EINVAL, and sampling goes on */
	ASSERT_ERR(pcsample(a, -1), EINVAL);
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT(ENGINE_RUNNING(st.engine));
	spin_pc(iters_for(0.05));
	/* unwritable array: EFAULT and profiling off */
	void *page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(page != MAP_FAILED);
	ASSERT_ERR(pcsample(page, 8), EFAULT);
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_EQ(st.engine, PROFIL_ENGINE_OFF);
	ASSERT_ERR(pcsample(NULL, 8), EFAULT);
	ASSERT_ERR(pcsample(a, LONG_MAX), EFAULT);
	ASSERT_ERR(pcsample((uintptr_t *)((char *)a + 1), 4), EFAULT);
	munmap(page, 4096);
	/* failed calls are not invocations: the next call reports a's count */
	ASSERT_EQ(pcsample(&dummy, 0), (long)written(a, cap));
	ASSERT(written(a, cap) > 0);
	free(a);
	return 0;
}

/* 0.3 s of this thread's CPU, measured: a calibrated count ran three
 * times short once on this VM, which would leave the floor below ~300
 * samples for 900 nominal without a margin. */
static void *worker(void *fn)
{
	unsigned long n = iters_for(0.03);
	double c0 = cpu_thread();
	while (cpu_thread() - c0 < 0.3)
		((unsigned long (*)(unsigned long))fn)(n);
	return NULL;
}

/* Every thread is sampled, each in proportion to its CPU time. */
TEST_IMPL(pcsample_threads)
{
	SKIP_IF_SAMPLES_DEFERRED();
	size_t cap = 100000;
	uintptr_t *b = sample_buf(cap), dummy = 0;
	void *fns[3] = {(void *)spin_pt0, (void *)spin_pt1, (void *)spin_pt2};
	pthread_t th[3];
	iters_for(0.3); /* calibrate before sampling */
	ASSERT_EQ(pcsample(b, (long)cap), 0);
	for (int i = 0; i < 3; i++)
		ASSERT_OK(pthread_create(&th[i], NULL, worker, fns[i]));
	for (int i = 0; i < 3; i++)
		ASSERT_OK(pthread_join(th[i], NULL));
	long n = pcsample(&dummy, 0);
	ASSERT(n > 300);
	for (int i = 0; i < 3; i++) {
		double share = (double)in_fn(b, (size_t)n, fns[i]) / (double)n;
		ASSERT_NEAR(share, 1.0 / 3, binomial_tol(1.0 / 3, (double)n, 0.08));
	}
	free(b);
	return 0;
}
