/*
 * callgraph.c - `--callers FUNC`, `--callees FUNC` and `--tree`.
 *
 * A sample's frames, leaf first, are its locations' inline chains laid
 * end to end (innermost first), so an inlined function is a frame like
 * any other.  Callers and callees are counted once per sample; the tree
 * is top-down from the roots, pruned below --threshold percent.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../model/rows.h"
#include "report.h"

/* Frames of s, leaf first, as strings the caller frees with free_frames. */
static char **frames(const struct profile *p, const struct prof_sample *s, size_t *n)
{
	char **v = NULL, buf[PROF_NAME_BUF];
	size_t cap = 0;
	*n = 0;
	for (size_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i] - 1];
		for (size_t k = 0; k < (l->nlines ? l->nlines : 1); k++) {
			if (*n == cap)
				v = prof_xrealloc(v, cap = cap ? 2 * cap : 16, sizeof *v);
			v[(*n)++] = prof_xstrdup(prof_frame_name(p, l, k, buf));
		}
	}
	return v;
}

static void free_frames(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static double pct(int64_t part, int64_t total)
{
	return total > 0 ? 100.0 * (double)part / (double)total : 0.0;
}

/* Rows of FUNC's callers (dir +1: toward the root) or callees (-1). */
static int neighbours(const struct profile *p, const char *func, int dir, FILE *f)
{
	struct rows a = {0};
	int64_t in_func = 0;
	for (size_t si = 0; si < p->nsamples; si++) {
		size_t n;
		char **v = frames(p, &p->samples[si], &n);
		int seen = 0;
		for (size_t i = 0; i < n; i++) {
			if (strcmp(v[i], func) != 0)
				continue;
			seen = 1;
			const char *other = dir > 0 ? (i + 1 < n ? v[i + 1] : "[root]")
			                            : (i > 0 ? v[i - 1] : "[self]");
			rows_add(rows_row(&a, other, other, ""), si, 0, p->samples[si].count, 0);
		}
		in_func += seen ? p->samples[si].count : 0;
		free_frames(v, n);
	}
	if (in_func == 0) {
		fprintf(stderr, "profil report: no function '%s' in the profile's samples\n", func);
		rows_free(&a);
		return -1;
	}
	for (size_t i = 0; i < a.n; i++) /* sort by samples: self holds cum here */
		a.rows[i].self = a.rows[i].cum;
	rows_sort(&a);
	int64_t total = prof_total(p);
	fprintf(f, "# %s of %s: %" PRId64 " samples (%.2f%%)\n", dir > 0 ? "callers" : "callees",
	        func, in_func, pct(in_func, total));
	fprintf(f, "%8s %7s  %s\n", "samples", "%", dir > 0 ? "caller" : "callee");
	for (size_t i = 0; i < a.n; i++)
		fprintf(f, "%8" PRId64 " %6.2f%%  %s\n", a.rows[i].cum, pct(a.rows[i].cum, total),
		        a.rows[i].name);
	rows_free(&a);
	return 0;
}

/* The call tree: a node per distinct path from a root, found by (parent,
 * name) in a hash table; printed depth first without recursion, since a
 * hostile file's stacks may be as deep as it likes. */
struct node {
	size_t parent, name; /* node 0 is the (unprinted) root of all roots */
	int64_t cum;
	size_t child, sibling; /* first child, next sibling; 0: none */
};

struct tree {
	struct node *v;
	size_t n, cap;
	size_t *slots, nslots; /* node index; 0 empty */
	struct rows names;
};

static size_t slot_of(const struct tree *t, size_t parent, size_t name)
{
	uint64_t h = (parent * 0x9e3779b97f4a7c15ull) ^ (name * 0xff51afd7ed558ccdull);
	size_t k = (size_t)(h ^ h >> 31) & (t->nslots - 1);
	while (t->slots[k] && (t->v[t->slots[k]].parent != parent || t->v[t->slots[k]].name != name))
		k = (k + 1) & (t->nslots - 1);
	return k;
}

static size_t child_of(struct tree *t, size_t parent, size_t name)
{
	if (2 * (t->n + 1) > t->nslots) {
		free(t->slots);
		t->nslots = t->nslots ? 2 * t->nslots : 1024;
		t->slots = prof_xcalloc(t->nslots, sizeof *t->slots);
		for (size_t i = 1; i < t->n; i++)
			t->slots[slot_of(t, t->v[i].parent, t->v[i].name)] = i;
	}
	size_t k = slot_of(t, parent, name);
	if (t->slots[k])
		return t->slots[k];
	if (t->n == t->cap)
		t->v = prof_xrealloc(t->v, t->cap = 2 * t->cap, sizeof *t->v);
	t->v[t->n] = (struct node){parent, name, 0, 0, 0};
	return t->slots[k] = t->n++;
}

/* Links children, hottest first (insertion sort per parent would be
 * quadratic: sort all nodes by cum, then prepend in reverse order). */
static const struct tree *sort_tree;
static int by_cum(const void *x, const void *y)
{
	const struct node *a = &sort_tree->v[*(const size_t *)x], *b = &sort_tree->v[*(const size_t *)y];
	return a->cum != b->cum ? (a->cum > b->cum ? -1 : 1) : (*(const size_t *)x < *(const size_t *)y ? -1 : 1);
}

static void link_children(struct tree *t)
{
	size_t *order = prof_xrealloc(NULL, t->n, sizeof *order);
	for (size_t i = 0; i < t->n; i++)
		order[i] = i;
	sort_tree = t;
	if (t->n > 1)
		qsort(order + 1, t->n - 1, sizeof *order, by_cum);
	for (size_t i = t->n; i-- > 1;) {
		struct node *c = &t->v[order[i]], *par = &t->v[c->parent];
		c->sibling = par->child;
		par->child = order[i];
	}
	free(order);
}

static void tree_print(const struct tree *t, int64_t total, double thr, FILE *f)
{
	size_t *stack = prof_xrealloc(NULL, t->n + 1, sizeof *stack), *depth = NULL, top = 0;
	depth = prof_xcalloc(t->n, sizeof *depth);
	for (size_t c = t->v[0].child; c; c = t->v[c].sibling) /* roots, hottest on top */
		stack[top++] = c;
	for (size_t i = 0; i < top / 2; i++) {
		size_t x = stack[i];
		stack[i] = stack[top - 1 - i], stack[top - 1 - i] = x;
	}
	while (top) {
		size_t i = stack[--top];
		const struct node *nd = &t->v[i];
		if (pct(nd->cum, total) < thr)
			continue;
		fprintf(f, "%8" PRId64 " %6.2f%%  %*s%s\n", nd->cum, pct(nd->cum, total),
		        (int)(2 * (depth[i] < 200 ? depth[i] : 200)), "", t->names.rows[nd->name].name);
		size_t first = top;
		for (size_t c = nd->child; c; c = t->v[c].sibling) {
			depth[c] = depth[i] + 1;
			stack[top++] = c;
		}
		for (size_t a = first, b = top; a + 1 < b; a++, b--) { /* hottest child next */
			size_t x = stack[a];
			stack[a] = stack[b - 1], stack[b - 1] = x;
		}
	}
	free(stack), free(depth);
}

static int tree(const struct profile *p, double thr, FILE *f)
{
	struct tree t = {prof_xcalloc(64, sizeof(struct node)), 1, 64, NULL, 0, {0}};
	for (size_t si = 0; si < p->nsamples; si++) {
		size_t n, cur = 0;
		char **v = frames(p, &p->samples[si], &n);
		for (size_t i = n; i-- > 0;) {
			size_t name = (size_t)(rows_row(&t.names, v[i], v[i], "") - t.names.rows);
			cur = child_of(&t, cur, name);
			t.v[cur].cum += p->samples[si].count; /* a path occurs once per sample */
		}
		free_frames(v, n);
	}
	link_children(&t);
	int64_t total = prof_total(p);
	fprintf(f, "# call tree, top down, pruned below %.2f%%\n%8s %7s  %s\n", thr, "samples", "%",
	        "function");
	tree_print(&t, total, thr, f);
	free(t.v), free(t.slots);
	rows_free(&t.names);
	return 0;
}

int report_callgraph(const struct profile *p, const struct ropts *o, FILE *f)
{
	if (o->callers && neighbours(p, o->callers, +1, f) != 0)
		return -1;
	if (o->callees && neighbours(p, o->callees, -1, f) != 0)
		return -1;
	return o->tree ? tree(p, o->threshold, f) : 0;
}
