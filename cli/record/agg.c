/*
 * agg.c - the sample aggregation table (agg.h).
 */
#include "agg.h"
#include "../model/profile.h"

#include <stdlib.h>

#include <string.h>

static uint64_t hash_words(const uint64_t *w, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
	for (uint32_t i = 0; i < n; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h;
}

static struct agg_entry *entry_at(const struct agg *a, size_t slot)
{
	return (struct agg_entry *)(a->arena + a->slots[slot] - 1);
}

static size_t entry_size(uint32_t nwords)
{
	return sizeof(struct agg_entry) + (size_t)nwords * 8;
}

static void rehash(struct agg *a)
{
	/* Small at first: each process has its table, and most processes
	 * of a build or a shell loop read a few samples or none; 8 KiB of
	 * slots and a 64 KiB arena were fresh pages to fault in for each
	 * (a sixth of the recorder's CPU on a loop of /bin/true). */
	size_t n = a->nslots ? a->nslots * 2 : 64;
	size_t *slots = prof_xcalloc(n, sizeof *slots);
	for (size_t off = 0; off < a->used;) {
		struct agg_entry *e = (struct agg_entry *)(a->arena + off);
		size_t i = hash_words(e->words, e->nwords) & (n - 1);
		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = off + 1;
		off += entry_size(e->nwords);
	}
	free(a->slots);
	a->slots = slots;
	a->nslots = n;
}

size_t agg_add(struct agg *a, const uint64_t *words, uint32_t nwords, uint64_t count)
{
	if ((a->nentries + 1) * 2 > a->nslots)
		rehash(a);
	size_t i = hash_words(words, nwords) & (a->nslots - 1);
	for (; a->slots[i]; i = (i + 1) & (a->nslots - 1)) {
		struct agg_entry *e = entry_at(a, i);
		if (e->nwords == nwords && memcmp(e->words, words, (size_t)nwords * 8) == 0) {
			e->count += count;
			return a->slots[i];
		}
	}
	size_t need = entry_size(nwords);
	if (a->used + need > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 2048;
		while (cap < a->used + need)
			cap *= 2;
		a->arena = prof_xrealloc(a->arena, cap, 1);
		a->cap = cap;
	}
	struct agg_entry *e = (struct agg_entry *)(a->arena + a->used);
	e->count = count;
	e->nwords = nwords;
	memcpy(e->words, words, (size_t)nwords * 8);
	a->slots[i] = a->used + 1;
	a->used += need;
	a->nentries++;
	return a->slots[i];
}

void agg_bump(struct agg *a, size_t at, uint64_t count)
{
	((struct agg_entry *)(a->arena + at - 1))->count += count;
}

const struct agg_entry *agg_next(const struct agg *a, size_t *pos)
{
	if (*pos >= a->used)
		return NULL;
	const struct agg_entry *e = (const struct agg_entry *)(a->arena + *pos);
	*pos += entry_size(e->nwords);
	return e;
}

void agg_free(struct agg *a)
{
	free(a->arena);
	free(a->slots);
	memset(a, 0, sizeof *a);
}
