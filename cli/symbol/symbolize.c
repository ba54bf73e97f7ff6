/*
 * symbolize.c - the symbolizer's driver: every location without lines
 * gets its inline chain from the image its mapping came from (image.c,
 * lookup.c), or a "module+0xoffset" name when nothing names it.
 * Results are memoized per (image, ELF address): one hot function in a
 * library that 100 processes mapped is looked up once.
 */
#include "symint.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cache a call with leave_to_exit did not free (one at most): held
 * here so that it stays reachable until the process exits. */
static struct sym_cache *left_to_exit;

struct map_state {
	int resolved;
	struct sym_image *im; /* NULL: no file, or no PT_LOAD at its offset */
	uint64_t bias;
	size_t locations;     /* to symbolize in the mapping (symtab.c's plan) */
};

/* (image, vaddr) -> lines[first .. first+n) of the pool */
struct memo_slot {
	struct sym_image *im;
	uint64_t vaddr;
	size_t first, n;
};

/* Open addressing over 4-byte indexes into dense slots: the table is
 * sized by the locations (one entry each at most) and its pages are
 * touched at random, so it is kept small; the slots grow with the
 * distinct addresses only (a build: 50,000 locations, 13,600 distinct;
 * 32-byte entries in the table itself were 4 MB of fresh pages). */
struct memo {
	uint32_t *index;   /* cap; slot number + 1, 0 when empty */
	size_t cap;
	struct memo_slot *slots;
	size_t used, capslots;
	struct prof_line *pool;
	size_t npool, cappool;
};

static size_t memo_hash(const struct sym_image *im, uint64_t vaddr, size_t cap)
{
	uint64_t h = (uint64_t)(uintptr_t)im * 0x9e3779b97f4a7c15ull ^ vaddr;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

/* The index position of (im, vaddr): its entry's, or the empty one
 * where it would go. */
static size_t memo_pos(const struct memo *m, const struct sym_image *im, uint64_t vaddr)
{
	size_t i = memo_hash(im, vaddr, m->cap);
	for (; m->index[i]; i = (i + 1) & (m->cap - 1)) {
		const struct memo_slot *s = &m->slots[m->index[i] - 1];
		if (s->im == im && s->vaddr == vaddr)
			break;
	}
	return i;
}

/* Room for `want` entries at half load; calloc'd, touched only where
 * entries land. */
static void memo_size(struct memo *m, size_t want)
{
	size_t cap = 1024;
	while (cap < 2 * want)
		cap *= 2;
	m->index = prof_xcalloc(cap, sizeof *m->index);
	m->cap = cap;
}

/* The entry of (im, vaddr): found, or added empty (*added says which). */
static struct memo_slot *memo_get(struct memo *m, struct sym_image *im, uint64_t vaddr,
                                  int *added)
{
	size_t i = memo_pos(m, im, vaddr);
	*added = !m->index[i];
	if (*added) {
		m->slots = prof_xgrow(m->slots, m->used, &m->capslots, 256, sizeof *m->slots);
		m->slots[m->used] = (struct memo_slot){im, vaddr, 0, 0};
		m->index[i] = (uint32_t)++m->used;
	}
	return &m->slots[m->index[i] - 1];
}

static size_t pool_add(struct memo *m, const struct prof_line *lines, size_t n)
{
	if (m->npool + n > m->cappool) {
		m->cappool = 2 * (m->npool + n);
		m->pool = prof_xrealloc(m->pool, m->cappool, sizeof *m->pool);
	}
	memcpy(m->pool + m->npool, lines, n * sizeof *lines);
	m->npool += n;
	return m->npool - n;
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* A function for an address nothing names: never dropped. */
/* "module+0xoffset" (module NULL: "0xaddress") into name[512]; by hand:
 * a build's recording names some 23,000 such addresses (cc1's static
 * functions), and snprintf() was a sixth of symbolizing them. */
static void offset_name(char name[512], const char *module, uint64_t v)
{
	char hex[17], *h = hex + sizeof hex;
	*--h = '\0';
	do
		*--h = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	size_t n = module ? strnlen(module, 512 - sizeof hex - 4) : 0;
	if (n)
		memcpy(name, module, n);
	memcpy(name + n, module ? "+0x" : "0x", module ? 3 : 2);
	n += module ? 3 : 2;
	memcpy(name + n, h, (size_t)(hex + sizeof hex - h));
}

static uint64_t unknown_function(struct profile *p, const struct prof_mapping *m,
                                 const struct map_state *st, uint64_t address)
{
	char name[512];
	if (!m)
		offset_name(name, NULL, address);
	else if (st->im) {
		/* Named after the start of its function when the CFI knows it */
		uint64_t vaddr = address - st->bias, start;
		if (sym_image_fde_start(st->im, vaddr, &start) == 0 && start <= vaddr)
			vaddr = start;
		offset_name(name, basename_of(m->path), vaddr);
	}
	else
		offset_name(name, m->path[0] ? basename_of(m->path) : "[unknown]",
		            address - m->start + m->file_offset);
	return prof_intern_function(p, name, name, "", 0);
}

/* The bias of m's file in its process.  A file found by build-id may be
 * a separate debuginfo file whose segments lost their file offsets: the
 * same file's mapping at offset 0 (the ELF header) still tells. */
static void resolve(struct sym_cache *c, const struct profile *p, const struct prof_mapping *m,
                    struct map_state *st)
{
	st->resolved = 1;
	st->im = sym_cache_get(c, m->path, m->build_id);
	if (!st->im || sym_image_bias(st->im, m->start, m->file_offset, &st->bias) == 0)
		return;
	for (size_t i = 0; i < p->nmappings; i++) {
		const struct prof_mapping *o = &p->mappings[i];
		if (o->pid == m->pid && o->file_offset == 0 && o->start <= m->start &&
		    strcmp(o->path, m->path) == 0 && strcmp(o->build_id, m->build_id) == 0 &&
		    sym_image_bias(st->im, o->start, 0, &st->bias) == 0)
			return;
	}
	st->im = NULL;
}

/* Inline chain at vaddr of im as interned lines, memoized; n == 0 when
 * the image has nothing for it. */
static const struct prof_line *chain(struct profile *p, struct memo *memo, struct sym_image *im,
                                     uint64_t vaddr, size_t *n)
{
	int added;
	struct memo_slot *s = memo_get(memo, im, vaddr, &added);
	if (added) {
		struct sym_frame frames[SYM_MAX_FRAMES];
		struct prof_line lines[SYM_MAX_FRAMES];
		size_t nf = sym_image_lookup(im, vaddr, frames, SYM_MAX_FRAMES);
		for (size_t i = 0; i < nf; i++) {
			lines[i].function_id = prof_intern_function(p, frames[i].name,
				frames[i].system_name, frames[i].file ? frames[i].file : "",
				frames[i].decl_line);
			lines[i].line = frames[i].line;
		}
		sym_frames_free(frames, nf);
		s->first = pool_add(memo, lines, nf);
		s->n = nf;
	}
	*n = s->n;
	return memo->pool + s->first;
}

static void symbolize_location(struct profile *p, struct sym_cache *c, struct memo *memo,
                               struct map_state *states, uint64_t id)
{
	uint64_t mid = p->locations[id - 1].mapping_id;
	uint64_t address = p->locations[id - 1].address;
	struct prof_mapping *m = mid && mid <= p->nmappings ? &p->mappings[mid - 1] : NULL;
	struct map_state none = {1, NULL, 0, 0}, *st = m ? &states[mid - 1] : &none;
	if (!st->resolved) {
		resolve(c, p, m, st);
		if (st->im)
			sym_symtab_expect(sym_image_symtab(st->im), st->locations);
	}
	size_t n = 0;
	const struct prof_line *lines = st->im ? chain(p, memo, st->im, address - st->bias, &n)
	                                       : NULL;
	if (n == 0) {
		struct prof_line unknown = {unknown_function(p, m, st, address), 0};
		prof_set_lines(p, id, &unknown, 1);
		return;
	}
	prof_set_lines(p, id, lines, n); /* copies them */
	m->has_functions = 1;
	for (size_t i = 0; i < n; i++)
		if (lines[i].line > 0)
			m->has_lines = 1;
}

int symbolize_profile(struct profile *p, const struct sym_options *opt, char *err,
                      size_t errlen)
{
	if (!p) {
		snprintf(err, errlen, "no profile to symbolize");
		return -1;
	}
	/* room for finishing the profile if libdw exhausts the address
	 * space (profile.h, dwoom.c) */
	prof_reserve_take(sym_oom_reserve());
	prof_reserve_take(sym_oom_reserve());
	struct sym_cache *c = sym_cache_new(opt);
	struct map_state *states = prof_xrealloc(NULL, p->nmappings + 1, sizeof *states);
	memset(states, 0, (p->nmappings + 1) * sizeof *states);
	struct memo memo = {0};
	/* At most one entry per location: sized once, never rehashed (a
	 * build's 23,000 were six doublings, each table written whole) */
	memo_size(&memo, p->nlocations);
	for (uint64_t id = 1; id <= p->nlocations; id++) {
		uint64_t mid = p->locations[id - 1].mapping_id;
		if (p->locations[id - 1].nlines == 0 && mid && mid <= p->nmappings)
			states[mid - 1].locations++;
	}
	for (uint64_t id = 1; id <= p->nlocations; id++)
		if (p->locations[id - 1].nlines == 0)
			symbolize_location(p, c, &memo, states, id);
	sym_oom_end();
	free(memo.index);
	free(memo.slots);
	free(memo.pool);
	free(states);
	if (opt && opt->leave_to_exit && !left_to_exit) {
		sym_cache_leave(c); /* sym_options.leave_to_exit says why */
		left_to_exit = c;
	} else {
		sym_cache_free(c);
	}
	return 0;
}
