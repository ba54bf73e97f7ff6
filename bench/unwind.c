/*
 * unwind.c - cost of the stack walk the signal handler does (src/unwind/unwind.c)
 * and of building its tables (src/unwind/unwind_build.c), in this process.
 *
 *   bench/unwind [ROUNDS [LIBRARY...]]
 *
 * Builds the tables for every loaded object (this program, libc, ld.so,
 * the vDSO, and each LIBRARY, dlopen'ed first) and prints their size and
 * build time.  Then, at a known
 * depth (10 and 100 frames of a recursion built without frame pointers,
 * plus main and libc's start frames), captures the registers with
 * getcontext() and times unwind_walk() over the live stack, as the
 * handler would run it; a frame-pointer walk of a recursion built with
 * frame pointers is timed alongside for scale.  Stack bytes per sample
 * in the ring: 16 + 8 per frame (+ 8 for a marker).
 *
 * With UNWIND_DUMP=DIR, each object's table is also written to DIR/<n>
 * (its name, range and row count relative to its load address, then its
 * rows and index as they are), so two builds' tables can be compared
 * with diff -r: a change to how rows are built must not change them.
 */
#include "../src/unwind/unwind.c"
#include "../src/unwind/unwind_build.c"
#include "../src/unwind/unwind_cache.c"
#include "../src/unwind/unwind_cfi.c"
#include "../src/unwind/unwind_table.c"
#include "../src/unwind/unwind_go.c"
#include "../src/unwind/unwind_crt.c"
/* their memory and sort (base/: never the program's allocator), the
 * formatting their file names take (base/fmt.c), the kept cache
 * directory (base/keep.c), and
 * the maps reader the cache's key of a main program may need */
#include "../src/base/alloc.c"
#include "../src/base/sort.c"
#include "../src/base/maps.c"
#include "../src/base/fmt.c"
#include "../src/base/keep.c"
#include "../src/base/ring.h"

#include <dlfcn.h>
#include <stdio.h>
#include <time.h>
#include <ucontext.h>

/* The engine's handshake: no handler runs in this program. */
void inflight_drain(void)
{
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* not the time others ran */
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Walks per trial; the best of TRIALS trials is reported (the machine
 * may be shared: the minimum is the walk's own cost). */
static long rounds = 50000;
#define TRIALS 7
static volatile unsigned long sink;

struct result {
	double ns;
	uint32_t frames;
	enum uw_end end;
};

static __attribute__((noinline)) struct result time_walk(void)
{
	ucontext_t uc;
	uint64_t pcs[RING_MAX_PCS];
	volatile uint32_t n = 0;
	volatile enum uw_end end = UW_END_FAILED; /* getcontext returns twice */
	getcontext(&uc);
	const struct uw_table *t = atomic_load(&unwind_published);
	double best = 1e30;
	for (int trial = 0; trial < TRIALS; trial++) {
		double t0 = now();
		for (long i = 0; i < rounds; i++)
			end = unwind_walk(t, (uintptr_t)uc.uc_mcontext.gregs[REG_RIP],
			                  (uintptr_t)uc.uc_mcontext.gregs[REG_RSP],
			                  (uintptr_t)uc.uc_mcontext.gregs[REG_RBP], uc.uc_mcontext.gregs, pcs,
			                  1000, &n);
		double t1 = now();
		best = t1 - t0 < best ? t1 - t0 : best;
	}
	return (struct result){best * 1e9 / (double)rounds, n, end};
}

static __attribute__((noinline)) struct result descend(int d)
{
	struct result r = d ? descend(d - 1) : time_walk();
	sink += r.frames; /* not a tail call */
	return r;
}

/* The frame-pointer convention's walk, for scale: checked loads only.
 * GCC builds these two with frame pointers; clang has no per-function
 * switch, so there the walk stops early and its figure means nothing. */
#if defined(__clang__)
#define WITH_FP
#else
#define WITH_FP __attribute__((optimize("no-omit-frame-pointer")))
#endif
__attribute__((noinline)) WITH_FP static struct result fp_time(void)
{
	uintptr_t bp = (uintptr_t)__builtin_frame_address(0), sp = bp;
	uintptr_t hi = sp + ((uintptr_t)1 << 20);
	uint32_t n = 0;
	double best = 1e30;
	for (int trial = 0; trial < TRIALS; trial++) {
	double t0 = now();
	for (long i = 0; i < rounds; i++) {
		uintptr_t b = bp;
		n = 0;
		while (b >= sp && b < hi - 16 && !(b & 7) && n < 1000) {
			uintptr_t ra = *(volatile uintptr_t *)(b + 8), next = *(volatile uintptr_t *)b;
			if (!ra || next <= b)
				break;
			n++;
			b = next;
		}
	}
	double t1 = now();
	best = t1 - t0 < best ? t1 - t0 : best;
	}
	return (struct result){best * 1e9 / (double)rounds, n, UW_END_COMPLETE};
}

__attribute__((noinline)) WITH_FP static struct result fp_descend(int d)
{
	struct result r = d ? fp_descend(d - 1) : fp_time();
	sink += r.frames;
	return r;
}

/* Every known object's table into dir (see the top). */
static void dump_tables(const char *dir)
{
	for (size_t i = 0; i < nknown; i++) {
		const struct uw_module *m = known[i].m;
		char path[4096];
		snprintf(path, sizeof path, "%s/%03zu", dir, i);
		FILE *f = fopen(path, "w");
		if (!f) {
			perror(path);
			continue;
		}
		fprintf(f, "%s lo %#lx hi %#lx rows %zu\n", known[i].name,
		        (unsigned long)(m->lo - m->base), (unsigned long)(m->hi - m->base), m->nrows);
		fwrite(m->rows, sizeof *m->rows, m->nrows, f);
		fwrite(m->index, 4, ((m->hi - m->lo) >> UW_INDEX_SHIFT) + 2, f);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1)
		rounds = atol(argv[1]);
	for (int i = 2; i < argc; i++)
		if (!dlopen(argv[i], RTLD_NOW | RTLD_GLOBAL))
			fprintf(stderr, "unwind: %s\n", dlerror());
	double t0 = now();
	if (unwind_start(NULL) != 0)
		return 1;
	double t1 = now();
	const struct uw_table *t = atomic_load(&unwind_published);
	size_t rows = 0;
	for (size_t i = 0; i < t->nmods; i++)
		rows += t->mods[i]->nrows;
	printf("tables: %zu modules, %zu rows, %zu KiB, built in %.2f ms\n", t->nmods, rows,
	       rows * sizeof(struct uw_row) / 1024, (t1 - t0) * 1e3);
	if (getenv("UNWIND_DUMP"))
		dump_tables(getenv("UNWIND_DUMP"));
	static const char *const ends[] = {"complete", "truncated", "failed"};
	for (int depth = 10; depth <= 100; depth += 90) {
		struct result r = descend(depth);
		printf("cfi walk, %3d-deep recursion: %u frames %s, %.0f ns per walk, "
		       "%.1f ns per frame, %u bytes per sample\n",
		       depth, r.frames, ends[r.end], r.ns, r.ns / r.frames, 16 + 8 * r.frames);
		struct result f = fp_descend(depth);
		printf("fp walk,  %3d-deep recursion: %u frames, %.0f ns per walk\n", depth,
		       f.frames, f.ns);
	}
	return 0;
}
