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

/* The rows of a location's frames, innermost first, by function: their
 * indices go to out[] (room for max(nlines, 1)); returns how many. */
static size_t loc_functions(const struct profile *p, const struct prof_location *l,
                            struct rows *a, size_t *out)
{
	char buf[PROF_NAME_BUF], *key;
	const char *mod = prof_location_module(p, l);
	size_t n = l->nlines ? l->nlines : 1;
	for (size_t k = 0; k < n; k++) {
		const char *name = prof_frame_name(p, l, k, buf);
		if (asprintf(&key, "%s\t%s", name, mod) < 0)
			prof_oom();
		out[k] = (size_t)(rows_row(a, key, name, mod) - a->rows);
		free(key);
	}
	return n;
}

static size_t loc_module(const struct profile *p, const struct prof_location *l,
                         struct rows *a, size_t *out)
{
	const char *mod = prof_location_module(p, l);
	out[0] = (size_t)(rows_row(a, mod, mod, "") - a->rows);
	return 1;
}

/* Rows per command name: a build's 200 runs of cc1 in one row. */
static void by_command(const struct profile *p, size_t si, struct rows *a)
{
	const struct prof_sample *s = &p->samples[si];
	char key[300];
	snprintf(key, sizeof key, "%.250s", *s->comm ? s->comm : "?");
	rows_add(rows_row(a, key, key, "0"), si, 1, s->count, s->cpu_ns);
}

/* --by command's second column: how many processes ran each command
 * (a process that exec'd counts once per command it ran). */
static void count_processes(const struct profile *p, struct rows *a)
{
	struct rows pairs = {0};
	for (size_t si = 0; si < p->nsamples; si++) {
		const struct prof_sample *s = &p->samples[si];
		char key[300], comm[260];
		snprintf(comm, sizeof comm, "%.250s", *s->comm ? s->comm : "?");
		snprintf(key, sizeof key, "%" PRIu32 "/%s", s->pid, comm);
		size_t before = pairs.n;
		rows_row(&pairs, key, "", "");
		if (pairs.n == before)
			continue; /* this process was counted */
		struct row *r = rows_row(a, comm, comm, "0");
		char n[32];
		snprintf(n, sizeof n, "%ld", atol(r->detail) + 1);
		free(r->detail);
		r->detail = prof_xstrdup(n);
	}
	rows_free(&pairs);
}

static void by_task(const struct profile *p, size_t si, struct rows *a, int thread)
{
	const struct prof_sample *s = &p->samples[si];
	char key[320], name[300], detail[300];
	/* An exec'd image is a row of its own (same pid, its own command
	 * name): a shell wrapper that execs python3 is not python3. */
	snprintf(key, sizeof key, "%" PRIu32 "/%" PRIu32 "/%.250s", s->pid, thread ? s->tid : 0,
	         s->comm);
	snprintf(detail, sizeof detail, "%.250s [%" PRIu32 "]", *s->comm ? s->comm : "?", s->pid);
	if (thread)
		snprintf(name, sizeof name, "%.250s [%" PRIu32 "]", *s->thread ? s->thread : "?", s->tid);
	rows_add(rows_row(a, key, thread ? name : detail, thread ? detail : ""), si, 1, s->count,
	         s->cpu_ns);
}

/* Rows per source line (file:line of line entry k) with the inline
 * chain it sits in. */
static size_t loc_lines(const struct profile *p, const struct prof_location *l,
                        struct rows *a, size_t *out)
{
	char buf[PROF_NAME_BUF], *where = NULL, *chain = NULL, *key = NULL;
	size_t n = l->nlines ? l->nlines : 1;
	for (size_t k = 0; k < n; k++) {
		const char *fn = prof_frame_name(p, l, k, buf);
		const struct prof_function *f = k < l->nlines && l->lines[k].function_id
		                                ? &p->functions[l->lines[k].function_id - 1] : NULL;
		int rc = f && *f->filename
		         ? asprintf(&where, "%s:%" PRId64, f->filename, l->lines[k].line)
		         : asprintf(&where, "%s", fn);
		if (rc < 0 || asprintf(&chain, "%s", fn) < 0)
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
		out[k] = (size_t)(rows_row(a, key, where, chain) - a->rows);
		free(where), free(chain), free(key);
	}
	return n;
}

typedef size_t loc_rows_fn(const struct profile *, const struct prof_location *, struct rows *,
                           size_t *);

/* Row indices per location, computed once: a profile has far fewer
 * locations than frames in its samples. */
struct loc_cache {
	size_t *off, *n; /* per location: start in pool, count; n == SIZE_MAX: not yet */
	size_t *pool, npool, cap;
};

static const size_t *cached(const struct profile *p, struct loc_cache *c, uint64_t id,
                            struct rows *a, loc_rows_fn *fn, size_t *n)
{
	if (c->n[id - 1] == SIZE_MAX) {
		const struct prof_location *l = &p->locations[id - 1];
		size_t need = l->nlines ? l->nlines : 1;
		while (c->npool + need > c->cap)
			c->pool = prof_xrealloc(c->pool, c->cap = c->cap ? 2 * c->cap : 1024,
			                        sizeof *c->pool);
		c->off[id - 1] = c->npool;
		c->n[id - 1] = fn(p, l, a, c->pool + c->npool);
		c->npool += c->n[id - 1];
	}
	*n = c->n[id - 1];
	return c->pool + c->off[id - 1];
}

/* Every sample's frames into rows: self for the leaf, cum once each. */
static void by_frames(const struct profile *p, struct rows *a, loc_rows_fn *fn)
{
	struct loc_cache c = {prof_xcalloc(p->nlocations, sizeof *c.off),
	                      prof_xrealloc(NULL, p->nlocations, sizeof *c.n), NULL, 0, 0};
	for (size_t i = 0; i < p->nlocations; i++)
		c.n[i] = SIZE_MAX;
	for (size_t si = 0; si < p->nsamples; si++) {
		const struct prof_sample *s = &p->samples[si];
		for (size_t i = 0; i < s->nlocs; i++) {
			size_t n;
			const size_t *idx = cached(p, &c, s->locs[i], a, fn, &n);
			for (size_t k = 0; k < n; k++)
				rows_add(&a->rows[idx[k]], si, i == 0 && k == 0, s->count, s->cpu_ns);
		}
	}
	free(c.off), free(c.n), free(c.pool);
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
	[BY_COMMAND] = {"command", "processes"},
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

#define PIPE_NAME_COLUMN 60

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
	/* Not a terminal: names are printed whole (scripts, grep), but one
	 * long C++ name (clang's run to 900 characters) must not pad every
	 * row that wide: a longer name overruns its column, its row only. */
	if (!width && namew > PIPE_NAME_COLUMN)
		namew = PIPE_NAME_COLUMN;
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
		if (by == BY_FUNCTION || by == BY_LINE || by == BY_MODULE)
			no_stack(p, si, a);
		if (by == BY_THREAD || by == BY_PROCESS)
			by_task(p, si, a, by == BY_THREAD);
		if (by == BY_COMMAND)
			by_command(p, si, a);
	}
	if (by == BY_COMMAND)
		count_processes(p, a);
	if (by == BY_FUNCTION || by == BY_LINE || by == BY_MODULE)
		by_frames(p, a, by == BY_FUNCTION ? loc_functions : by == BY_LINE ? loc_lines
		                                                                  : loc_module);
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
