/*
 * rows.h - rows of a report: self and cumulative samples per key (a
 * function, a module, a thread, a source line, a folded stack ...).
 */
#ifndef PROFIL_CLI_REPORT_ROWS_H
#define PROFIL_CLI_REPORT_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "index.h"

struct row {
	char *key;            /* unique */
	char *name, *detail;  /* the two text columns (e.g. function, module) */
	int64_t self, cum;    /* samples */
	int64_t self_ns, cum_ns;
	size_t last;          /* last sample counted into cum, + 1 */
};

struct rows {
	struct row *rows;
	size_t n, cap;
	struct prof_index index; /* by key */
};

/* The row for key, made with name and detail if new. */
struct row *rows_row(struct rows *a, const char *key, const char *name, const char *detail);
/* Adds a sample (index si) to row: self if self, cum once per sample. */
void rows_add(struct row *r, size_t si, int self, int64_t count, int64_t ns);
/* Sorts rows: self descending, then cum descending, then name. */
void rows_sort(struct rows *a);
/* Sorts by key (stable output for folded stacks). */
void rows_sort_key(struct rows *a);
void rows_free(struct rows *a);

#endif
