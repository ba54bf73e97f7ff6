/*
 * agg.h - counts keyed by short arrays of 64-bit words (a sample's thread,
 * module generation and stack): an open-addressing hash table over an
 * arena, so a million samples of a few thousand distinct stacks cost a
 * few thousand entries.
 */
#ifndef PROFIL_CLI_AGG_H
#define PROFIL_CLI_AGG_H

#include <stddef.h>
#include <stdint.h>

struct agg_entry {
	uint64_t count;
	uint32_t nwords;
	uint64_t words[];
};

struct agg {
	unsigned char *arena;   /* entries, 8-aligned, back to back */
	size_t used, cap;
	size_t *slots;          /* offset + 1 of an entry, 0 when empty */
	size_t nslots, nentries;
};

/* Adds count to the entry of words (made if new); returns where it is, for
 * agg_bump() (stable while a lives: an offset in the arena, plus one). */
size_t agg_add(struct agg *a, const uint64_t *words, uint32_t nwords, uint64_t count);
void agg_bump(struct agg *a, size_t at, uint64_t count);
/* Iteration: pass *pos = 0 first; NULL at the end. */
const struct agg_entry *agg_next(const struct agg *a, size_t *pos);
void agg_free(struct agg *a);

#endif
