/*
 * rows.c - report rows hashed by key (rows.h).
 */
#include "rows.h"

#include <stdlib.h>
#include <string.h>

#include "profile.h"

static uint64_t key_hash(const void *ctx, size_t i)
{
	return prof_hash_str(((const struct rows *)ctx)->rows[i].key);
}

struct row *rows_row(struct rows *a, const char *key, const char *name, const char *detail)
{
	prof_index_reserve(&a->index, a->n, 256, key_hash, a);
	size_t at = prof_index_first(&a->index, prof_hash_str(key));
	for (; a->index.slots[at]; at = prof_index_next(&a->index, at))
		if (strcmp(a->rows[a->index.slots[at] - 1].key, key) == 0)
			return &a->rows[a->index.slots[at] - 1];
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->rows = prof_xrealloc(a->rows, a->cap, sizeof *a->rows);
	}
	struct row *r = &a->rows[a->n];
	*r = (struct row){prof_xstrdup(key), prof_xstrdup(name), prof_xstrdup(detail), 0, 0, 0, 0, 0};
	a->index.slots[at] = ++a->n;
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
	prof_index_rebuild(&a->index, a->n, key_hash, a);
}

void rows_sort_key(struct rows *a)
{
	if (a->n == 0)
		return;
	qsort(a->rows, a->n, sizeof *a->rows, by_key);
	prof_index_rebuild(&a->index, a->n, key_hash, a);
}

void rows_free(struct rows *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->rows[i].key), free(a->rows[i].name), free(a->rows[i].detail);
	free(a->rows);
	prof_index_free(&a->index);
	*a = (struct rows){0};
}
