/*
 * kids.c - DIE lists walked the way libdw's dwarf_getscopes() walks them
 * (elfutils' __libdw_visit_scopes, 0.188), and a DIE's children indexed
 * by the addresses they cover, so that finding the one holding an
 * address is a binary search rather than a pass over the list (the top
 * of a CU such as libpython's ceval.c has thousands of DIEs: types and
 * declarations from headers).  An index built is put into the CU's kept
 * indexes, and one kept by an earlier recording is read from them
 * (kidcache.c) instead of walking the list.  Also the address-keyed map
 * they are cached in.  Any error libdw reports is passed on: the caller then asks libdw
 * itself (scopes.c).
 */
#include "symint.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One range of a child: s.lo .. s.hi, the child the s.kid'th of the
 * list, at offset s.off; die is the child once have_die (an index read
 * from kidcache.c has offsets only: each DIE is made when first found). */
struct kid_span {
	struct sym_kept_span s;
	Dwarf_Die die;
	int have_die;
};

struct sym_kids {
	struct kid_span *spans;  /* sorted by lo, then kid */
	Dwarf_Addr *maxhi;       /* largest hi of spans[0 .. i] */
	size_t n, cap, nkids;
	Dwarf *dbg;              /* the children's */
	int error;               /* libdw failed while listing them */
	int foreign;             /* the list took in an imported unit */
};

static size_t map_slot(const struct sym_map *m, const void *key)
{
	uint64_t h = (uint64_t)(uintptr_t)key * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h ^ (h >> 29)) & (m->cap - 1);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

void *sym_map_get(const struct sym_map *m, const void *key)
{
	return m->cap ? m->vals[map_slot(m, key)] : NULL;
}

void sym_map_put(struct sym_map *m, const void *key, void *val)
{
	if (2 * (m->n + 1) > m->cap) {
		struct sym_map old = *m;
		m->cap = old.cap ? 2 * old.cap : 256;
		m->keys = prof_xrealloc(NULL, m->cap * sizeof *m->keys, 1);
		m->vals = prof_xrealloc(NULL, m->cap * sizeof *m->vals, 1);
		memset(m->keys, 0, m->cap * sizeof *m->keys);
		memset(m->vals, 0, m->cap * sizeof *m->vals);
		m->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.keys[i])
				sym_map_put(m, old.keys[i], old.vals[i]);
		free(old.keys);
		free(old.vals);
	}
	size_t i = map_slot(m, key);
	m->n += !m->keys[i];
	m->keys[i] = key;
	m->vals[i] = val;
}

void sym_map_each(const struct sym_map *m, void (*fn)(void *))
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			fn(m->vals[i]);
}

void sym_map_free(struct sym_map *m, void (*free_val)(void *))
{
	if (free_val)
		sym_map_each(m, free_val);
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof *m);
}

int sym_walks_into(Dwarf_Die *die)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_compile_unit: case DW_TAG_module: case DW_TAG_lexical_block:
	case DW_TAG_with_stmt: case DW_TAG_catch_block: case DW_TAG_try_block:
	case DW_TAG_entry_point: case DW_TAG_inlined_subroutine: case DW_TAG_subprogram:
	case DW_TAG_namespace: case DW_TAG_class_type: case DW_TAG_structure_type:
		return dwarf_haschildren(die) != 0;
	default:
		return 0;
	}
}

/* The unit an imported_unit DIE brings in, walked in place: its
 * children (none for a compile unit), once per chain of imports. */
static int walk_import(Dwarf_Die *die, const struct sym_import *im, sym_visit_fn *visit,
                       void *arg)
{
	Dwarf_Attribute attr;
	Dwarf_Die unit, first;
	if (!dwarf_formref_die(dwarf_attr(die, DW_AT_import, &attr), &unit) ||
	    dwarf_tag(&unit) == DW_TAG_compile_unit || dwarf_child(&unit, &first) != 0)
		return 0;
	for (const struct sym_import *i = im; i; i = i->up)
		if (i->unit == die->addr)
			return -1; /* a cycle: libdw's DWARF_E_INVALID_DWARF */
	struct sym_import here = {die->addr, im};
	return sym_walk_list(first, &here, visit, arg);
}

int sym_walk_list(Dwarf_Die child, const struct sym_import *im, sym_visit_fn *visit,
                  void *arg)
{
	int r;
	do {
		while (dwarf_tag(&child) == DW_TAG_imported_unit) {
			Dwarf_Die unit = child;
			if ((r = walk_import(&unit, im, visit, arg)) != 0)
				return r;
			if ((r = dwarf_siblingof(&unit, &child)) != 0)
				return r < 0 ? -1 : 0;
		}
		if ((r = visit(&child, im, arg)) != 0)
			return r;
	} while ((r = dwarf_siblingof(&child, &child)) == 0);
	return r < 0 ? -1 : 0;
}

/* One child into the index: its ranges, as dwarf_haspc reads them. */
static int add_kid(Dwarf_Die *die, const struct sym_import *im, void *arg)
{
	struct sym_kids *k = arg;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	k->foreign |= im != NULL;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		k->spans = prof_xgrow(k->spans, k->n, &k->cap, 16, sizeof *k->spans);
		struct sym_kept_span s = {lo, hi, dwarf_dieoffset(die), k->nkids};
		k->spans[k->n++] = (struct kid_span){s, *die, 1};
	}
	k->nkids++;
	return off < 0 ? -1 : 0;
}

static int cmp_span(const void *a, const void *b)
{
	const struct sym_kept_span *x = &((const struct kid_span *)a)->s;
	const struct sym_kept_span *y = &((const struct kid_span *)b)->s;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->kid < y->kid ? -1 : x->kid > y->kid;
}

static struct sym_kids *kids_new(Dwarf_Die *parent)
{
	struct sym_kids *k = prof_xcalloc(1, sizeof *k);
	k->dbg = dwarf_cu_getdwarf(parent->cu);
	return k;
}

/* Each prefix's largest hi, once the spans are sorted. */
static void finish(struct sym_kids *k)
{
	k->maxhi = prof_xrealloc(NULL, k->n ? k->n : 1, sizeof *k->maxhi);
	for (size_t i = 0; i < k->n; i++) {
		Dwarf_Addr hi = k->spans[i].s.hi;
		k->maxhi[i] = i && k->maxhi[i - 1] > hi ? k->maxhi[i - 1] : hi;
	}
}

static struct sym_kids *build(Dwarf_Die *parent)
{
	struct sym_kids *k = kids_new(parent);
	Dwarf_Die first;
	int r = dwarf_child(parent, &first);
	if (r == 0)
		r = sym_walk_list(first, NULL, add_kid, k);
	k->error = r < 0;
	qsort(k->spans, k->n, sizeof *k->spans, cmp_span);
	finish(k);
	return k;
}

/* The index kept for parent (kidcache.c), or NULL. */
static struct sym_kids *from_kept(struct sym_kept *kept, uint64_t off, Dwarf_Die *parent)
{
	const struct sym_kept_span *spans;
	size_t n;
	uint64_t nkids;
	if (!kept || !sym_kept_kids(kept, off, &spans, &n, &nkids))
		return NULL;
	struct sym_kids *k = kids_new(parent);
	k->spans = prof_xcalloc(n ? n : 1, sizeof *k->spans);
	for (size_t i = 0; i < n; i++)
		k->spans[i].s = spans[i];
	k->n = k->cap = n;
	k->nkids = nkids;
	finish(k);
	return k;
}

/* A built index into kept, when it can be read back by offsets. */
static void keep(struct sym_kept *kept, uint64_t off, const struct sym_kids *k)
{
	if (!kept || k->error || k->foreign)
		return;
	struct sym_kept_span *v = prof_xcalloc(k->n ? k->n : 1, sizeof *v);
	for (size_t i = 0; i < k->n; i++)
		v[i] = k->spans[i].s;
	sym_kept_kids_put(kept, off, v, k->n, k->nkids);
	free(v);
}

struct sym_kids *sym_kids_of(struct sym_map *cache, struct sym_kept *kept, Dwarf_Die *parent)
{
	struct sym_kids *k = sym_map_get(cache, parent->addr);
	if (!k) {
		uint64_t off = dwarf_dieoffset(parent);
		k = from_kept(kept, off, parent);
		if (!k) {
			k = build(parent);
			keep(kept, off, k);
		}
		sym_map_put(cache, parent->addr, k);
	}
	return k->error ? NULL : k;
}

/* span cut to where the same children's ranges hold pc: by the ends of
 * those starting at or below it (spans[0 .. below)), their last start,
 * and the next start.  A scan of the level, at a fresh address only. */
static void kids_span(const struct sym_kids *k, size_t below, Dwarf_Addr pc, uint64_t span[2])
{
	if (!span)
		return;
	if (below < k->n)
		sym_span_cut(span, pc, k->spans[below].s.lo);
	if (below > 0)
		sym_span_cut(span, pc, k->spans[below - 1].s.lo);
	for (size_t i = 0; i < below; i++)
		sym_span_cut(span, pc, k->spans[i].s.hi);
}

/* The first child (in walk order) with a range holding pc: the one
 * dwarf_getscopes' walk enters.  1 with *kid, 0 for none, -1 when a kept
 * offset names no DIE; span cut (kids_span()). */
int sym_kids_find(struct sym_kids *k, Dwarf_Addr pc, Dwarf_Die *kid, uint64_t span[2])
{
	size_t lo = 0, hi = k->n; /* spans[0 .. lo) start at or below pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->spans[mid].s.lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	kids_span(k, lo, pc, span);
	struct kid_span *best = NULL;
	for (size_t i = lo; i > 0 && k->maxhi[i - 1] > pc; i--) {
		struct kid_span *s = &k->spans[i - 1];
		if (pc < s->s.hi && (!best || s->s.kid < best->s.kid))
			best = s;
	}
	if (!best)
		return 0;
	if (!best->have_die) {
		if (!dwarf_offdie(k->dbg, best->s.off, &best->die))
			return -1;
		best->have_die = 1;
	}
	*kid = best->die;
	return 1;
}

void sym_kids_free(void *kids)
{
	struct sym_kids *k = kids;
	free(k->spans);
	free(k->maxhi);
	free(k);
}
