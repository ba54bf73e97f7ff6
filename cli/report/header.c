/*
 * header.c - the line above every text report: what the profile holds
 * and how far to trust it.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "report.h"

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* Distinct values among v[0..n). */
static size_t distinct(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_u64);
	size_t d = 0;
	for (size_t i = 0; i < n; i++)
		d += i == 0 || v[i] != v[i - 1];
	return d;
}

void report_header(const struct profile *p, const char *file, FILE *f)
{
	uint64_t *v = prof_xrealloc(NULL, p->nsamples, sizeof *v);
	int64_t ns = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		v[i] = p->samples[i].pid;
		ns += p->samples[i].cpu_ns;
	}
	size_t procs = distinct(v, p->nsamples);
	for (size_t i = 0; i < p->nsamples; i++)
		v[i] = (uint64_t)p->samples[i].pid << 32 | p->samples[i].tid;
	size_t threads = distinct(v, p->nsamples);
	free(v);
	if (p->nprocesses > procs)
		procs = p->nprocesses;
	fprintf(f, "# %s: %" PRId64 " samples, %.3f CPU seconds, %.0f Hz, %zu process%s, "
	        "%zu thread%s, %" PRIu64 " lost\n",
	        file, prof_total(p), (double)ns / 1e9,
	        p->period_ns > 0 ? 1e9 / (double)p->period_ns : 0.0, procs, procs == 1 ? "" : "es",
	        threads, threads == 1 ? "" : "s", p->lost);
}
