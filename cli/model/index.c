/*
 * index.c - growing the open-addressing index of index.h.
 */
#include "index.h"

#include <stdlib.h>
#include <string.h>

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

/* Eight bytes a step (a multiply and a shift each), the length first:
 * the model hashes a million strings on a build's recording, C++ names
 * of a hundred bytes among them, and FNV-1a's multiply a byte was 9 M
 * of its instructions. */
uint64_t prof_hash_seeded(uint64_t h, const char *s)
{
	size_t n = strlen(s);
	h ^= (uint64_t)n * 0x9e3779b97f4a7c15ull;
	for (; n >= 8; n -= 8, s += 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	uint64_t w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ h >> 29;
}

uint64_t prof_hash_str(const char *s)
{
	return prof_hash_seeded(1469598103934665603ull, s);
}
