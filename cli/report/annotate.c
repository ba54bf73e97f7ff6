/*
 * annotate.c - `--annotate FUNC`: FUNC's source with samples and % in a
 * gutter, or, when the source cannot be read, objdump's disassembly of
 * FUNC with samples per instruction.
 *
 * A sample counts for FUNC when its leaf location runs FUNC's code,
 * inlined callees included: it is charged to the line of FUNC's frame in
 * the location's inline chain (the call site for an inlined callee).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../format/elfaddr.h"
#include "../format/input.h"
#include "report.h"

struct hits {
	int64_t *by_line;     /* [line] samples */
	int64_t maxline, minline;
	uint64_t *addr;       /* file addresses of leaf samples, */
	int64_t *count;       /* and their counts */
	size_t naddr;
	int64_t total;
	const struct prof_function *fn;
	uint64_t mapping_id;  /* of FUNC's code (the first seen) */
};

/* Line k of l when l's chain runs FUNC; -1 when not. */
static int frame_of(const struct profile *p, const struct prof_location *l, const char *name)
{
	for (size_t k = 0; k < l->nlines; k++)
		if (l->lines[k].function_id &&
		    strcmp(p->functions[l->lines[k].function_id - 1].name, name) == 0)
			return (int)k;
	return -1;
}

static void collect(const struct profile *p, const char *name, struct hits *h)
{
	h->maxline = 0, h->minline = INT64_MAX;
	h->addr = prof_xrealloc(NULL, p->nsamples, sizeof *h->addr);
	h->count = prof_xrealloc(NULL, p->nsamples, sizeof *h->count);
	for (size_t i = 0; i < p->nsamples; i++) { /* pass 1: the line range */
		const struct prof_sample *s = &p->samples[i];
		const struct prof_location *l = s->nlocs ? &p->locations[s->locs[0] - 1] : NULL;
		int k = l ? frame_of(p, l, name) : -1;
		if (k < 0)
			continue;
		if (!h->fn) {
			h->fn = &p->functions[l->lines[k].function_id - 1];
			h->mapping_id = l->mapping_id;
		}
		int64_t line = l->lines[k].line;
		if (line > 0 && line < (1 << 24)) {
			h->maxline = line > h->maxline ? line : h->maxline;
			h->minline = line < h->minline ? line : h->minline;
		}
		h->total += s->count;
		if (l->mapping_id == h->mapping_id) {
			h->addr[h->naddr] = l->address;
			h->count[h->naddr++] = s->count;
		}
	}
	h->by_line = prof_xcalloc((size_t)h->maxline + 1, sizeof *h->by_line);
	for (size_t i = 0; i < p->nsamples; i++) { /* pass 2: per line */
		const struct prof_sample *s = &p->samples[i];
		const struct prof_location *l = s->nlocs ? &p->locations[s->locs[0] - 1] : NULL;
		int k = l ? frame_of(p, l, name) : -1;
		if (k >= 0 && l->lines[k].line > 0 && l->lines[k].line <= h->maxline)
			h->by_line[l->lines[k].line] += s->count;
	}
}

static int source(const struct profile *p, struct hits *h, FILE *f)
{
	FILE *src = input_open_named(h->fn->filename); /* never a FIFO */
	if (!src || h->maxline == 0) {
		int e = errno;
		if (!*h->fn->filename)
			fprintf(stderr, "profil report: no source file for %s in the profile; "
			        "showing its disassembly\n", h->fn->name);
		else
			fprintf(stderr, "profil report: cannot read the source of %s (%s: %s); "
			        "showing its disassembly\n", h->fn->name, h->fn->filename,
			        src ? "no line numbers" : strerror(e));
		if (src)
			fclose(src);
		return -1;
	}
	int64_t total = prof_total(p);
	int64_t first = h->fn->start_line > 0 && h->fn->start_line < h->minline
	                ? h->fn->start_line : h->minline;
	first = first > 3 ? first - 2 : 1;
	fprintf(f, "# %s (%s): %" PRId64 " samples, %.2f%% of %" PRId64 "\n", h->fn->name,
	        h->fn->filename, h->total, total ? 100.0 * (double)h->total / (double)total : 0.0,
	        total);
	char *line = NULL;
	size_t cap = 0;
	for (int64_t n = 1; getline(&line, &cap, src) >= 0 && n <= h->maxline + 2; n++) {
		if (n < first)
			continue;
		int64_t c = n <= h->maxline ? h->by_line[n] : 0;
		if (c)
			fprintf(f, "%8" PRId64 " %6.2f%% %6" PRId64 " | %s", c,
			        100.0 * (double)c / (double)total, n, line);
		else
			fprintf(f, "%8s %7s %6" PRId64 " | %s", "", "", n, line);
		if (!strchr(line, '\n'))
			fputc('\n', f);
	}
	free(line);
	fclose(src);
	return 0;
}

int report_annotate(const struct profile *p, const struct ropts *o, FILE *f)
{
	struct hits h = {0};
	collect(p, o->annotate, &h);
	int rc = 0;
	if (!h.fn) {
		int known = 0;
		for (size_t i = 0; i < p->nfunctions && !known; i++)
			known = strcmp(p->functions[i].name, o->annotate) == 0;
		fprintf(stderr, "profil report: %s '%s' in %s\n",
		        known ? "no samples in function" : "no function", o->annotate, o->file);
		rc = -1;
	} else if (source(p, &h, f) != 0) {
		rc = h.mapping_id ? annotate_disassembly(p, h.fn, &p->mappings[h.mapping_id - 1],
		                                         h.addr, h.count, h.naddr, f)
		                  : -1;
	}
	free(h.by_line), free(h.addr), free(h.count);
	return rc;
}
