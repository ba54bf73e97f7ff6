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

/* The tree: rows keyed by the path from the root ("a\x1f" "b\x1f" ...). */
static void tree_print(const struct rows *a, size_t i, int depth, int64_t total, double thr,
                       FILE *f)
{
	const struct row *r = &a->rows[i];
	if (pct(r->cum, total) < thr)
		return;
	fprintf(f, "%8" PRId64 " %6.2f%%  %*s%s\n", r->cum, pct(r->cum, total), 2 * depth, "",
	        r->name);
	size_t len = strlen(r->key);
	/* children: rows right after in key order whose key extends ours by one frame */
	for (size_t j = i + 1; j < a->n && strncmp(a->rows[j].key, r->key, len) == 0; j++)
		if (!strchr(a->rows[j].key + len, '\x1f') || strchr(a->rows[j].key + len, '\x1f')[1] == 0)
			tree_print(a, j, depth + 1, total, thr, f);
}

static int tree(const struct profile *p, double thr, FILE *f)
{
	struct rows a = {0};
	for (size_t si = 0; si < p->nsamples; si++) {
		size_t n, len = 0;
		char **v = frames(p, &p->samples[si], &n);
		char *path = prof_xstrdup("");
		for (size_t i = n; i-- > 0;) {
			len += strlen(v[i]) + 1;
			path = prof_xrealloc(path, len + 1, 1);
			strcat(strcat(path, v[i]), "\x1f");
			rows_add(rows_row(&a, path, v[i], ""), si, 0, p->samples[si].count, 0);
		}
		free(path);
		free_frames(v, n);
	}
	rows_sort_key(&a);
	int64_t total = prof_total(p);
	fprintf(f, "# call tree, top down, pruned below %.2f%%\n%8s %7s  %s\n", thr, "samples", "%",
	        "function");
	for (size_t i = 0; i < a.n; i++)
		if (strchr(a.rows[i].key, '\x1f')[1] == 0)
			tree_print(&a, i, 0, total, thr, f);
	rows_free(&a);
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
