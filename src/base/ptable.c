/*
 * ptable.c - building and checking range tables (never in signal context).
 */
#include "base/base.h"

#include <errno.h>
#include <stdlib.h>

struct ptable *ptable_new(size_t nranges)
{
	/* Callers limit what they are given to PTABLE_MAX_RANGES; resolving
	 * overlapping sprofil() regions may split them into up to twice as
	 * many ranges (forms_overlap.c). */
	if (nranges > 2 * (size_t)PTABLE_MAX_RANGES) {
		errno = EINVAL;
		return NULL;
	}
	struct ptable *t = mem_calloc(1, sizeof *t + nranges * sizeof t->ranges[0]);
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->nranges = nranges;
	return t;
}

void ptable_free(struct ptable *t)
{
	mem_free(t);
}

static int by_lowpc(const void *a, const void *b)
{
	const struct prange *x = a, *y = b;
	return (x->lowpc > y->lowpc) - (x->lowpc < y->lowpc);
}

int ptable_sort_check(struct ptable *t)
{
	sort_inplace(t->ranges, t->nranges, sizeof t->ranges[0], by_lowpc);
	for (size_t i = 0; i < t->nranges; i++) {
		if (t->ranges[i].lowpc >= t->ranges[i].highpc)
			goto invalid;
		if (i > 0 && t->ranges[i - 1].highpc > t->ranges[i].lowpc)
			goto invalid;
	}
	return 0;
invalid:
	errno = EINVAL;
	return -1;
}

/*
 * First pc past the last counter: the smallest d with
 * floor(d * scale / 65536) >= nbins is d = ceil(nbins * 65536 / scale),
 * and pc = offset + (d << shift).  Computed in 128 bits where available
 * and clamped to UINTPTR_MAX (the whole address space above offset).
 */
uintptr_t prange_end(const struct prange *r)
{
	if (r->kind == PRANGE_TICK)
		return UINTPTR_MAX;
	if (r->scale == 0)
		return r->offset;
#ifdef __SIZEOF_INT128__
	unsigned __int128 d = ((unsigned __int128)r->nbins * 65536u + r->scale - 1) / r->scale;
	unsigned __int128 end = ((unsigned __int128)d << r->shift) + r->offset;
	return end > UINTPTR_MAX ? UINTPTR_MAX : (uintptr_t)end;
#else
	uint64_t d = ((uint64_t)r->nbins * 65536u + r->scale - 1) / r->scale;
	uint64_t end = (d << r->shift) + r->offset;
	return end > UINTPTR_MAX ? UINTPTR_MAX : (uintptr_t)end;
#endif
}
