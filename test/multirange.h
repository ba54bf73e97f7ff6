/*
 * multirange.h - helpers shared by the multi-range tests: regions over
 * the test executable's text and libspin.so's, turned into each form's
 * argument array, and sums of their counters per function.
 *
 * Every region here uses scale 0x10000 and offset == lowpc, so counter k
 * covers [lo + (k << shift), lo + ((k + 1) << shift)).
 */
#ifndef PROFIL_TEST_MULTIRANGE_H
#define PROFIL_TEST_MULTIRANGE_H

#include "runner.h"

#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <unistd.h>

#include "profil.h"

struct region {
	uintptr_t lo, hi;
	void *buf;
	size_t nbins;
	unsigned width, shift; /* 2/1 (16-bit) or 4/2 (32-bit) */
};

/* Counters for [lo, hi): the index of hi - 1, plus one. */
static inline void region_init(struct region *r, uintptr_t lo, uintptr_t hi, unsigned width)
{
	r->lo = lo, r->hi = hi, r->width = width;
	r->shift = width == 4 ? 2 : 1;
	r->nbins = ((hi - lo - 1) >> r->shift) + 1;
	r->buf = calloc(r->nbins, width);
	ASSERT(r->buf);
}

static inline unsigned long region_at(const struct region *r, size_t k)
{
	return r->width == 4 ? ((unsigned *)r->buf)[k] : ((unsigned short *)r->buf)[k];
}

/* Samples in counters that overlap [flo, fhi), over all regions. */
static inline double regions_sum_span(const struct region *rs, size_t n, uintptr_t flo,
                                      uintptr_t fhi)
{
	double sum = 0;
	for (size_t i = 0; i < n; i++) {
		const struct region *r = &rs[i];
		for (size_t k = 0; k < r->nbins; k++) {
			uintptr_t blo = r->lo + (k << r->shift), bhi = blo + (1u << r->shift);
			if (bhi > flo && blo < fhi)
				sum += (double)region_at(r, k);
		}
	}
	return sum;
}

static inline double regions_sum_fn(const struct region *rs, size_t n, void *fn)
{
	unsigned long lo, hi;
	ASSERT_OK(function_range(fn, &lo, &hi));
	return regions_sum_span(rs, n, lo, hi);
}

static inline double regions_total(const struct region *rs, size_t n)
{
	return regions_sum_span(rs, n, 0, UINTPTR_MAX);
}

static inline void regions_free(struct region *rs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rs[i].buf);
}

/* The executable PT_LOAD segment holding addr, 16-byte aligned inward. */
struct seg_query {
	uintptr_t addr, lo, hi;
};

static inline int seg_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct seg_query *q = data;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && q->addr >= lo && q->addr < hi) {
			q->lo = (lo + 15) & ~(uintptr_t)15;
			q->hi = hi & ~(uintptr_t)15;
			return 1;
		}
	}
	return 0;
}

static inline void text_of(void *addr, uintptr_t *lo, uintptr_t *hi)
{
	struct seg_query q = {(uintptr_t)addr, 0, 0};
	ASSERT(dl_iterate_phdr(seg_cb, &q) == 1);
	*lo = q.lo, *hi = q.hi;
}

typedef unsigned long (*spin_fn)(unsigned long);

/* libspin.so, next to the runner (built by `make test`). */
static inline spin_fn lib_spin(const char *name)
{
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
	ASSERT(n > 0);
	path[n] = 0;
	strcpy(strrchr(path, '/') + 1, "libspin.so");
	void *h = dlopen(path, RTLD_NOW);
	if (!h)
		FAIL_AT("dlopen: %s", dlerror());
	spin_fn f = (spin_fn)dlsym(h, name);
	ASSERT(f);
	return f;
}

/* Thread CPU seconds spent in each of two functions run alternately. */
struct split {
	double a, b;
};

static inline struct split run_split(spin_fn fa, double secs_a, spin_fn fb, double secs_b,
                                     int rounds)
{
	unsigned long na = iters_for(secs_a / rounds), nb = iters_for(secs_b / rounds);
	struct split s = {0, 0};
	for (int i = 0; i < rounds; i++) {
		double t0 = cpu_thread();
		fa(na);
		double t1 = cpu_thread();
		fb(nb);
		s.a += t1 - t0;
		s.b += cpu_thread() - t1;
	}
	return s;
}

/* na, nb samples in the two functions must split as their CPU time did,
 * and nearly every sample of that CPU time must be in one of them. */
static inline void check_split(double na, double nb, struct split s)
{
	double n = na + nb, p = s.a / (s.a + s.b), expect = (s.a + s.b) * profil_hz();
	printf("samples %.0f + %.0f of %.0f expected; CPU split %.3f, samples %.3f\n", na, nb,
	       expect, p, n > 0 ? na / n : 0);
	ASSERT(n >= 0.85 * expect);
	ASSERT(n <= 1.05 * expect + 10);
	ASSERT_NEAR(na / n, p, binomial_tol(p, n, 0.02));
}

/* Form builders: each starts profiling over rs[n] (ascending, disjoint). */
static inline int start_tru64(const struct region *rs, size_t n)
{
	struct profil_args *a = calloc(n, sizeof *a);
	ASSERT(a);
	for (size_t i = 0; i < n; i++) {
		const struct region *r = &rs[n - 1 - i]; /* decreasing lowpc */
		ASSERT(r->width == 4);
		a[i] = (struct profil_args){r->buf, (void *)r->hi, (void *)r->lo, (void *)r->lo,
		                            0x10000};
	}
	int rc = profil((unsigned short *)(void *)a, n, (size_t)-1, 0);
	free(a);
	return rc;
}

/*
 * The AIX and glibc forms take two different struct prof, so their
 * builders live in translation units of their own:
 * test-multirange-aix.c and test-multirange-sprofil.c.
 */
int mr_start_aix(const struct region *rs, size_t n);
/* glibc's PROF_UINT, for files that cannot include <sys/profil.h>. */
#define MR_PROF_UINT 1
/* sprofil over rs[n], entries in a scrambled order; overflow (a 4-byte
 * counter, used as 2 bytes without PROF_UINT) may be NULL. */
int mr_start_sprofil(const struct region *rs, size_t n, void *overflow, unsigned flags);

/* Whether any form of profiling is on. */
static inline int profiling_on(void)
{
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	return st.engine != PROFIL_ENGINE_OFF;
}

/* Regions over the whole text of the executable (holding exe_fn) and of
 * the library holding lib_fn, in ascending order. */
static inline void text_regions(struct region rs[2], void *exe_fn, void *lib_fn, unsigned width)
{
	uintptr_t elo, ehi, llo, lhi;
	text_of(exe_fn, &elo, &ehi);
	text_of(lib_fn, &llo, &lhi);
	ASSERT(ehi <= llo || lhi <= elo); /* different mappings */
	int exe_first = elo < llo;
	region_init(&rs[exe_first ? 0 : 1], elo, ehi, width);
	region_init(&rs[exe_first ? 1 : 0], llo, lhi, width);
}

#endif /* PROFIL_TEST_MULTIRANGE_H */
