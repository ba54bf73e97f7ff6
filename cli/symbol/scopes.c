/*
 * scopes.c - the DIEs containing an address, as libdw's dwarf_getscopes()
 * finds them, without its walks of a whole CU per address.
 *
 * dwarf_getscopes(cu, pc) walks the CU's tree pruned to the DIEs whose
 * ranges hold pc.  When that chain holds an inlined instance it then
 * walks the CU again, unpruned, until it meets the instance's abstract
 * origin, and fails when it does not; and lookup.c then asked
 * dwarf_getscopes_die() for the innermost function's parents: one more
 * unpruned walk, up to it.  Per address, on CUs such as libpython's
 * ceval.c, that was most of `profil record`'s own CPU.
 *
 * Here the pruned walk goes down through each level's children indexed
 * by address (kids.c, built once per DIE, or read from what an earlier
 * recording kept: kidcache.c) and keeps its path: the parents
 * dwarf_getscopes_die() gave.  Whether the origin is met comes from one
 * set per CU, of the subprograms an unpruned walk visits, filled once.
 * Whatever this cannot answer as libdw would (libdw reported an error, an
 * origin that is not a subprogram or not met) returns -1, and lookup.c
 * asks libdw itself: the chains are the ones dwarf_getscopes gives.
 */
#include "symint.h"

#include <dwarf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 4096 /* more nested scopes than that: let libdw decide */

struct sym_scopes {
	struct sym_map kids;    /* parent DIE -> struct sym_kids */
	struct sym_map reach;   /* CU DIE -> struct reach */
	struct sym_map top;     /* CU DIE -> struct top */
};

/* The subprograms an unpruned walk of one CU visits. */
struct reach {
	struct sym_map seen;
	int error;
};

/* The offsets of the subprograms among a CU's own children, sorted. */
struct top {
	uint64_t *offs;
	size_t n, cap;
	int error;
};

struct path {
	Dwarf_Die *v;
	size_t n, cap;
};

static void push(struct path *p, const Dwarf_Die *die)
{
	p->v = prof_xgrow(p->v, p->n, &p->cap, 16, sizeof *p->v);
	p->v[p->n++] = *die;
}

static int visit_reach(Dwarf_Die *die, const struct sym_import *im, void *arg)
{
	struct reach *r = arg;
	if (dwarf_tag(die) == DW_TAG_subprogram)
		sym_map_put(&r->seen, die->addr, r);
	Dwarf_Die first;
	if (!sym_walks_into(die))
		return 0;
	int rc = dwarf_child(die, &first);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	return sym_walk_list(first, im, visit_reach, arg);
}

/* A new, empty struct reach for cu, kept in map. */
static struct reach *reach_new(struct sym_map *map, Dwarf_Die *cu)
{
	struct reach *r = prof_xrealloc(NULL, sizeof *r, 1);
	memset(r, 0, sizeof *r);
	sym_map_put(map, cu->addr, r);
	return r;
}

static struct reach *reach_of(struct sym_scopes *s, Dwarf_Die *cu)
{
	struct reach *r = sym_map_get(&s->reach, cu->addr);
	if (r)
		return r;
	r = reach_new(&s->reach, cu);
	Dwarf_Die first;
	int rc = dwarf_child(cu, &first);
	if (rc == 0)
		rc = sym_walk_list(first, NULL, visit_reach, r);
	r->error = rc < 0;
	return r;
}

static int cmp_off(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The subprograms among cu's own children: a sibling scan, no descent,
 * or the set kidcache.c kept.  An abstract origin is nearly always one of
 * them (a static inline function of the file or a header), and every
 * child of the CU is on the unpruned walk's way, so finding it here
 * answers without that walk, which on CUs such as libpython's ceval.c
 * visits every DIE and was most of the symbolizer's time.  (Only on
 * DWARF libdw cannot read does the answer differ: the unpruned walk
 * would fail on a broken subtree before the origin, this scan does not
 * descend into it.) */
static struct top *top_of(struct sym_scopes *s, struct sym_kept *kept, Dwarf_Die *cu)
{
	struct top *t = sym_map_get(&s->top, cu->addr);
	if (t)
		return t;
	t = prof_xcalloc(1, sizeof *t);
	sym_map_put(&s->top, cu->addr, t);
	const uint64_t *offs;
	if (kept && sym_kept_top(kept, &offs, &t->n)) {
		t->offs = prof_xcalloc(t->n ? t->n : 1, sizeof *t->offs);
		memcpy(t->offs, offs, t->n * sizeof *offs);
		return t;
	}
	Dwarf_Die die;
	int rc = dwarf_child(cu, &die);
	while (rc == 0) {
		if (dwarf_tag(&die) == DW_TAG_subprogram) {
			t->offs = prof_xgrow(t->offs, t->n, &t->cap, 64, sizeof *t->offs);
			t->offs[t->n++] = dwarf_dieoffset(&die);
		}
		rc = dwarf_siblingof(&die, &die);
	}
	t->error = rc < 0;
	qsort(t->offs, t->n, sizeof *t->offs, cmp_off);
	if (kept && !t->error)
		sym_kept_top_put(kept, t->offs, t->n);
	return t;
}

/* Whether origin is one of cu's own children that are subprograms. */
static int in_top(const struct top *t, Dwarf_Die *cu, Dwarf_Die *origin)
{
	if (t->error || origin->cu != cu->cu)
		return 0;
	uint64_t off = dwarf_dieoffset(origin);
	return t->n && bsearch(&off, t->offs, t->n, sizeof *t->offs, cmp_off) != NULL;
}

/* 1 when dwarf_getscopes succeeds on this chain: it has no inlined
 * instance, or its walk meets the innermost one's abstract origin. */
static int origin_met(struct sym_scopes *s, struct sym_kept *kept, Dwarf_Die *cu,
                      const struct path *p)
{
	size_t i = p->n;
	while (i > 0 && dwarf_tag(&p->v[i - 1]) != DW_TAG_inlined_subroutine)
		i--;
	if (i == 0)
		return 1;
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	if (!dwarf_formref_die(dwarf_attr(&p->v[i - 1], DW_AT_abstract_origin, &attr), &origin) ||
	    dwarf_tag(&origin) != DW_TAG_subprogram)
		return 0;
	if (in_top(top_of(s, kept, cu), cu, &origin))
		return 1;
	struct reach *r = reach_of(s, cu);
	return !r->error && sym_map_get(&r->seen, origin.addr) != NULL;
}

/* Down from cu through the first child holding pc at each level. */
static int descend(struct sym_scopes *s, struct sym_kept *kept, Dwarf_Die *cu, Dwarf_Addr pc,
                   struct path *p, uint64_t span[2])
{
	Dwarf_Die parent = *cu, kid;
	for (;;) {
		if ((p->n > 0 && !sym_walks_into(&parent)) || p->n >= MAX_DEPTH)
			return p->n < MAX_DEPTH ? 0 : -1;
		struct sym_kids *k = sym_kids_of(&s->kids, kept, &parent);
		if (!k)
			return -1;
		int found = sym_kids_find(k, pc, &kid, span);
		if (found <= 0)
			return found;
		push(p, &kid);
		parent = kid;
	}
}

static unsigned long libdw_asks;

unsigned long sym_scopes_libdw_asks(void)
{
	return libdw_asks;
}

int sym_scopes_at(struct sym_scopes **sp, struct sym_kept *kept, Dwarf_Die *cu, Dwarf_Addr pc,
                  Dwarf_Die **path, uint64_t span[2])
{
	if (!*sp) {
		*sp = prof_xrealloc(NULL, sizeof **sp, 1);
		memset(*sp, 0, sizeof **sp);
	}
	struct path p = {NULL, 0, 0};
	if (descend(*sp, kept, cu, pc, &p, span) < 0 || (p.n > 0 && !origin_met(*sp, kept, cu, &p))) {
		free(p.v);
		libdw_asks++;
		return -1;
	}
	*path = p.v;
	return (int)p.n;
}

static void free_reach(void *reach)
{
	struct reach *r = reach;
	sym_map_free(&r->seen, NULL);
	free(r);
}

static void free_top(void *top)
{
	struct top *t = top;
	free(t->offs);
	free(t);
}

void sym_scopes_free(struct sym_scopes *s)
{
	if (!s)
		return;
	sym_map_free(&s->kids, sym_kids_free);
	sym_map_free(&s->reach, free_reach);
	sym_map_free(&s->top, free_top);
	free(s);
}
