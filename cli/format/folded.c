/*
 * folded.c - collapsed stacks (folded.h).  A ';' or newline inside a name
 * would split a frame or a line, so it is written as ':' or ' '.
 */
#include "folded.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../model/rows.h"

struct sbuf {
	char *p;
	size_t n, cap;
};

/* Appends s (a frame name, cleaned unless raw). */
static void add(struct sbuf *b, const char *s, int raw)
{
	size_t len = strlen(s);
	if (b->n + len + 2 > b->cap) {
		b->cap = (b->n + len + 2) * 2;
		b->p = prof_xrealloc(b->p, b->cap, 1);
	}
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		b->p[b->n++] = raw ? c : c == ';' ? ':' : c == '\n' || c == '\r' ? ' ' : c;
	}
	b->p[b->n] = '\0';
}

/* The stack of sample s, root first, into b. */
static void stack(const struct profile *p, const struct prof_sample *s, struct sbuf *b)
{
	char buf[PROF_NAME_BUF];
	b->n = 0;
	add(b, "", 1);
	for (size_t i = s->nlocs; i-- > 0;) {
		const struct prof_location *l = &p->locations[s->locs[i] - 1];
		for (size_t k = l->nlines ? l->nlines : 1; k-- > 0;) {
			if (b->n)
				add(b, ";", 1);
			add(b, prof_frame_name(p, l, k, buf), 0);
		}
	}
	if (b->n == 0)
		add(b, "[unknown]", 1);
}

int folded_write(const struct profile *p, FILE *f)
{
	struct rows a = {0};
	struct sbuf b = {0};
	for (size_t i = 0; i < p->nsamples; i++) {
		stack(p, &p->samples[i], &b);
		rows_add(rows_row(&a, b.p, "", ""), i, 1, p->samples[i].count, p->samples[i].cpu_ns);
	}
	rows_sort_key(&a);
	for (size_t i = 0; i < a.n; i++)
		if (a.rows[i].self > 0)
			fprintf(f, "%s %" PRId64 "\n", a.rows[i].key, a.rows[i].self);
	rows_free(&a);
	free(b.p);
	return 0;
}
