/*
 * forms_tru64.c - Tru64 UNIX's multi-range profil() (docs/contract.md,
 * "Tru64 profil_args"):
 *
 *   profil((unsigned short *)args, n, (size_t)-1, flags)
 *
 * args[n] are struct profil_args { buffer, highpc, lowpc, offset, scale }.
 * A sample at pc with lowpc <= pc < highpc counts, as a 32-bit counter, in
 * buffer[floor(floor((pc - offset) / 4) * scale / 65536)].  The entries
 * must be ordered by decreasing lowpc and must not overlap; flags is
 * reserved and must be 0.
 *
 * Tru64 gives no buffer size: the buffer holds exactly the counters that
 * [lowpc, highpc) maps to, so its size follows from highpc.  An entry with
 * scale 0 or 1 profiles nothing, as those scales do in the classic call.
 * Tru64 allowed 64 entries; we allow PTABLE_MAX_RANGES (profil(3)).
 */
#include "forms/forms.h"
#include "base/bin.h"

#include <errno.h>
#include <stdlib.h>

/* Bytes of text per 32-bit counter at scale 0x10000, as a shift. */
#define TRU64_SHIFT 2
#define TRU64_WIDTH 4

/* Entry i alone, and against its predecessor: EINVAL unless well formed. */
static int check_entry(const struct profil_args *a, size_t i)
{
	uintptr_t lo = (uintptr_t)a[i].lowpc, hi = (uintptr_t)a[i].highpc;
	if (lo >= hi || (uintptr_t)a[i].offset > lo)
		return -1;
	/* decreasing lowpc and no overlap: this range ends at or below the
	 * start of the previous one */
	if (i > 0 && hi > (uintptr_t)a[i - 1].lowpc)
		return -1;
	return 0;
}

/* Counters needed for [lowpc, highpc): the index of highpc - 1, plus 1.
 * 0 when the arithmetic cannot represent the buffer. */
static size_t entry_nbins(const struct profil_args *a)
{
	size_t last;
	if (!bin_index((uintptr_t)a->highpc - 1, (uintptr_t)a->offset, TRU64_SHIFT,
	               a->scale, SIZE_MAX / TRU64_WIDTH, &last))
		return 0;
	return last + 1;
}

/* Fills t's ranges from the checked copy a[n]; skips "off" entries. */
static int fill(struct ptable *t, const void *copy, size_t n, const void *unused)
{
	const struct profil_args *a = copy;
	(void)unused;
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		if (check_entry(a, i) != 0)
			goto invalid;
		if (a[i].scale < 2)
			continue;
		size_t nbins = entry_nbins(&a[i]);
		struct prange *r = &t->ranges[used];
		if (nbins == 0 ||
		    forms_set_buffer(r, a[i].buffer, nbins * TRU64_WIDTH, TRU64_WIDTH) != 0)
			goto invalid;
		r->kind = PRANGE_HIST;
		r->lowpc = (uintptr_t)a[i].lowpc;
		r->highpc = (uintptr_t)a[i].highpc;
		r->offset = (uintptr_t)a[i].offset;
		r->scale = a[i].scale;
		r->shift = TRU64_SHIFT;
		used++;
	}
	t->nranges = used;
	return 0;
invalid:
	errno = EINVAL;
	return -1;
}

int forms_tru64(const struct profil_args *args, size_t n, unsigned int flags)
{
	if (flags != 0 || n > PTABLE_MAX_RANGES)
		return forms_fail(EINVAL);
	if (n == 0)
		return gmon_publish(NULL); /* nothing to profile */
	struct profil_args *a = forms_copy_array(args, n, sizeof *a);
	if (!a)
		return forms_fail(errno);
	return forms_build(a, n, n, PFORM_TRU64, fill, NULL);
}
