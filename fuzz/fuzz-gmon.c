/*
 * fuzz-gmon.c - the gmon.out writer, round trip (issue 15): a range table
 * re-binned onto one object's grid (ghist_build(), src/gmon/gmon_bins.c),
 * written by gout_*() (src/gmon/gmon_file.c) and read back by a parser of its
 * own.
 *
 * Each input chooses a range table (1..6 ranges: 16- or 32-bit counters,
 * shift 1 or 2, scales from 1 to above 0x10000, offsets below lowpc,
 * highpc at the counters' end or cutting a bin, counts near 65535 and up
 * to 2^32 - 1, tick ranges), an object (lo, hi, base) around them, and the
 * rate.  Checked:
 *
 *  - the file: header "gmon" version 1 and histogram records only, each
 *    with lowpc < highpc, (highpc - lowpc) / bins the grid's cell width,
 *    the rate given, "seconds"/'s', cells that all meet the object's
 *    relative range [lo - base, hi - base), and a nonzero counter (or the
 *    one zero bin of an empty histogram); two records either do not
 *    overlap or cover the same range (gprof's rule);
 *  - the counters read back, summed per cell, are h->cells exactly, and
 *    add up to h->total;
 *  - the grid: cells as wide as the finest whole bin width of the ranges
 *    that meet the object, doubled only as far as GHIST_MAX_CELLS need, and
 *    just the cells that meet those ranges' part in the object;
 *  - conservation against the table.  Counter i of a range counts the
 *    samples at S_i, the pcs of [lowpc, highpc) whose bin is i.  Its count
 *    goes wholly to h->total when S_i lies in the object, not at all when
 *    S_i is empty or outside it, and as the floor or the ceiling of its
 *    proportional share when S_i straddles the object's edge (the split
 *    gmon_bins.c documents).  Per cell the same bounds hold share by
 *    share (checked up to 2^20 shares an input).  It found a bin cut by
 *    its range's edge losing part of its count
 *    (test gmon_cut_bin_keeps_its_count).
 *  - failures leave nothing behind: a target in a missing directory
 *    fails in gout_open() and creates nothing; a write cut short by
 *    RLIMIT_FSIZE fails with EFBIG, removes its temporary file and leaves
 *    the previous file byte for byte.
 *
 * Why the references can be trusted: S_i comes from the definition of the
 * bin formula, P_i = offset + (ceil(i * 65536 / scale) << shift) the first
 * pc of bin i in 128 bits, and every S_i is checked at both ends against
 * bin_index() (src/base/bin.h, itself fuzzed against a 128-bit reference by
 * fuzz-bins); the shares are exact rationals; the parser follows binutils'
 * gmon_out.h and shares no code with the writer.
 *
 * gmon_bins.c is compiled in with GHIST_MAX_CELLS 4096 instead of 2^22
 * (Makefile): the same code then coarsens its grid after 4096 cells, so
 * coarse grids are common and every input is fast.  Files over 1 MiB are
 * not written (slow; a cell of 2^32 samples takes 65538 records, the same
 * code as the 256 of a cell of 2^24).  Objects end at most
 * 2^63 bytes above their base: a cell rounded up past 2^64 could not be
 * written, and no real object comes near.
 */
#include "../src/base/bin.h"
#include "../src/gmon/gmon.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAXR 6
#define OBJ_SPAN ((uintptr_t)1 << 63)
#ifndef GHIST_MAX_CELLS
#error "built with gmon_bins.c and its GHIST_MAX_CELLS (Makefile)"
#endif
#define MAX_CELLS GHIST_MAX_CELLS
#define MAX_FILE ((uint64_t)1 << 20)  /* larger files are not written */
#define CELL_CHECK_CELLS ((size_t)1 << 16)
#define CELL_CHECK_WORK ((uint64_t)1 << 20)
#define HDR 20
#define REC_HDR (1 + 2 * sizeof(uintptr_t) + 4 + 4 + 15 + 1)

typedef unsigned __int128 u128;

/* The oracle's per-cell loops: not worth coverage feedback. */
#define ORACLE __attribute__((no_sanitize("coverage"), noinline))

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t get(struct in *in, size_t k)
{
	uint64_t w = 0;
	k = in->n < k ? in->n : k;
	memcpy(&w, in->p, k);
	in->p += k, in->n -= k;
	return w;
}

/* A scratch directory per input (libFuzzer may end without atexit). */
static char dir[64], target[96], missing[128];

static void scratch(void)
{
	/* tmpfs where there is one: gout_finish() fsyncs */
	snprintf(dir, sizeof dir, "%s/fuzz-gmon-XXXXXX",
	         access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(target, sizeof target, "%s/gmon.out", dir);
	snprintf(missing, sizeof missing, "%s/none/gmon.out", dir);
}

static void unscratch(void)
{
	if (unlink(target) != 0 || rmdir(dir) != 0)
		abort();
}

/* The scratch directory holds gmon.out and nothing else. */
static void check_dir(void)
{
	DIR *d = opendir(dir);
	if (!d)
		abort();
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (strcmp(e->d_name, "gmon.out") != 0)
			abort(); /* a temporary file left behind */
		n++;
	}
	closedir(d);
	if (n != 1)
		abort();
}

static uint8_t *slurp(const char *path, size_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0)
		abort();
	uint8_t *p = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (p && got < (size_t)st.st_size) {
		ssize_t k = read(fd, p + got, (size_t)st.st_size - got);
		if (k <= 0)
			abort();
		got += (size_t)k;
	}
	close(fd);
	if (!p)
		abort();
	*size = got;
	return p;
}

/* ---- the table ---- */

static uint32_t pick_scale(struct in *in, unsigned m)
{
	switch (m & 7) {
	case 0: return 0x10000;
	case 1: return 0x8000;
	case 2: return (uint32_t)get(in, 2) | 2;          /* bins of several units */
	case 3: return 1 + (uint32_t)get(in, 1);          /* huge bins */
	case 4: return 0x10000 + (uint32_t)get(in, 2);    /* indexes skipped */
	case 5: return (uint32_t)get(in, 4);              /* anything, 0 too */
	case 6: return 0x10000u >> (get(in, 1) % 17);
	default: return 0x4000;
	}
}

static uint64_t pick_count(struct in *in, unsigned width)
{
	unsigned b = (unsigned)get(in, 1);
	uint64_t c;
	if (b < 64)
		c = 0;
	else if (b < 128)
		c = b & 31;
	else if (b < 176)
		c = 65520 + (b & 31); /* either side of 65535 */
	else if (b < 224)
		c = get(in, 2);
	else if (b < 252)
		c = get(in, 4) >> (8 + 2 * (b & 7)); /* up to 2^24: 256 records */
	else /* the largest: 65538 records of a cell, seldom (slow) */
		c = 0xffffffffu - (b & 3);
	return width == 2 && c > 0xffff ? 0xffff : c;
}

static uintptr_t sat_add(uintptr_t a, uint64_t b)
{
	return a > UINTPTR_MAX - b ? UINTPTR_MAX : a + b;
}

/* Builds up to MAXR sorted, disjoint ranges; NULL when none fits. */
static struct ptable *make_table(struct in *in)
{
	size_t want = 1 + get(in, 1) % MAXR;
	struct ptable *t = ptable_new(want);
	if (!t)
		abort();
	t->nranges = 0;
	uint64_t x = get(in, 8);
	unsigned m = (unsigned)get(in, 1);
	uintptr_t cur = m % 4 == 0 ? x & 0xffff
	              : m % 4 == 1 ? x & 0xffffffffffu
	              : m % 4 == 2 ? UINTPTR_MAX - (x & 0xfffff) : x;
	for (size_t j = 0; j < want && cur < UINTPTR_MAX; j++) {
		struct prange *r = &t->ranges[t->nranges];
		m = (unsigned)get(in, 1);
		r->width = m & 1 ? 4 : 2;
		r->shift = m & 2 ? 2 : 1;
		r->kind = (m & 0x1c) == 0x1c ? PRANGE_TICK : PRANGE_HIST;
		r->scale = pick_scale(in, m >> 5);
		unsigned nb = (unsigned)get(in, 1);
		r->nbins = nb & 0x80 ? (nb & 0x7f) * 8 + 1 : nb % 64 + 1;
		unsigned g = (unsigned)get(in, 1);
		uint64_t gap = (g & 0xc0) == 0xc0 ? get(in, 8) >> (g & 31) : g & 0x7f;
		r->lowpc = sat_add(cur, gap);
		if (r->lowpc == UINTPTR_MAX)
			break;
		unsigned o = (unsigned)get(in, 1);
		uint64_t back = o < 128 ? 0 : o < 192 ? get(in, 2) : get(in, 4);
		r->offset = r->lowpc >= back ? r->lowpc - back : 0;
		uintptr_t end = prange_end(r);
		unsigned hb = (unsigned)get(in, 1);
		if (hb < 128 && end > r->lowpc)
			r->highpc = end; /* where the counters end */
		else /* anywhere: cutting a bin, or past the counters */
			r->highpc = sat_add(r->lowpc, 1 + (hb & 1 ? get(in, 2) : get(in, 1)));
		cur = r->highpc;
		r->buf = calloc(r->nbins, r->width);
		if (!r->buf)
			abort();
		for (size_t i = 0; i < r->nbins; i++) {
			uint64_t c = pick_count(in, r->width);
			if (r->width == 4)
				((uint32_t *)r->buf)[i] = (uint32_t)c;
			else
				((uint16_t *)r->buf)[i] = (uint16_t)c;
		}
		t->nranges++;
	}
	if (t->nranges == 0 || ptable_sort_check(t) != 0) {
		if (t->nranges)
			abort(); /* built sorted and disjoint */
		ptable_free(t);
		return NULL;
	}
	return t;
}

static void free_table(struct ptable *t)
{
	for (size_t j = 0; j < t->nranges; j++)
		free(t->ranges[j].buf);
	ptable_free(t);
}

static void make_object(struct in *in, const struct ptable *t, struct gobj *o)
{
	uintptr_t L = t->ranges[0].lowpc, H = t->ranges[t->nranges - 1].highpc;
	unsigned m = (unsigned)get(in, 1);
	uint64_t d1 = get(in, 2), d2 = get(in, 2);
	switch (m & 3) {
	case 0: /* exactly the table */
		o->lo = L, o->hi = H;
		break;
	case 1: /* edges moved a little either way */
		o->lo = m & 4 ? sat_add(L, d1) : L >= d1 ? L - d1 : 0;
		o->hi = m & 8 ? sat_add(H, d2) : H >= d2 ? H - d2 : 0;
		break;
	case 2: /* inside the table's span */
		o->lo = L + (uintptr_t)(get(in, 8) % (H - L));
		o->hi = o->lo + (uintptr_t)(get(in, 8) % (H - o->lo)) + 1;
		break;
	default:
		o->lo = 0, o->hi = UINTPTR_MAX;
	}
	if (o->lo >= o->hi) {
		if (o->lo == UINTPTR_MAX)
			o->lo--;
		o->hi = o->lo + 1;
	}
	switch ((m >> 4) & 3) {
	case 0: o->base = 0; break;
	case 1: o->base = o->lo; break;
	case 2: o->base = o->lo & ~(uintptr_t)0xfff; break;
	default: {
		uint64_t b = get(in, 4);
		o->base = o->lo - (o->lo < b ? o->lo : b);
	}
	}
	if (o->lo - o->base >= OBJ_SPAN)
		o->base = o->lo;
	if (o->hi - o->base > OBJ_SPAN)
		o->hi = o->base + OBJ_SPAN;
	o->name = "";
}

/* ---- the references ---- */

static uint64_t count_of(const struct prange *r, size_t i)
{
	return r->width == 4 ? ((const uint32_t *)r->buf)[i] : ((const uint16_t *)r->buf)[i];
}

/* P_i: the first pc whose bin index is >= i (may pass 2^64). */
static u128 first_pc(const struct prange *r, u128 i)
{
	u128 d = (i * 65536u + r->scale - 1) / r->scale;
	return (d << r->shift) + r->offset;
}

static int counts(const struct prange *r)
{
	return r->kind == PRANGE_HIST && r->nbins > 0 && r->scale > 0;
}

/* S_i = [*s0, *s1), checked against bin_index(); 0 when empty. */
static int samples_of(const struct prange *r, size_t i, u128 *s0, u128 *s1)
{
	u128 from = r->lowpc > r->offset ? r->lowpc : r->offset;
	u128 a = first_pc(r, i), b = first_pc(r, (u128)i + 1);
	*s0 = a > from ? a : from;
	*s1 = b < r->highpc ? b : r->highpc;
	size_t k;
	if (*s0 >= *s1) {
		/* empty: no pc of the range has bin i */
		if (*s0 < r->highpc && bin_index((uintptr_t)*s0, r->offset, r->shift, r->scale,
		                                  r->nbins, &k) && k == i)
			abort();
		return 0;
	}
	uintptr_t p0 = (uintptr_t)*s0, p1 = (uintptr_t)(*s1 - 1);
	if (!bin_index(p0, r->offset, r->shift, r->scale, r->nbins, &k) || k != i)
		abort();
	if (!bin_index(p1, r->offset, r->shift, r->scale, r->nbins, &k) || k != i)
		abort();
	if (*s0 > from && bin_index(p0 - 1, r->offset, r->shift, r->scale, r->nbins, &k) &&
	    k == i)
		abort();
	if (*s1 < r->highpc && bin_index(p1 + 1, r->offset, r->shift, r->scale, r->nbins, &k) &&
	    k == i)
		abort();
	return 1;
}

/* floor and ceiling of c * part / whole */
static void share(uint64_t c, u128 part, u128 whole, uint64_t *lo, uint64_t *hi)
{
	u128 p = (u128)c * part;
	*lo = (uint64_t)(p / whole);
	*hi = *lo + (p % whole != 0);
}

/* The grid by the documented rule; 0 when no range meets the object. */
static int ref_grid(const struct ptable *t, const struct gobj *o, uint64_t *width,
                    uintptr_t *lo, uintptr_t *hi)
{
	uint64_t w = UINT64_MAX;
	*lo = UINTPTR_MAX, *hi = 0;
	for (size_t j = 0; j < t->nranges; j++) {
		const struct prange *r = &t->ranges[j];
		uintptr_t a = r->lowpc > r->offset ? r->lowpc : r->offset;
		a = a > o->lo ? a : o->lo;
		uintptr_t b = r->highpc < o->hi ? r->highpc : o->hi;
		if (!counts(r) || a >= b)
			continue;
		uint64_t rw = ((uint64_t)65536 << r->shift) / 2 / r->scale;
		rw = rw ? rw : 1;
		w = rw < w ? rw : w;
		*lo = a < *lo ? a : *lo;
		*hi = b > *hi ? b : *hi;
	}
	if (*hi == 0)
		return 0;
	*lo -= o->base, *hi -= o->base;
	while ((*hi - 1) / (2 * w) - *lo / (2 * w) + 1 > MAX_CELLS)
		w *= 2;
	*width = w;
	return 1;
}

ORACLE static void check_grid(const struct ghist *h, const struct ptable *t, const struct gobj *o)
{
	uint64_t w;
	uintptr_t lo, hi;
	if (!ref_grid(t, o, &w, &lo, &hi)) {
		if (h->n != 0 || h->total != 0)
			abort();
		return;
	}
	uint64_t bytes = 2 * w;
	if (h->n == 0 || h->n > MAX_CELLS || h->width != w || !h->cells)
		abort();
	if (h->first != lo / bytes || h->first + h->n - 1 != (hi - 1) / bytes)
		abort();
	uint64_t sum = 0;
	for (size_t k = 0; k < h->n; k++)
		sum += h->cells[k];
	if (sum != h->total)
		abort();
}

/* Conservation: the total exactly, or within the straddling counters'
 * floors and ceilings; per cell the same when the grid is small. */
ORACLE static void check_counts(const struct ghist *h, const struct ptable *t, const struct gobj *o)
{
	uint64_t tlo = 0, thi = 0, work = 0, bytes = 2 * h->width;
	int per_cell = h->n > 0 && h->n <= CELL_CHECK_CELLS;
	uint64_t *clo = per_cell ? calloc(h->n, sizeof *clo) : NULL;
	uint64_t *chi = per_cell ? calloc(h->n, sizeof *chi) : NULL;
	if (per_cell && (!clo || !chi))
		abort();
	for (size_t j = 0; j < t->nranges; j++) {
		const struct prange *r = &t->ranges[j];
		if (!counts(r))
			continue;
		for (size_t i = 0; i < r->nbins; i++) {
			u128 s0, s1;
			uint64_t c = count_of(r, i);
			if (!samples_of(r, i, &s0, &s1) || c == 0)
				continue;
			u128 x0 = s0 > o->lo ? s0 : o->lo, x1 = s1 < o->hi ? s1 : o->hi;
			if (x0 >= x1)
				continue; /* outside the object */
			uint64_t fl, ce;
			share(c, x1 - x0, s1 - s0, &fl, &ce);
			tlo += fl, thi += ce;
			if (!per_cell)
				continue;
			uint64_t k0 = (uint64_t)(x0 - o->base) / bytes;
			uint64_t k1 = (uint64_t)(x1 - 1 - o->base) / bytes;
			if (k0 < h->first || k1 >= h->first + h->n)
				abort(); /* samples of the object off the grid */
			if ((work += k1 - k0 + 1) > CELL_CHECK_WORK) {
				per_cell = 0;
				continue;
			}
			for (uint64_t k = k0; k <= k1; k++) {
				u128 c0 = (u128)o->base + k * bytes, c1 = c0 + bytes;
				u128 y0 = x0 > c0 ? x0 : c0, y1 = x1 < c1 ? x1 : c1;
				share(c, y1 - y0, s1 - s0, &fl, &ce);
				clo[k - h->first] += fl, chi[k - h->first] += ce;
			}
		}
	}
	if (h->total < tlo || h->total > thi)
		abort();
	for (size_t k = 0; per_cell && k < h->n; k++)
		if (h->cells[k] < clo[k] || h->cells[k] > chi[k])
			abort();
	free(clo);
	free(chi);
}

/* ---- the file ---- */

struct rec {
	uintptr_t lo, hi;
};

static int by_range(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->hi > y->hi) - (x->hi < y->hi);
}

static void need(size_t off, size_t k, size_t size)
{
	if (k > size - off)
		abort(); /* truncated */
}

ORACLE static void check_file(const uint8_t *f, size_t size, const struct ghist *h, uint32_t rate,
                       const struct gobj *o)
{
	static const char dimen[15] = "seconds";
	uint32_t u;
	need(0, HDR, size);
	memcpy(&u, f + 4, 4);
	if (memcmp(f, "gmon", 4) != 0 || u != 1)
		abort();
	for (int i = 8; i < HDR; i++)
		if (f[i] != 0)
			abort();
	uint64_t bytes = 2 * h->width;
	uintptr_t olo = o->lo - o->base, ohi = o->hi - o->base;
	uint64_t *acc = calloc(h->n ? h->n : 1, sizeof *acc);
	size_t nrec = 0, cap = 16;
	struct rec *recs = malloc(cap * sizeof *recs);
	if (!acc || !recs)
		abort();
	int zero_rec = 0;
	for (size_t off = HDR; off < size;) {
		struct rec rc;
		uint32_t bins, r;
		need(off, REC_HDR, size);
		if (f[off] != 0)
			abort(); /* histogram records only */
		memcpy(&rc.lo, f + off + 1, sizeof rc.lo);
		memcpy(&rc.hi, f + off + 1 + sizeof rc.lo, sizeof rc.hi);
		memcpy(&bins, f + off + 1 + 2 * sizeof rc.lo, 4);
		memcpy(&r, f + off + 5 + 2 * sizeof rc.lo, 4);
		const uint8_t *dm = f + off + 9 + 2 * sizeof rc.lo;
		if (memcmp(dm, dimen, 15) != 0 || dm[15] != 's' || r != rate)
			abort();
		off += REC_HDR;
		if (h->n == 0 || rc.lo >= rc.hi || bins == 0 || (rc.hi - rc.lo) % bins != 0 ||
		    (rc.hi - rc.lo) / bins != bytes || rc.lo % bytes != 0)
			abort();
		uint64_t k0 = rc.lo / bytes, k1 = k0 + bins; /* cells [k0, k1) */
		if (k0 < olo / bytes || k1 - 1 > (ohi - 1) / bytes)
			abort(); /* a cell outside the object */
		if (k0 < h->first || k1 > h->first + h->n)
			abort();
		need(off, 2 * (size_t)bins, size);
		int nonzero = 0;
		for (uint32_t j = 0; j < bins; j++) {
			uint16_t v;
			memcpy(&v, f + off + 2 * j, 2);
			acc[k0 - h->first + j] += v;
			nonzero |= v != 0;
		}
		off += 2 * (size_t)bins;
		if (!nonzero) {
			if (h->total != 0 || bins != 1)
				abort(); /* only "no time accumulated" has no count */
			zero_rec++;
		}
		if (nrec == cap && !(recs = realloc(recs, (cap *= 2) * sizeof *recs)))
			abort();
		recs[nrec++] = rc;
	}
	if (h->n > 0 && h->total == 0 && (nrec != 1 || zero_rec != 1))
		abort();
	qsort(recs, nrec, sizeof *recs, by_range);
	for (size_t i = 1; i < nrec; i++)
		if (recs[i].lo < recs[i - 1].hi &&
		    (recs[i].lo != recs[i - 1].lo || recs[i].hi != recs[i - 1].hi))
			abort(); /* overlapping, not identical */
	uint64_t sum = 0;
	for (size_t k = 0; k < h->n; k++) {
		if (acc[k] != h->cells[k])
			abort();
		sum += acc[k];
	}
	if (sum != h->total)
		abort();
	free(acc);
	free(recs);
}

/* A bound on the file's size, from the run rules of gmon_file.c: a cold
 * run spans nonzero cells and gaps of at most 24 zeros, a hot run (cells
 * over 65535) is repeated once per 65535 of its largest cell. */
ORACLE static uint64_t size_bound(const struct ghist *h)
{
	uint64_t cold = 0, hot = 0, layers = 1;
	for (size_t k = 0; k < h->n; k++) {
		uint64_t c = h->cells[k];
		if (c > 0xffff) {
			hot++;
			uint64_t l = (c + 0xfffe) / 0xffff;
			layers = l > layers ? l : layers;
		} else if (c) {
			cold++;
		}
	}
	return HDR + REC_HDR + 2 + cold * (REC_HDR + 2 * 25) + hot * layers * (REC_HDR + 2);
}

static void round_trip(struct in *in, const struct ghist *h, uint32_t rate, const struct gobj *o)
{
	unsigned m = (unsigned)get(in, 1);
	uint64_t lim = get(in, 4);
	if (size_bound(h) > MAX_FILE)
		return;
	scratch();
	struct gout *g = gout_open(target);
	if (!g)
		abort();
	gout_put_hist(g, h, rate);
	if (gout_finish(g) != 0 || gout_commit(g) != 0)
		abort();
	check_dir();
	size_t size;
	uint8_t *f = slurp(target, &size);
	check_file(f, size, h, rate, o);

	/* a missing directory: nothing created */
	errno = 0;
	if (gout_open(missing) != NULL || errno != ENOENT)
		abort();
	check_dir();

	/* a write cut short: EFBIG, no temporary, the old file intact */
	struct rlimit old, cut;
	if ((m & 1) && getrlimit(RLIMIT_FSIZE, &old) == 0 && old.rlim_cur == RLIM_INFINITY) {
		cut.rlim_cur = (rlim_t)(lim % size), cut.rlim_max = old.rlim_max;
		/* ignored for the while: libFuzzer catches SIGXFSZ */
		struct sigaction ign = {.sa_handler = SIG_IGN}, was;
		if (!(g = gout_open(target)))
			abort();
		if (sigaction(SIGXFSZ, &ign, &was) != 0 || setrlimit(RLIMIT_FSIZE, &cut) != 0)
			abort();
		gout_put_hist(g, h, rate);
		int rc = gout_finish(g), e = errno;
		if (setrlimit(RLIMIT_FSIZE, &old) != 0 || sigaction(SIGXFSZ, &was, NULL) != 0)
			abort();
		if (rc != -1 || e != EFBIG)
			abort();
		gout_abort(g);
		check_dir();
		size_t size2;
		uint8_t *f2 = slurp(target, &size2);
		if (size2 != size || memcmp(f, f2, size) != 0)
			abort();
		free(f2);
	}
	free(f);
	unscratch();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {data, size};
	struct ptable *t = make_table(&in);
	if (!t)
		return 0;
	struct gobj o;
	make_object(&in, t, &o);
	uint32_t rate = (uint32_t)get(&in, 4);
	struct ghist h;
	if (ghist_build(&h, t, &o) != 0)
		abort(); /* at most 2^22 cells: 32 MiB */
	check_grid(&h, t, &o);
	check_counts(&h, t, &o);
	round_trip(&in, &h, rate, &o);
	ghist_free(&h);
	free_table(t);
	return 0;
}
