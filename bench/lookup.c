/*
 * lookup.c - what one sample costs the signal handler with 1, 10, 64 and
 * 1,000 ranges (issues 4 and 14): nanoseconds from "the handler has a pc" to "the
 * counter is bumped".
 *
 * Method: this file compiles src/engine/sample.c and sample_write.c
 * themselves (#include below), not a copy of their lookup, and times
 * sample_record() - the per-sample path the
 * handler runs after reading the published table: the fault-recovery
 * setjmp, the binary search over ranges sorted by lowpc, the bin formula,
 * the saturating atomic counter update and the statistics.  Left out, and
 * the same for any number of ranges: the kernel's signal delivery and
 * sigreturn (about a microsecond, see `bench threads`), the si_code check
 * and the in-flight counter.
 *
 * The pcs are drawn at random over all ranges, so with 1,000 ranges the
 * search's branches are unpredictable and its table walk misses the
 * branch predictor as a real program moving between functions would;
 * with 1 range every search is one step.  Each configuration runs
 * 5 x 2^22 samples and reports the fastest run's ns per sample.
 *
 * The differences between ns per sample are the lookup's real cost: a
 * binary search over n ranges is ceil(log2(n + 1)) steps, 10 for 1,000.
 */
#include "../src/engine/sample.c"
#include "../src/engine/sample_write.c"
/* The stack walker sample_write.c calls for ring tables (never for the
 * histograms timed here) and its tables. */
#include "../src/unwind/unwind.c"
#include "../src/unwind/unwind_build.c"
#include "../src/unwind/unwind_cache.c"
#include "../src/unwind/unwind_cfi.c"
#include "../src/unwind/unwind_table.c"
#include "../src/unwind/unwind_go.c"
#include "../src/unwind/unwind_crt.c"
/* their memory and sort (base/: never the program's allocator), the
 * formatting their file names take (base/fmt.c), and
 * the maps reader the cache's key of a main program may need */
#include "../src/base/alloc.c"
#include "../src/base/sort.c"
#include "../src/base/maps.c"
#include "../src/base/fmt.c"
#include "../src/base/keep.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What the library's engine.c and timers.c define. */
_Atomic(struct ptable *) profil_published;
_Atomic unsigned int profil_inflight;
struct pstats profil_pstats;
const char profil_timer_tag;
void inflight_drain(void)
{
}
struct perf_fd_state perf_fd_state[PERF_FD_MAX]; /* the perf engine's (src/engine/perf_engine.c) */
/* and its sigtrap delivery's (src/engine/perf_trap.c) */
_Atomic int64_t perf_trap_period;
atomic_int sweeper_wakes; /* the sweeper's (src/engine/sweeper.c) */

#define SPAN 4096     /* bytes of text per range */
#define GAP 8192      /* distance between range starts */
#define NPCS (1 << 16)
#define ROUNDS (1 << 6)
#define RUNS 5

static struct ptable *table(size_t n, unsigned short *counters)
{
	struct ptable *t = calloc(1, sizeof *t + n * sizeof t->ranges[0]);
	if (!t)
		abort();
	t->mode = PTABLE_HIST;
	t->nranges = n;
	for (size_t i = 0; i < n; i++) {
		struct prange *r = &t->ranges[i];
		r->lowpc = r->offset = 0x400000 + i * GAP;
		r->highpc = r->lowpc + SPAN;
		r->buf = counters + i * (SPAN / 2);
		r->nbins = SPAN / 2;
		r->scale = 0x10000;
		r->shift = 1;
		r->width = 2;
		r->kind = PRANGE_HIST;
	}
	return t;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double ns_per_sample(size_t n)
{
	unsigned short *counters = calloc(n, SPAN);
	uintptr_t *pcs = malloc(NPCS * sizeof *pcs);
	if (!counters || !pcs)
		abort();
	struct ptable *t = table(n, counters);
	srand(4);
	for (size_t i = 0; i < NPCS; i++)
		pcs[i] = t->ranges[(size_t)rand() % n].lowpc + (uintptr_t)rand() % SPAN;
	double best = 1e9;
	for (int run = 0; run < RUNS; run++) {
		memset(counters, 0, n * SPAN); /* no counter saturates */
		double t0 = now();
		for (int k = 0; k < ROUNDS; k++)
			for (size_t i = 0; i < NPCS; i++)
				sample_record(t, 0, pcs[i], NULL, 1); /* tid, uc: unused by a histogram */
		double ns = (now() - t0) * 1e9 / ((double)ROUNDS * NPCS);
		best = ns < best ? ns : best;
	}
	unsigned long long missed = atomic_load(&profil_pstats.out_of_range);
	if (missed != 0) {
		fprintf(stderr, "lookup: %llu samples missed their range\n", missed);
		exit(1);
	}
	free(t), free(pcs), free(counters);
	return best;
}

int main(void)
{
	static const size_t sizes[] = {1, 10, 64, 1000};
	printf("lookup: ns per sample in the handler's sample_record() (search + bin + count)\n");
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
		printf("   %5zu ranges: %6.1f ns\n", sizes[i], ns_per_sample(sizes[i]));
	return 0;
}
