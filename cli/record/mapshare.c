/*
 * mapshare.c - one mapping for a file that several processes map at the
 * same place.
 *
 * Each process's module events become mappings (build.c), and a pc's
 * location is its (mapping, address): so the same instruction of the
 * same file was a location of its own in every process that ran it.  A
 * build runs cc1 a few hundred times, non-PIE, always at the same
 * address; a forked child has its parent's libraries where its parent
 * has them.  A recording of `make -j2` (265 processes) had 49,335
 * locations, 18,464 once identical mappings are one; every location is
 * symbolized, encoded and deflated, which was most of the record
 * process's work after the command.  So a load event whose file (path
 * and build-id), range and file offset are those of a mapping already in
 * the profile gets that mapping.
 *
 * The mapping keeps the pid of the process that added it first: a
 * mapping's pid says which process's mappings it was listed with, for the
 * symbolizer (a file's segments are found beside each other, and an
 * identical file mapped at the same place has all its segments shared
 * alike) and the pprof file's comments, not every process that mapped it.
 * JIT maps' mappings (build.c) are never shared: their path names a pid.
 */
#include "record_int.h"
#include "../model/index.h"
#include "../model/profile.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t hash_mapping(const struct prof_mapping *m)
{
	uint64_t h = prof_hash_str(m->path);
	h = mix(h, prof_hash_str(m->build_id));
	h = mix(h, m->start);
	h = mix(h, m->limit);
	h = mix(h, m->file_offset);
	return h ^ (h >> 29);
}

static uint64_t hash_at(const void *p, size_t i)
{
	return hash_mapping(&((const struct profile *)p)->mappings[i]);
}

static int same_mapping(const struct prof_mapping *a, const struct prof_mapping *b)
{
	return a->start == b->start && a->limit == b->limit && a->file_offset == b->file_offset &&
	       strcmp(a->path, b->path) == 0 && strcmp(a->build_id, b->build_id) == 0;
}

uint64_t record_share_mapping(struct profile *p, struct prof_index *x,
                              const struct prof_mapping *m)
{
	prof_index_reserve(x, p->nmappings, 64, hash_at, p);
	size_t at = prof_index_first(x, hash_mapping(m));
	for (; x->slots[at]; at = prof_index_next(x, at))
		if (same_mapping(&p->mappings[x->slots[at] - 1], m))
			return x->slots[at];
	uint64_t id = prof_add_mapping(p, m);
	x->slots[at] = (uint32_t)id;
	return id;
}
