/*
 * flat.c - the flat profile: one row per function (or module, thread,
 * process, source line) with self and cumulative samples, as text or csv.
 *
 * Self: the sample's leaf frame (innermost inline function of its first
 * location).  Cumulative: every frame of the stack, counted once per
 * sample however often it recurs.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "report.h"
#include "../model/rows.h"

/* Adds the sample's frames to rows keyed by function and module. */
static void by_function(const struct profile *p, size_t si, struct rows *a)
{
	const struct prof_sample *s = &p->samples[si];
	char buf[PROF_NAME_BUF], key[PROF_NAME_BUF * 2];
	for (size_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i] - 1];
		const char *mod = prof_module_name(p, l->mapping_id);
		for (size_t k = 0; k < (l->nlines ? l->nlines : 1); k++) {
			const char *name = prof_frame_name(p, l, k, buf);
			char *dyn = NULL;
			const char *kp = key;
			if (snprintf(key, sizeof key, "%s\t%s", name, mod) >= (int)sizeof key) {
				if (asprintf(&dyn, "%s\t%s", name, mod) < 0)
					prof_oom();
				kp = dyn;
			}
			rows_add(rows_row(a, kp, name, mod), si, i == 0 && k == 0, s->count, s->cpu_ns);
			free(dyn);
		}
	}
}

static void by_module(const struct profile *p, size_t si, struct rows *a)
{
	const struct prof_sample *s = &p->samples[si];
	for (size_t i = 0; i < s->nlocs; i++) {
		const char *mod = prof_module_name(p, p->locations[s->locs[i] - 1].mapping_id);
		rows_add(rows_row(a, mod, mod, ""), si, i == 0, s->count, s->cpu_ns);
	}
	if (s->nlocs == 0)
		rows_add(rows_row(a, "[unknown]", "[unknown]", ""), si, 1, s->count, s->cpu_ns);
}

static void by_task(const struct profile *p, size_t si, struct rows *a, int thread)
{
	const struct prof_sample *s = &p->samples[si];
	char key[64], name[300], detail[300];
	snprintf(key, sizeof key, "%" PRIu32 "/%" PRIu32, s->pid, thread ? s->tid : 0);
	snprintf(detail, sizeof detail, "%.250s [%" PRIu32 "]", *s->comm ? s->comm : "?", s->pid);
	if (thread)
		snprintf(name, sizeof name, "%.250s [%" PRIu32 "]", *s->thread ? s->thread : "?", s->tid);
	rows_add(rows_row(a, key, thread ? name : detail, thread ? detail : ""), si, 1, s->count,
	         s->cpu_ns);
}

/* file:line of line entry k of l, and the inline chain it sits in. */
static void by_line(const struct profile *p, size_t si, struct rows *a)
{
	const struct prof_sample *s = &p->samples[si];
	for (size_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *l = &p->locations[s->locs[i] - 1];
		char buf[PROF_NAME_BUF], *where = NULL, *chain = NULL, *key = NULL;
		for (size_t k = 0; k < (l->nlines ? l->nlines : 1); k++) {
			const char *fn = prof_frame_name(p, l, k, buf);
			const struct prof_function *f = k < l->nlines && l->lines[k].function_id
			                                ? &p->functions[l->lines[k].function_id - 1] : NULL;
			int n = f && *f->filename
			        ? asprintf(&where, "%s:%" PRId64, f->filename, l->lines[k].line)
			        : asprintf(&where, "%s", fn);
			if (n < 0 || asprintf(&chain, "%s", fn) < 0)
				prof_oom();
			for (size_t j = k + 1; j < l->nlines; j++) {
				char *c2, b2[PROF_NAME_BUF];
				if (asprintf(&c2, "%s (inlined into %s, line %" PRId64 ")", chain,
				             prof_frame_name(p, l, j, b2), l->lines[j].line) < 0)
					prof_oom();
				free(chain);
				chain = c2;
			}
			if (asprintf(&key, "%s\t%s", where, chain) < 0)
				prof_oom();
			rows_add(rows_row(a, key, where, chain), si, i == 0 && k == 0, s->count, s->cpu_ns);
			free(where), free(chain), free(key);
		}
	}
}

static void no_stack(const struct profile *p, size_t si, struct rows *a)
{
	const struct prof_sample *s = &p->samples[si];
	if (s->nlocs == 0)
		rows_add(rows_row(a, "[unknown]\t", "[unknown]", ""), si, 1, s->count, s->cpu_ns);
}

static const char *const col_names[][2] = {
	[BY_FUNCTION] = {"function", "module"}, [BY_MODULE] = {"module", ""},
	[BY_THREAD] = {"thread", "process"}, [BY_PROCESS] = {"process", ""},
	[BY_LINE] = {"line", "function"},
};

static double pct(int64_t part, int64_t total)
{
	return total > 0 ? 100.0 * (double)part / (double)total : 0.0;
}

/* RFC 4180: quoted when it holds a comma, quote, CR or LF. */
static void csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void print_csv(const struct rows *a, const struct ropts *o, int64_t total, FILE *f)
{
	fprintf(f, "self,self_percent,cum,cum_percent,seconds,%s,%s\r\n", col_names[o->by][0],
	        *col_names[o->by][1] ? col_names[o->by][1] : "detail");
	for (size_t i = 0; i < a->n && (o->top == 0 || (long)i < o->top); i++) {
		const struct row *r = &a->rows[i];
		fprintf(f, "%" PRId64 ",%.2f,%" PRId64 ",%.2f,%.6f,", r->self, pct(r->self, total),
		        r->cum, pct(r->cum, total), (double)r->self_ns / 1e9);
		csv_field(f, r->name);
		fputc(',', f);
		csv_field(f, r->detail);
		fputs("\r\n", f);
	}
}

/* Terminal columns when stdout is one, else 0 (no truncation). */
static int term_width(int tty)
{
	struct winsize ws;
	if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 60)
		return ws.ws_col;
	return 0;
}

static void print_text(const struct profile *p, const struct rows *a, const struct ropts *o,
                       int tty, FILE *f)
{
	int64_t total = prof_total(p);
	int width = term_width(tty), namew = 8;
	size_t n = o->top && (size_t)o->top < a->n ? (size_t)o->top : a->n;
	for (size_t i = 0; i < n; i++) {
		int len = (int)strlen(a->rows[i].name);
		namew = len > namew ? len : namew;
	}
	/* fixed part: 8+1+7+1+8+1+7+1+9+2 = 45 columns */
	if (width && namew > width - 45 - 12)
		namew = width - 45 - 12 > 20 ? width - 45 - 12 : 20;
	report_header(p, o->file, f);
	int two = *col_names[o->by][1];
	fprintf(f, "%8s %7s %8s %7s %9s  %-*s%s%s\n", "self", "self%", "cum", "cum%", "seconds",
	        two ? namew : 0, col_names[o->by][0], two ? "  " : "", col_names[o->by][1]);
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &a->rows[i];
		int len = (int)strlen(r->name);
		fprintf(f, "%8" PRId64 " %6.2f%% %8" PRId64 " %6.2f%% %9.3f  ", r->self,
		        pct(r->self, total), r->cum, pct(r->cum, total), (double)r->self_ns / 1e9);
		if (width && len > namew) /* keep the end: it tells C++ overloads apart */
			fprintf(f, "...%s", r->name + len - (namew - 3));
		else
			fprintf(f, "%-*s", *r->detail ? namew : 0, r->name);
		fprintf(f, "%s%s\n", *r->detail ? "  " : "", r->detail);
	}
}

static void build(const struct profile *p, enum by by, struct rows *a)
{
	for (size_t si = 0; si < p->nsamples; si++) {
		if (by == BY_FUNCTION || by == BY_LINE)
			no_stack(p, si, a);
		if (by == BY_FUNCTION)
			by_function(p, si, a);
		else if (by == BY_MODULE)
			by_module(p, si, a);
		else if (by == BY_LINE)
			by_line(p, si, a);
		else
			by_task(p, si, a, by == BY_THREAD);
	}
	rows_sort(a);
}

int report_flat(const struct profile *p, const struct ropts *o, FILE *f, int tty)
{
	struct rows a = {0};
	build(p, o->by, &a);
	if (o->fmt == FMT_CSV)
		print_csv(&a, o, prof_total(p), f);
	else
		print_text(p, &a, o, tty, f);
	rows_free(&a);
	return 0;
}
