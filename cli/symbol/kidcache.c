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
 * image.c's dwarf_key()); later recordings read that, and a
 * recording that builds more of one CU's indexes writes the file again
 * with them added.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

struct kept_parent {
	uint64_t off, nkids;
	size_t n;
	struct sym_kept_span *spans;
};

struct sym_kept {
	char *path;                  /* where it is kept */
	struct kept_parent *parents; /* sorted by off */
	size_t nparents, cap;
	uint64_t *top;               /* sorted; valid when has_top */
	size_t ntop;
	int has_top, dirty;
};

/* The place of off in k->parents: where it is, or would go. */
static size_t parent_slot(const struct sym_kept *k, uint64_t off)
{
	size_t lo = 0, hi = k->nparents;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->parents[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int sym_kept_kids(const struct sym_kept *k, uint64_t parent, const struct sym_kept_span **spans,
                  size_t *n, uint64_t *nkids)
{
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
	if (i < k->nparents && k->parents[i].off == parent)
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
	free(k->top); /* a file without the set still had an empty one */
	k->top = prof_xcalloc(n ? n : 1, sizeof *offs);
	memcpy(k->top, offs, n * sizeof *offs);
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

/* Reads the file's parents, spans and top set into k; 0 if bad. */
static int read_body(struct sym_kept *k, const struct head *h, FILE *f)
{
	struct parent *ps = prof_xcalloc(h->nparents ? h->nparents : 1, sizeof *ps);
	struct sym_kept_span *spans = prof_xcalloc(h->nspans ? h->nspans : 1, sizeof *spans);
	k->top = prof_xcalloc(h->ntop ? h->ntop : 1, sizeof *k->top);
	int ok = fread(ps, sizeof *ps, h->nparents, f) == h->nparents &&
	         fread(spans, sizeof *spans, h->nspans, f) == h->nspans &&
	         fread(k->top, sizeof *k->top, h->ntop, f) == h->ntop && fgetc(f) == EOF;
	uint64_t next = 0;
	for (uint64_t i = 0; ok && i < h->nparents; i++) {
		ok = ps[i].first == next && ps[i].n <= h->nspans - next && ps[i].nkids < LIMIT &&
		     (!i || ps[i].off > ps[i - 1].off) && spans_sane(&spans[next], ps[i].n, ps[i].nkids);
		next += ok ? ps[i].n : 0;
	}
	ok = ok && next == h->nspans;
	for (uint64_t i = 1; ok && i < h->ntop; i++)
		ok = k->top[i] > k->top[i - 1];
	for (uint64_t i = 0; ok && i < h->nparents; i++)
		sym_kept_kids_put(k, ps[i].off, &spans[ps[i].first], ps[i].n, ps[i].nkids);
	k->ntop = h->ntop;
	k->has_top = h->has_top == 1;
	free(ps);
	free(spans);
	return ok && h->has_top <= 1 && (h->has_top || !h->ntop);
}

static int from_file(struct sym_kept *k)
{
	FILE *f = fopen(k->path, "rbe");
	if (!f)
		return 0;
	struct head h;
	struct stat st;
	char version[16];
	sym_libdw_version(version);
	int ok = fstat(fileno(f), &st) == 0 && fread(&h, sizeof h, 1, f) == 1 &&
	         memcmp(h.magic, MAGIC, 8) == 0 && memcmp(h.libdw, version, 16) == 0 &&
	         h.nparents < LIMIT && h.nspans < LIMIT && h.ntop < LIMIT;
	/* the counts must add up to the file's size before anything is
	 * allocated by them: a damaged file must not ask for gigabytes */
	ok = ok && (uint64_t)st.st_size == sizeof h + h.nparents * sizeof(struct parent) +
	                                   h.nspans * sizeof(struct sym_kept_span) +
	                                   h.ntop * sizeof(uint64_t);
	ok = ok && read_body(k, &h, f);
	fclose(f);
	return ok;
}

static void to_file(const struct sym_kept *k)
{
	char tmp[4200];
	FILE *f = sym_keep_open(k->path, tmp, sizeof tmp);
	if (!f)
		return;
	struct head h = {.magic = MAGIC, .nparents = k->nparents, .ntop = k->ntop,
	                 .has_top = (uint64_t)k->has_top};
	sym_libdw_version(h.libdw);
	for (size_t i = 0; i < k->nparents; i++)
		h.nspans += k->parents[i].n;
	int ok = fwrite(&h, sizeof h, 1, f) == 1;
	uint64_t first = 0;
	for (size_t i = 0; ok && i < k->nparents; i++) {
		const struct kept_parent *p = &k->parents[i];
		struct parent rec = {p->off, first, p->n, p->nkids};
		ok = fwrite(&rec, sizeof rec, 1, f) == 1;
		first += p->n;
	}
	for (size_t i = 0; ok && i < k->nparents; i++)
		ok = fwrite(k->parents[i].spans, sizeof *k->parents[i].spans, k->parents[i].n, f) ==
		     k->parents[i].n;
	ok = ok && fwrite(k->top, sizeof *k->top, k->ntop, f) == k->ntop;
	sym_keep_close(f, tmp, k->path, ok);
}

static void clear(struct sym_kept *k)
{
	for (size_t i = 0; i < k->nparents; i++)
		free(k->parents[i].spans);
	free(k->parents);
	free(k->top);
	k->parents = NULL;
	k->top = NULL;
	k->nparents = k->cap = k->ntop = 0;
	k->has_top = 0;
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
	if (!from_file(k))
		clear(k); /* none, or not to be trusted: built anew */
	k->dirty = 0;
	return k;
}

void sym_kept_free(void *p)
{
	struct sym_kept *k = p;
	if (!k)
		return;
	if (k->dirty && sym_zcache_make_dir() == 0) {
		char *slash = strrchr(k->path, '/');
		*slash = '\0';
		int dir = mkdir(k->path, 0700) == 0 || errno == EEXIST;
		*slash = '/';
		if (dir)
			to_file(k);
	}
	clear(k);
	free(k->path);
	free(k);
}
