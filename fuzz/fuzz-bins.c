/*
 * fuzz-bins.c - the bin arithmetic and the range table, differential
 * against plain references (issue 15).
 *
 * Each input is read as a stream of 64-bit words and checks three things:
 *
 *  - bin_index() (src/base/bin.h) against the formula computed in 128 bits;
 *  - prange_end() (src/base/ptable.c): the last pc before it must map to a
 *    counter and the pc at it must not (where the formula is monotone,
 *    i.e. always: floor of a nondecreasing function);
 *  - forms_claim() (src/forms/forms_overlap.c), glibc's sprofil() rule for
 *    overlapping regions, against the definition: a pc belongs to the
 *    region with the highest lowpc that contains it, ties to the first
 *    given.  The pieces must also pass ptable_sort_check().
 *
 * The references are deliberately naive (linear scans, __int128), so a
 * disagreement is a bug in the fast code, not in the oracle.
 */
#include "../src/base/bin.h"
#include "../src/forms/forms.h"
#include "../src/base/base.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t word(struct in *in)
{
	uint64_t w = 0;
	size_t k = in->n < 8 ? in->n : 8;
	memcpy(&w, in->p, k);
	in->p += k, in->n -= k;
	return w;
}

static int ref_index(uint64_t pc, uint64_t off, unsigned shift, uint32_t scale,
                     uint64_t nbins, uint64_t *out)
{
	if (pc < off)
		return 0;
	unsigned __int128 i = ((unsigned __int128)((pc - off) >> shift) * scale) >> 16;
	if (i >= nbins)
		return 0;
	*out = (uint64_t)i;
	return 1;
}

static void check_bin(uint64_t pc, uint64_t off, unsigned shift, uint32_t scale, uint64_t nbins)
{
	uint64_t want = 0;
	size_t got = 0;
	int wr = ref_index(pc, off, shift, scale, nbins, &want);
	int gr = bin_index(pc, off, shift, scale, nbins, &got);
	if (wr != gr || (wr && want != got))
		abort();
}

static void check_end(uint64_t off, unsigned shift, uint32_t scale, uint64_t nbins)
{
	struct prange r = {.offset = off, .nbins = nbins, .scale = scale,
	                   .shift = (uint8_t)shift, .kind = PRANGE_HIST};
	if (scale == 0 || nbins == 0)
		return;
	uint64_t end = prange_end(&r);
	size_t i;
	if (end > off && !bin_index(end - 1, off, shift, scale, nbins, &i))
		abort(); /* the last pc of the range must count */
	if (end < UINT64_MAX && bin_index(end, off, shift, scale, nbins, &i))
		abort(); /* a pc past the end would count too */
}

#define MAXREG 12

/* The index of the region that owns pc by the definition, or -1. */
static int ref_owner(const struct prange *reg, size_t n, uint64_t pc)
{
	int best = -1;
	for (size_t i = 0; i < n; i++)
		if (reg[i].lowpc <= pc && pc < reg[i].highpc &&
		    (best < 0 || reg[i].lowpc > reg[best].lowpc))
			best = (int)i;
	return best;
}

static int table_owner(const struct ptable *t, uint64_t pc)
{
	for (size_t i = 0; i < t->nranges; i++)
		if (t->ranges[i].lowpc <= pc && pc < t->ranges[i].highpc)
			return (int)((uintptr_t)t->ranges[i].buf - 1);
	return -1;
}

static void check_claim(struct in *in)
{
	struct prange reg[MAXREG];
	size_t n = (size_t)(word(in) % (MAXREG + 1));
	/* small coordinates collide often: that is where overlaps are */
	uint64_t mask = word(in) & 1 ? 0xff : UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = word(in) & mask, b = word(in) & mask;
		if (a == b)
			b = a + 1 == 0 ? a - 1 : a + 1;
		memset(&reg[i], 0, sizeof reg[i]);
		reg[i].lowpc = a < b ? a : b;
		reg[i].highpc = a < b ? b : a;
		reg[i].buf = (void *)(uintptr_t)(i + 1); /* identifies the region */
	}
	struct ptable *t = ptable_new(2 * n);
	if (!t)
		abort();
	t->nranges = 0;
	if (forms_claim(t, reg, n) != 0 || t->nranges > 2 * n)
		abort();
	if (ptable_sort_check(t) != 0)
		abort(); /* pieces empty or overlapping */
	/* every boundary, and either side of it, decides the answer */
	for (size_t i = 0; i < n; i++) {
		uint64_t pts[4] = {reg[i].lowpc, reg[i].highpc, reg[i].lowpc - 1, reg[i].highpc - 1};
		for (int k = 0; k < 4; k++)
			if (ref_owner(reg, n, pts[k]) != table_owner(t, pts[k]))
				abort();
	}
	ptable_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = {data, size};
	while (in.n >= 32) {
		uint64_t pc = word(&in), off = word(&in), sw = word(&in), nb = word(&in);
		uint32_t scale = (uint32_t)sw >> ((sw >> 32) & 31);
		unsigned shift = 1 + ((sw >> 40) & 1);
		/* offsets near pc: indexes near nbins are the interesting ones */
		if ((sw >> 48) & 1)
			off = pc - (off & 0xfffff);
		uint64_t nbins = (sw >> 49) & 1 ? nb & 0xfffff : nb;
		check_bin(pc, off, shift, scale, nbins);
		check_end(off, shift, scale, nbins);
		if ((sw >> 50) & 1)
			check_claim(&in);
	}
	return 0;
}
