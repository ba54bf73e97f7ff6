/*
 * rows.c - report rows hashed by key (rows.h).
 */
#include "rows.h"

#include <stdlib.h>
#include <string.h>

#include "profile.h"

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ^ h >> 29;
}

static void rehash(struct rows *a)
{
	free(a->slots);
	a->nslots = a->nslots ? 2 * a->nslots : 256;
	a->slots = prof_xcalloc(a->nslots, sizeof *a->slots);
	for (size_t i = 0; i < a->n; i++) {
		size_t k = hash(a->rows[i].key) & (a->nslots - 1);
		while (a->slots[k])
			k = (k + 1) & (a->nslots - 1);
		a->slots[k] = i + 1;
	}
}

struct row *rows_row(struct rows *a, const char *key, const char *name, const char *detail)
{
	if (2 * (a->n + 1) > a->nslots)
		rehash(a);
	size_t k = hash(key) & (a->nslots - 1);
	for (; a->slots[k]; k = (k + 1) & (a->nslots - 1))
		if (strcmp(a->rows[a->slots[k] - 1].key, key) == 0)
			return &a->rows[a->slots[k] - 1];
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->rows = prof_xrealloc(a->rows, a->cap, sizeof *a->rows);
	}
	struct row *r = &a->rows[a->n];
	*r = (struct row){prof_xstrdup(key), prof_xstrdup(name), prof_xstrdup(detail), 0, 0, 0, 0, 0};
	a->slots[k] = ++a->n;
	return r;
}

void rows_add(struct row *r, size_t si, int self, int64_t count, int64_t ns)
{
	if (self)
		r->self += count, r->self_ns += ns;
	if (r->last != si + 1) {
		r->last = si + 1;
		r->cum += count, r->cum_ns += ns;
	}
}

static int by_self(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->cum != b->cum)
		return a->cum > b->cum ? -1 : 1;
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->key, b->key);
}

static int by_key(const void *x, const void *y)
{
	return strcmp(((const struct row *)x)->key, ((const struct row *)y)->key);
}

/* Sorting moves rows: the hash slots are rebuilt for later lookups. */
void rows_sort(struct rows *a)
{
	if (a->n == 0)
		return;
	qsort(a->rows, a->n, sizeof *a->rows, by_self);
	a->nslots /= 2;
	rehash(a);
}

void rows_sort_key(struct rows *a)
{
	if (a->n == 0)
		return;
	qsort(a->rows, a->n, sizeof *a->rows, by_key);
	a->nslots /= 2;
	rehash(a);
}

void rows_free(struct rows *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->rows[i].key), free(a->rows[i].name), free(a->rows[i].detail);
	free(a->rows), free(a->slots);
	*a = (struct rows){0};
}
