/*
 * gmon_bins.c - re-bins a table's histograms onto one object's grid for
 * gmon.out.
 *
 * Why re-bin instead of copying the caller's counters: gprof needs, in one
 * file, the same bin width for every record, bins that are whole UNITs
 * (2 bytes) wide so its integer arithmetic is exact, and addresses
 * relative to the object.  Our ranges may have any scale, 16- or 32-bit
 * counters (Tru64 shift 2), and may straddle objects.
 *
 * The grid: bin k of an object covers relative bytes [k * 2W, (k+1) * 2W),
 * W = the finest whole bin width (in UNITs) of the ranges in the object,
 * coarsened by powers of two only when the object's span would need more
 * than GHIST_MAX_CELLS cells.  Counter i of a range holds the samples
 * at the pcs of its bin inside the range: [pa, pb), bin i cut to
 * [max(lowpc, offset), highpc), where a range's edge may cut a bin
 * (Tru64's lowpc above offset, AIX's p_high, monitor()'s highpc).  Its
 * count c goes to the grid bins [pa, pb) overlaps inside the object, in
 * proportion to the overlap, as gprof itself credits a bin to the symbols
 * it overlaps; the shares use floor(c * (x - pa) / (pb - pa)) at every
 * boundary x, so they are whole and add up to c exactly when [pa, pb) lies
 * in the object.  A counter no pc of the range maps to (indexes a scale
 * above 0x10000 skips, or past highpc) holds no samples and is left out.
 */
#include "gmon/gmon.h"

#include <errno.h>
#include <stdlib.h>

/* 32 MiB of cells per object at most (fuzz/fuzz-gmon.c builds this file
 * with fewer, so that its grids coarsen often and cheaply). */
#ifndef GHIST_MAX_CELLS
#define GHIST_MAX_CELLS ((uint64_t)1 << 22)
#endif

#ifdef __SIZEOF_INT128__
typedef unsigned __int128 wide;
#else
typedef uint64_t wide; /* 32-bit addresses: products fit in 64 bits */
#endif

static uintptr_t clamp_pc(wide x)
{
	return x > UINTPTR_MAX ? UINTPTR_MAX : (uintptr_t)x;
}

/* First pc of source bin i: offset + (ceil(i * 65536 / scale) << shift). */
static uintptr_t bin_pc(const struct prange *r, uint64_t i)
{
	wide d = ((wide)i * 65536u + r->scale - 1) / r->scale;
	return clamp_pc(((wide)d << r->shift) + r->offset);
}

/* The source bin holding pc (pc >= offset), from the bin formula. */
static uint64_t bin_of(const struct prange *r, uintptr_t pc)
{
	wide d = (wide)((pc - r->offset) >> r->shift);
	wide i = d * r->scale / 65536u;
	return i > UINT64_MAX ? UINT64_MAX : (uint64_t)i;
}

/* Width in UNITs of r's bins, rounded down, at least 1. */
static uint64_t range_width(const struct prange *r)
{
	uint64_t w = ((uint64_t)65536 << r->shift) / 2 / r->scale;
	return w ? w : 1;
}

static uint64_t counter(const struct prange *r, size_t i)
{
	if (r->width == 4)
		return __atomic_load_n((const unsigned int *)r->buf + i, __ATOMIC_RELAXED);
	return __atomic_load_n((const unsigned short *)r->buf + i, __ATOMIC_RELAXED);
}

/* [*a, *b): the pcs of r inside o; 0 when empty or not a histogram. */
static int clip(const struct prange *r, const struct gobj *o, uintptr_t *a, uintptr_t *b)
{
	if (r->kind != PRANGE_HIST || r->nbins == 0 || r->scale == 0)
		return 0;
	*a = r->lowpc > o->lo ? r->lowpc : o->lo;
	*b = r->highpc < o->hi ? r->highpc : o->hi;
	if (*a < r->offset)
		*a = r->offset;
	return *a < *b;
}

static uint64_t cells_for(uintptr_t lo, uintptr_t hi, uint64_t width)
{
	uint64_t bytes = 2 * width;
	return (uint64_t)(hi - 1) / bytes - (uint64_t)lo / bytes + 1;
}

/* Choose the grid: width, first cell and cell count for [lo, hi). */
static int plan(struct ghist *h, const struct ptable *t, const struct gobj *o)
{
	uintptr_t lo = UINTPTR_MAX, hi = 0, a, b;
	uint64_t width = UINT64_MAX;
	for (size_t j = 0; j < t->nranges; j++) {
		if (!clip(&t->ranges[j], o, &a, &b))
			continue;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
		uint64_t w = range_width(&t->ranges[j]);
		width = w < width ? w : width;
	}
	if (hi == 0)
		return 0;
	lo -= o->base, hi -= o->base;
	while (cells_for(lo, hi, width) > GHIST_MAX_CELLS)
		width *= 2;
	h->width = width;
	h->first = lo / (2 * width);
	h->n = (size_t)cells_for(lo, hi, width);
	return 1;
}

/* Credit count c of the source bin [pa, pb) to the grid, for the part
 * [ca, cb) of it inside the object. */
static void spread(struct ghist *h, const struct gobj *o, uint64_t c, uintptr_t pa,
                   uintptr_t pb, uintptr_t ca, uintptr_t cb)
{
	uint64_t bytes = 2 * h->width;
	wide len = pb > pa ? pb - pa : 1;
	uint64_t k0 = (ca - o->base) / bytes, k1 = (cb - 1 - o->base) / bytes;
	uint64_t prev = (uint64_t)((wide)c * (ca - pa) / len);
	for (uint64_t k = k0; k <= k1; k++) {
		uintptr_t end = k == k1 ? cb : o->base + (k + 1) * bytes;
		uint64_t upto = (uint64_t)((wide)c * (end - pa) / len);
		h->cells[k - h->first] += upto - prev;
		h->total += upto - prev;
		prev = upto;
	}
}

static void add_range(struct ghist *h, const struct prange *r, const struct gobj *o)
{
	uintptr_t a, b;
	if (!clip(r, o, &a, &b))
		return;
	/* the pcs that count in r */
	uintptr_t ra = r->lowpc > r->offset ? r->lowpc : r->offset, rb = r->highpc;
	uint64_t i1 = bin_of(r, b - 1);
	if (i1 >= r->nbins)
		i1 = r->nbins - 1;
	for (uint64_t i = bin_of(r, a); i <= i1; i++) {
		uint64_t c = counter(r, (size_t)i);
		if (c == 0)
			continue;
		/* bin i inside the range: a cut bin's samples all came from
		 * the part inside (bin_pc clamps to UINTPTR_MAX, which no
		 * range includes) */
		uintptr_t pa = bin_pc(r, i), pb = bin_pc(r, i + 1);
		pa = pa > ra ? pa : ra;
		pb = pb < rb ? pb : rb;
		if (pa >= pb)
			continue; /* no pc maps to counter i */
		uintptr_t ca = pa > a ? pa : a, cb = pb < b ? pb : b;
		if (ca < cb)
			spread(h, o, c, pa, pb, ca, cb);
	}
}

int ghist_build(struct ghist *h, const struct ptable *t, const struct gobj *o)
{
	*h = (struct ghist){0};
	if (!plan(h, t, o))
		return 0;
	h->cells = calloc(h->n, sizeof h->cells[0]);
	if (!h->cells) {
		errno = ENOMEM;
		return -1;
	}
	for (size_t j = 0; j < t->nranges; j++)
		add_range(h, &t->ranges[j], o);
	return 0;
}

void ghist_free(struct ghist *h)
{
	free(h->cells);
	*h = (struct ghist){0};
}
