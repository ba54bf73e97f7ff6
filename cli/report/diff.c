/*
 * diff.c - `profil report --diff BASE [FILE]`: what changed from the
 * baseline BASE to FILE.  Shares, not samples: two recordings differ in
 * length, so each function's self and cumulative samples are divided by
 * its own profile's total, and the rows are the largest changes of
 * those shares (in percentage points).  With --format html, the
 * differential flame graph (cli/format/html.h) instead.
 *
 * Functions are matched by name and module: addresses differ between
 * builds and runs, names do not.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../format/html.h"
#include "../model/rows.h"
#include "report.h"

struct change {
	const char *name, *module;
	double self[2], cum[2]; /* shares in percent: baseline, new */
};

/* Self and cum samples per function ("name\tmodule" keys) of p. */
static void functions(const struct profile *p, struct rows *a)
{
	char buf[PROF_NAME_BUF], *key = NULL;
	size_t cap = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		for (size_t j = 0; j < s->nlocs; j++) {
			const struct prof_location *l = &p->locations[s->locs[j] - 1];
			const char *mod = prof_location_module(p, l);
			for (size_t k = 0; k < (l->nlines ? l->nlines : 1); k++) {
				const char *name = prof_frame_name(p, l, k, buf);
				size_t n = strlen(name) + strlen(mod) + 2;
				if (n > cap)
					key = prof_xrealloc(key, cap = 2 * n, 1);
				snprintf(key, cap, "%s\t%s", name, mod);
				rows_add(rows_row(a, key, name, mod), i, j == 0 && k == 0, s->count, s->cpu_ns);
			}
		}
	}
	free(key);
}

/* How much a function changed: self and cum changes added, so that a
 * function whose own time changed comes before its callers, whose
 * cumulative share changed by as much. */
static double weight(const struct change *c)
{
	double ds = c->self[1] - c->self[0], dc = c->cum[1] - c->cum[0];
	return (ds < 0 ? -ds : ds) + (dc < 0 ? -dc : dc);
}

static int by_change(const void *x, const void *y)
{
	const struct change *a = x, *b = y;
	double wa = weight(a), wb = weight(b);
	if (wa != wb)
		return wa < wb ? 1 : -1;
	return strcmp(a->name, b->name);
}

static double share(int64_t v, int64_t total)
{
	return total > 0 ? 100.0 * (double)v / (double)total : 0.0;
}

int report_diff(const struct profile *base, const struct profile *p, const struct ropts *o,
                FILE *f)
{
	if (o->fmt == FMT_HTML)
		return report_html(base, p, o, f);
	struct rows a = {0}, b = {0}; /* baseline, new */
	functions(base, &a);
	functions(p, &b);
	for (size_t i = 0; i < a.n; i++) /* every function in both, zero where absent */
		rows_row(&b, a.rows[i].key, a.rows[i].name, a.rows[i].detail);
	int64_t ta = prof_total(base), tb = prof_total(p);
	struct change *c = prof_xrealloc(NULL, b.n + 1, sizeof *c);
	for (size_t i = 0; i < b.n; i++) {
		const struct row *nr = &b.rows[i], *br = rows_row(&a, nr->key, nr->name, nr->detail);
		c[i] = (struct change){nr->name, nr->detail,
		                       {share(br->self, ta), share(nr->self, tb)},
		                       {share(br->cum, ta), share(nr->cum, tb)}};
	}
	qsort(c, b.n, sizeof *c, by_change);
	fprintf(f, "# diff: %s (%" PRId64 " samples) -> %s (%" PRId64 " samples); "
	        "shares of each profile's samples, changes in points\n", o->diff, ta, o->file, tb);
	fprintf(f, "%8s %8s %8s %8s %8s %8s  %-30s %s\n", "dself", "dcum", "self0%", "self1%",
	        "cum0%", "cum1%", "function", "module");
	size_t top = o->top > 0 ? (size_t)o->top : 20;
	for (size_t i = 0; i < b.n && i < top && weight(&c[i]) >= 0.005; i++)
		fprintf(f, "%+8.2f %+8.2f %7.2f%% %7.2f%% %7.2f%% %7.2f%%  %-30s %s\n",
		        c[i].self[1] - c[i].self[0], c[i].cum[1] - c[i].cum[0], c[i].self[0],
		        c[i].self[1], c[i].cum[0], c[i].cum[1], c[i].name, c[i].module);
	free(c);
	rows_free(&a);
	rows_free(&b);
	return 0;
}

int report_html(const struct profile *base, const struct profile *p, const struct ropts *o,
                FILE *f)
{
	struct html_in in = {p, o->file, base, o->diff, annotate_disassembly,
	                     o->top > 0 && o->top < 100 ? (int)o->top : 10};
	return html_write(&in, f);
}
