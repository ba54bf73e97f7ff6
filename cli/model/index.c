/*
 * index.c - growing the open-addressing index of index.h.
 */
#include "index.h"

#include <stdlib.h>

#include "profile.h"

/* x emptied and made cap slots; elements 0..n-1 placed by their hash. */
static void place_all(struct prof_index *x, size_t cap, size_t n, prof_index_hash_fn *hash_of,
                      const void *ctx)
{
	free(x->slots);
	x->slots = prof_xcalloc(cap, sizeof *x->slots);
	x->cap = cap;
	for (size_t i = 0; i < n; i++) {
		size_t at = prof_index_first(x, hash_of(ctx, i));
		while (x->slots[at])
			at = prof_index_next(x, at);
		x->slots[at] = (uint32_t)(i + 1);
	}
}

void prof_index_reserve(struct prof_index *x, size_t n, size_t min_cap,
                        prof_index_hash_fn *hash_of, const void *ctx)
{
	if (2 * (n + 1) <= x->cap)
		return;
	if (n >= UINT32_MAX - 1)
		prof_oom(); /* position + 1 must fit a slot */
	size_t cap = x->cap ? 2 * x->cap : 16;
	while (cap < min_cap || 2 * (n + 1) > cap)
		cap *= 2;
	place_all(x, cap, n, hash_of, ctx);
}

void prof_index_rebuild(struct prof_index *x, size_t n, prof_index_hash_fn *hash_of,
                        const void *ctx)
{
	if (x->cap)
		place_all(x, x->cap, n, hash_of, ctx);
}

void prof_index_free(struct prof_index *x)
{
	free(x->slots);
	x->slots = NULL;
	x->cap = 0;
}

uint64_t prof_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ^ h >> 29;
}
