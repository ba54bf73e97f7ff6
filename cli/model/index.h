/*
 * index.h - an open-addressing index over an array its owner keeps.
 *
 * The command finds things by key in many arrays that only grow while
 * they are built (a profile's functions, locations and samples, a
 * report's rows, the HTML tree's strings, frames and nodes, a recording's
 * threads by tid and its kept files by build-id).  Each array keeps its
 * elements in order, as they were added (the order the writers use); the
 * index beside it answers "where is the element with this key":
 *
 *   - slots hold an element's position + 1, 0 for an empty slot;
 *   - linear probing from hash & (cap - 1), cap a power of two;
 *   - at most half full: prof_index_reserve() before each addition grows
 *     it by doubling and places every element again by its hash.
 *
 * Probing is written out where the key is compared (prof_index_first()
 * and prof_index_next()), so the hot loops call no function:
 *
 *	prof_index_reserve(&x, n, hash_of, arr);
 *	size_t at = prof_index_first(&x, h);
 *	for (; x.slots[at]; at = prof_index_next(&x, at))
 *		if (equal(&arr[x.slots[at] - 1], key))
 *			return x.slots[at] - 1;
 *	arr[n] = ...;  x.slots[at] = ++n;
 */
#ifndef PROFIL_CLI_MODEL_INDEX_H
#define PROFIL_CLI_MODEL_INDEX_H

#include <stddef.h>
#include <stdint.h>

/* Slots of 32 bits: the location index of a build's recording (48,000
 * locations), as size_t, was some 1,000 page faults of the record
 * process (fresh pages at each doubling); 32 bits halve it, and
 * no array of the command holds 4 billion elements
 * (prof_index_reserve() refuses as out of memory). */
struct prof_index {
	uint32_t *slots; /* position + 1; 0: empty */
	size_t cap;      /* a power of two, or 0 (nothing allocated) */
};

/* The hash of the element at position i of ctx's array. */
typedef uint64_t prof_index_hash_fn(const void *ctx, size_t i);

/* Room for one more element beside the n the array holds: when that
 * would make x more than half full, x is rebuilt twice as large (at
 * least min_cap) from elements 0..n-1, whose hashes hash_of gives.  A
 * slot found before a reserve is stale after it. */
void prof_index_reserve(struct prof_index *x, size_t n, size_t min_cap,
                        prof_index_hash_fn *hash_of, const void *ctx);
/* The elements moved (sorted): every one placed again, at the same size. */
void prof_index_rebuild(struct prof_index *x, size_t n, prof_index_hash_fn *hash_of,
                        const void *ctx);
void prof_index_free(struct prof_index *x);

/* A hash of s, its high bits folded into the low ones (which pick the
 * slot); _seeded() goes on from h, to hash several strings as one. */
uint64_t prof_hash_str(const char *s);
uint64_t prof_hash_seeded(uint64_t h, const char *s);

/* Where probing for hash h starts; x must have been reserved. */
static inline size_t prof_index_first(const struct prof_index *x, uint64_t h)
{
	return (size_t)h & (x->cap - 1);
}

static inline size_t prof_index_next(const struct prof_index *x, size_t at)
{
	return (at + 1) & (x->cap - 1);
}

#endif
