/*
 * header.c - the line above every text report: what the profile holds
 * and how far to trust it.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "report.h"

void report_header(const struct profile *p, const char *file, FILE *f)
{
	int64_t ns = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		ns += p->samples[i].cpu_ns;
	size_t procs, threads;
	prof_count_tasks(p, &procs, &threads);
	fprintf(f, "# %s: %" PRId64 " samples, %.3f CPU seconds, %.0f Hz, %zu process%s, "
	        "%zu thread%s, %" PRIu64 " lost\n",
	        file, prof_total(p), (double)ns / 1e9,
	        p->period_ns > 0 ? 1e9 / (double)p->period_ns : 0.0, procs, procs == 1 ? "" : "es",
	        threads, threads == 1 ? "" : "s", p->lost);
}
