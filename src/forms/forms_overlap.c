/*
 * forms_overlap.c - turns regions that may overlap into the disjoint
 * ranges the signal handler searches (glibc's sprofil() rule, see
 * docs/contract.md, "sprofil"):
 *
 *   regions claim addresses in order of decreasing offset (lowpc), each
 *   taking only the parts of [lowpc, highpc) no earlier region took; of
 *   regions with the same lowpc, the one given first claims first.
 *
 * Resolving this once, when the call is made, keeps the handler a plain
 * binary search over sorted, non-overlapping ranges.  A region split in
 * pieces keeps its offset, scale and buffer in every piece, so a pc counts
 * in the same counter as if the region were alone.
 *
 * Cost: since every region starts at or below every region that claimed
 * before it, the addresses already claimed form a stack of disjoint spans
 * whose lowest is on top.  A region pops the spans it reaches (each span
 * is popped once over the whole call), emits the gaps between them, and
 * pushes one merged span.  So n regions take O(n log n) for the sort and
 * O(n) after it, and yield at most 2n pieces: each region emits at most
 * one piece more than the spans it pops.
 */
#include "forms/forms.h"

#include <errno.h>
#include <stdlib.h>

struct claim {
	struct prange r;
	size_t order; /* position in the caller's array: ties go to the first */
};

struct span {
	uintptr_t lo, hi;
};

static int by_claim_order(const void *a, const void *b)
{
	const struct claim *x = a, *y = b;
	if (x->r.lowpc != y->r.lowpc)
		return x->r.lowpc < y->r.lowpc ? 1 : -1; /* decreasing offset */
	return (x->order > y->order) - (x->order < y->order);
}

static void emit(struct ptable *t, const struct prange *r, uintptr_t lo, uintptr_t hi)
{
	struct prange *p = &t->ranges[t->nranges++];
	*p = *r;
	p->lowpc = lo;
	p->highpc = hi;
}

/* Region r takes what is free of [r->lowpc, r->highpc). */
static void take(struct ptable *t, const struct prange *r, struct span *stack, size_t *depth)
{
	uintptr_t free_from = r->lowpc, merged_hi = r->highpc;
	while (*depth > 0 && stack[*depth - 1].lo < r->highpc) {
		struct span s = stack[--*depth]; /* s.lo >= r->lowpc: see the top */
		if (s.lo > free_from)
			emit(t, r, free_from, s.lo);
		if (s.hi > free_from)
			free_from = s.hi;
		if (s.hi > merged_hi)
			merged_hi = s.hi;
	}
	if (free_from < r->highpc)
		emit(t, r, free_from, r->highpc);
	stack[(*depth)++] = (struct span){r->lowpc, merged_hi};
}

int forms_claim(struct ptable *t, const struct prange *regions, size_t n)
{
	struct claim *c = malloc((n ? n : 1) * sizeof *c);
	struct span *stack = malloc((n ? n : 1) * sizeof *stack);
	if (!c || !stack) {
		free(c), free(stack);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		c[i] = (struct claim){regions[i], i};
	qsort(c, n, sizeof *c, by_claim_order);
	size_t depth = 0;
	t->nranges = 0;
	for (size_t i = 0; i < n; i++)
		take(t, &c[i].r, stack, &depth);
	free(c), free(stack);
	return 0;
}
