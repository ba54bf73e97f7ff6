/*
 * kidcache.c - a compilation unit's DIE indexes kept across recordings
 * by build-id and CU.
 *
 * Why: scopes.c finds the DIEs holding an address by indexing each
 * parent's children by the ranges they cover (kids.c), and by the set of
 * subprograms among the CU's own children.  Building them means walking
 * every child with libdw, and the top of a CU such as libpython's ceval.c
 * has thousands (types and declarations from headers): 20-24 ms of
 * `profil record`'s own CPU for the CU-level lists of a pyenv-python
 * recording, 10 ms for functions' lists, in every recording.  They never
 * change for one build, so the first recording that builds one keeps it
 * beside the CU's line answers (linecache.c), as
 * "<key>.kids/<CU offset in hex>" (key: build-id and .debug_info size,
 * image.c's dwarf_key()); later recordings map that and use it in place
 * (checked whole first), and a recording that builds more of one CU's
 * indexes writes the file again with them added.
 *
 * What is kept is what the walk gave: per parent DIE (by offset), its
 * children's ranges [lo, hi) in the walk's order (kid: the child's place
 * in the list) with each child's DIE offset; and the offsets of the
 * subprograms among the CU's children.  A parent whose list takes in an
 * imported unit is never kept (its DIEs may be in another file), nor one
 * libdw failed to list.  The file records libdw's version: another
 * version's file is ignored and rebuilt.  So is one that does not check
 * out (sizes, order, counts).
 *
 * File (host order): "PRFKID01", libdw's version (16 bytes, NUL padded),
 * 8-byte counts: parents, spans, top offsets, and 1 when the top set is
 * there; per parent {offset, its first span, its spans, its children};
 * spans {lo, hi, child's offset, child's place}; the top offsets, sorted.
 */
#include "symint.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define MAGIC "PRFKID01"
#define LIMIT (1ull << 26) /* of any count: a file claiming more is bad */

struct head {
	char magic[8];
	char libdw[16];
	uint64_t nparents, nspans, ntop, has_top;
};

struct parent {
	uint64_t off, first, n, nkids;
};

/* A parent put in this recording, not in the file. */
struct kept_parent {
	uint64_t off, nkids;
	size_t n;
	struct sym_kept_span *spans;
};

/* What the file had is used where it is mapped (sym_keep_map): parents
 * and spans as they lie there.  What this recording adds is beside it,
 * and both are written together at the end. */
struct sym_kept {
	char *path;                     /* where it is kept */
	void *map;                      /* the file, or NULL */
	size_t maplen;
	const struct parent *fparents;  /* the file's, sorted by off */
	size_t nfparents;
	const struct sym_kept_span *fspans;
	struct kept_parent *parents;    /* added, sorted by off */
	size_t nparents, cap;
	const uint64_t *top;            /* sorted; valid when has_top */
	uint64_t *own_top;              /* top when put here, else NULL */
	size_t ntop;
	int has_top, dirty;
};

/* The place of off in an array of n records of stride bytes, each
 * starting with its offset, sorted by it: where it is, or would go. */
static size_t off_slot(const void *v, size_t n, size_t stride, uint64_t off)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t at;
		memcpy(&at, (const char *)v + mid * stride, sizeof at);
		if (at < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

_Static_assert(offsetof(struct parent, off) == 0 && offsetof(struct kept_parent, off) == 0,
               "off_slot() reads a record's offset at its start");

/* The place of off among the added parents. */
static size_t parent_slot(const struct sym_kept *k, uint64_t off)
{
	return off_slot(k->parents, k->nparents, sizeof *k->parents, off);
}

/* The file's record of off, or NULL. */
static const struct parent *file_parent(const struct sym_kept *k, uint64_t off)
{
	size_t i = off_slot(k->fparents, k->nfparents, sizeof *k->fparents, off);
	return i < k->nfparents && k->fparents[i].off == off ? &k->fparents[i] : NULL;
}

int sym_kept_kids(const struct sym_kept *k, uint64_t parent, const struct sym_kept_span **spans,
                  size_t *n, uint64_t *nkids)
{
	const struct parent *f = file_parent(k, parent);
	if (f) {
		*spans = k->fspans + f->first;
		*n = f->n;
		*nkids = f->nkids;
		return 1;
	}
	size_t i = parent_slot(k, parent);
	if (i == k->nparents || k->parents[i].off != parent)
		return 0;
	*spans = k->parents[i].spans;
	*n = k->parents[i].n;
	*nkids = k->parents[i].nkids;
	return 1;
}

void sym_kept_kids_put(struct sym_kept *k, uint64_t parent, const struct sym_kept_span *spans,
                       size_t n, uint64_t nkids)
{
	size_t i = parent_slot(k, parent);
	if (file_parent(k, parent) || (i < k->nparents && k->parents[i].off == parent))
		return;
	k->parents = prof_xgrow(k->parents, k->nparents, &k->cap, 16, sizeof *k->parents);
	memmove(&k->parents[i + 1], &k->parents[i], (k->nparents - i) * sizeof *k->parents);
	struct kept_parent *p = &k->parents[i];
	*p = (struct kept_parent){parent, nkids, n, prof_xcalloc(n ? n : 1, sizeof *spans)};
	memcpy(p->spans, spans, n * sizeof *spans);
	k->nparents++;
	k->dirty = 1;
}

int sym_kept_top(const struct sym_kept *k, const uint64_t **offs, size_t *n)
{
	*offs = k->top;
	*n = k->ntop;
	return k->has_top;
}

void sym_kept_top_put(struct sym_kept *k, const uint64_t *offs, size_t n)
{
	if (k->has_top)
		return;
	k->own_top = prof_xcalloc(n ? n : 1, sizeof *offs);
	memcpy(k->own_top, offs, n * sizeof *offs);
	k->top = k->own_top;
	k->ntop = n;
	k->has_top = 1;
	k->dirty = 1;
}

/* Whether a parent's spans are as the walk leaves them: each a range,
 * of a child in the list, sorted by lo then place. */
static int spans_sane(const struct sym_kept_span *s, size_t n, uint64_t nkids)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].lo >= s[i].hi || s[i].kid >= nkids ||
		    (i && (s[i].lo < s[i - 1].lo ||
		           (s[i].lo == s[i - 1].lo && s[i].kid < s[i - 1].kid))))
			return 0;
	return 1;
}

/* Whether the mapped file's parents, spans and top set hold together:
 * each parent's spans follow the last's, parents and the top set in
 * order.  One pass over the mapping, whose pages come from the page
 * cache several at a fault. */
static int body_sane(const struct head *h, const struct parent *ps,
                     const struct sym_kept_span *spans, const uint64_t *top)
{
	uint64_t next = 0;
	for (uint64_t i = 0; i < h->nparents; i++) {
		if (ps[i].first != next || ps[i].n > h->nspans - next || ps[i].nkids >= LIMIT ||
		    (i && ps[i].off <= ps[i - 1].off) || !spans_sane(&spans[next], ps[i].n, ps[i].nkids))
			return 0;
		next += ps[i].n;
	}
	for (uint64_t i = 1; i < h->ntop; i++)
		if (top[i] <= top[i - 1])
			return 0;
	return next == h->nspans && h->has_top <= 1 && (h->has_top || !h->ntop);
}

static int from_file(struct sym_kept *k)
{
	size_t len;
	char *m = sym_keep_map(k->path, sizeof(struct head), &len, 1);
	if (!m)
		return 0;
	struct head h;
	char version[16];
	sym_libdw_version(version);
	memcpy(&h, m, sizeof h);
	int ok = memcmp(h.magic, MAGIC, 8) == 0 && memcmp(h.libdw, version, 16) == 0 &&
	         h.nparents < LIMIT && h.nspans < LIMIT && h.ntop < LIMIT;
	/* the counts must add up to the file's size before any is used */
	ok = ok && (uint64_t)len == sizeof h + h.nparents * sizeof(struct parent) +
	                            h.nspans * sizeof(struct sym_kept_span) +
	                            h.ntop * sizeof(uint64_t);
	const struct parent *ps = (const struct parent *)(m + sizeof h);
	const struct sym_kept_span *spans = (const struct sym_kept_span *)(ps + (ok ? h.nparents : 0));
	const uint64_t *top = (const uint64_t *)(spans + (ok ? h.nspans : 0));
	if (!ok || !body_sane(&h, ps, spans, top)) {
		munmap(m, len);
		return 0;
	}
	k->map = m;
	k->maplen = len;
	k->fparents = ps;
	k->nfparents = h.nparents;
	k->fspans = spans;
	k->top = top;
	k->ntop = h.ntop;
	k->has_top = h.has_top == 1;
	return 1;
}

/* The parents of the file and those added, merged by offset: each call
 * gives the next one's spans and its record (first left to the caller). */
struct merged {
	const struct sym_kept *k;
	size_t fi, ai; /* next of the file's, next of the added */
};

static const struct sym_kept_span *next_parent(struct merged *m, struct parent *rec)
{
	const struct sym_kept *k = m->k;
	int file = m->fi < k->nfparents &&
	           (m->ai == k->nparents || k->fparents[m->fi].off < k->parents[m->ai].off);
	if (file) {
		const struct parent *f = &k->fparents[m->fi++];
		*rec = (struct parent){f->off, 0, f->n, f->nkids};
		return k->fspans + f->first;
	}
	const struct kept_parent *a = &k->parents[m->ai++];
	*rec = (struct parent){a->off, 0, a->n, a->nkids};
	return a->spans;
}

static void to_file(const struct sym_kept *k)
{
	char tmp[4200];
	FILE *f = sym_keep_open(k->path, tmp, sizeof tmp);
	if (!f)
		return;
	size_t total = k->nfparents + k->nparents;
	struct head h = {.magic = MAGIC, .nparents = total, .ntop = k->ntop,
	                 .has_top = (uint64_t)k->has_top};
	sym_libdw_version(h.libdw);
	struct merged m = {k, 0, 0};
	struct parent rec;
	for (size_t i = 0; i < total; i++) {
		next_parent(&m, &rec);
		h.nspans += rec.n;
	}
	int ok = fwrite(&h, sizeof h, 1, f) == 1;
	uint64_t first = 0;
	m = (struct merged){k, 0, 0};
	for (size_t i = 0; ok && i < total; i++) {
		next_parent(&m, &rec);
		rec.first = first;
		ok = fwrite(&rec, sizeof rec, 1, f) == 1;
		first += rec.n;
	}
	m = (struct merged){k, 0, 0};
	for (size_t i = 0; ok && i < total; i++) {
		const struct sym_kept_span *spans = next_parent(&m, &rec);
		ok = fwrite(spans, sizeof *spans, rec.n, f) == rec.n;
	}
	ok = ok && fwrite(k->top, sizeof *k->top, k->ntop, f) == k->ntop;
	sym_keep_close(f, tmp, k->path, ok);
}

struct sym_kept *sym_kept_load(Dwarf_Die *cu, const char *build_id)
{
	const char *root = sym_zcache_dir();
	char path[4200];
	if (!root || !build_id || !*build_id ||
	    snprintf(path, sizeof path, "%s/%s.kids/%llx", root, build_id,
	             (unsigned long long)dwarf_dieoffset(cu)) >= (int)sizeof path)
		return NULL; /* nowhere to keep them: built in each recording */
	struct sym_kept *k = prof_xcalloc(1, sizeof *k);
	k->path = sym_strdup(path);
	from_file(k); /* none, or not to be trusted: built anew */
	return k;
}

void sym_kept_save(void *p)
{
	struct sym_kept *k = p;
	if (!k || !k->dirty)
		return;
	k->dirty = 0;
	if (sym_zcache_make_dir() == 0) {
		char *slash = strrchr(k->path, '/');
		*slash = '\0';
		int dir = mkdir(k->path, 0700) == 0 || errno == EEXIST;
		*slash = '/';
		if (dir)
			to_file(k);
	}
}

void sym_kept_free(void *p)
{
	struct sym_kept *k = p;
	if (!k)
		return;
	sym_kept_save(k);
	for (size_t i = 0; i < k->nparents; i++)
		free(k->parents[i].spans);
	free(k->parents);
	free(k->own_top);
	if (k->map)
		munmap(k->map, k->maplen);
	free(k->path);
	free(k);
}
