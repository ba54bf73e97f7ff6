/*
 * html_src.c - the source of the hottest functions, with the samples and
 * share of each line in a heat gutter and the inlined calls each line
 * runs, read from the source files at report time; where the file cannot
 * be read the page says why and shows the disassembly with samples per
 * instruction instead (objdump, through cli/report's annotate code).
 *
 * As in `--annotate`, a sample counts for a function when the leaf
 * location's inline chain runs it; it is charged to that frame's line
 * (the call site for inlined callees, which are listed under the line).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "html_int.h"
#include "input.h"

#define MAX_LINE (1 << 24)
#define NCHAINS 4 /* inline chains listed per line */

struct chain {
	int64_t line, count;
	char *text;
};

struct src {
	const char *name;
	int64_t *by_line, maxline, minline, total, maxcount;
	uint64_t *addr, mapping_id;
	int64_t *count;
	size_t naddr;
	struct chain *chains;
	size_t nchains;
};

/* The inlined callees below frame k of l, innermost last. */
static char *chain_text(const struct profile *p, const struct prof_location *l, size_t k)
{
	char *s = prof_xstrdup(""), buf[PROF_NAME_BUF];
	for (size_t j = k; j-- > 0;) {
		char *n;
		const struct prof_function *fn = l->lines[j].function_id
			? &p->functions[l->lines[j].function_id - 1] : NULL;
		if (asprintf(&n, "%s%s%s (%s:%" PRId64 ")", s, *s ? " \xe2\x86\x92 " : "",
		             prof_frame_name(p, l, j, buf), fn ? fn->filename : "?",
		             l->lines[j].line) < 0)
			prof_oom();
		free(s);
		s = n;
	}
	return s;
}

static void add_chain(struct src *s, int64_t line, int64_t c, char *text)
{
	for (size_t i = 0; i < s->nchains; i++)
		if (s->chains[i].line == line && !strcmp(s->chains[i].text, text)) {
			s->chains[i].count += c;
			free(text);
			return;
		}
	s->chains = prof_xrealloc(s->chains, s->nchains + 1, sizeof *s->chains);
	s->chains[s->nchains++] = (struct chain){line, c, text};
}

static void collect(const struct profile *p, const struct hframe *fr, struct src *s)
{
	char buf[PROF_NAME_BUF];
	s->minline = INT64_MAX;
	s->addr = prof_xrealloc(NULL, p->nsamples + 1, sizeof *s->addr);
	s->count = prof_xrealloc(NULL, p->nsamples + 1, sizeof *s->count);
	s->mapping_id = fr->mapping_id;
	for (int pass = 0; pass < 2; pass++) { /* 1: the line range; 2: the lines */
		for (size_t i = 0; i < p->nsamples; i++) {
			const struct prof_sample *sm = &p->samples[i];
			const struct prof_location *l = sm->nlocs ? &p->locations[sm->locs[0] - 1] : NULL;
			size_t k = 0, n = l ? (l->nlines ? l->nlines : 1) : 0;
			while (k < n && strcmp(prof_frame_name(p, l, k, buf), s->name) != 0)
				k++;
			if (k == n)
				continue;
			int64_t line = k < l->nlines ? l->lines[k].line : 0;
			if (line <= 0 || line >= MAX_LINE)
				line = 0;
			if (pass == 0) {
				s->maxline = line > s->maxline ? line : s->maxline;
				s->minline = line && line < s->minline ? line : s->minline;
				s->total += sm->count;
				if (l->mapping_id == s->mapping_id)
					s->addr[s->naddr] = l->address, s->count[s->naddr++] = sm->count;
				continue;
			}
			s->by_line[line] += sm->count;
			if (line && s->by_line[line] > s->maxcount)
				s->maxcount = s->by_line[line];
			if (k > 0 && line)
				add_chain(s, line, sm->count, chain_text(p, l, k));
		}
		if (pass == 0)
			s->by_line = prof_xcalloc((size_t)s->maxline + 1, sizeof *s->by_line);
	}
}

/* The heat of c of max as a CSS variable (a number only: no text from
 * the profile goes into an attribute unescaped). */
static void heat(FILE *f, int64_t c, int64_t max)
{
	fprintf(f, " style=\"--h:%.3f\"", max > 0 ? (double)c / (double)max : 0.0);
}

/* Is line n within a few lines of a sampled one (or of the start)? */
static int near(const struct src *s, int64_t n, int64_t start, int all)
{
	if (all || (n >= start && n <= start + 1))
		return 1;
	for (int64_t d = -3; d <= 3; d++)
		if (n + d >= 1 && n + d <= s->maxline && s->by_line[n + d])
			return 1;
	return 0;
}

/* The source table; 0, or -1 with the reason in why[]. */
static int source(FILE *f, const struct prof_function *fn, struct src *s, int64_t total,
                  char *why, size_t len)
{
	if (!fn || !*fn->filename)
		return snprintf(why, len, "the profile names no source file for it"), -1;
	if (s->maxline == 0)
		return snprintf(why, len, "the profile has no line numbers for it"), -1;
	FILE *in = input_open_named(fn->filename); /* a regular file only: never a FIFO */
	if (!in)
		return snprintf(why, len, "%s: %s", fn->filename, strerror(errno)), -1;
	int64_t start = fn->start_line > 0 && fn->start_line < s->minline ? fn->start_line
	                                                                   : s->minline;
	int64_t first = start > 3 ? start - 2 : 1, last = s->maxline + 2;
	int all = last - first <= 80, gap = 0;
	fputs("<table class=\"src\"><tbody>\n", f);
	char *line = NULL;
	size_t cap = 0;
	for (int64_t n = 1; n <= last && getline(&line, &cap, in) >= 0; n++) {
		if (n < first)
			continue;
		if (!near(s, n, start, all)) {
			if (!gap)
				fputs("<tr class=\"gap\"><td colspan=\"4\">\xe2\x8b\xae</td></tr>\n", f);
			gap = 1;
			continue;
		}
		gap = 0;
		line[strcspn(line, "\n")] = '\0';
		int64_t c = n <= s->maxline ? s->by_line[n] : 0;
		fputs("<tr><td class=\"c\"", f);
		heat(f, c, s->maxcount);
		if (c)
			fprintf(f, ">%" PRId64 "</td><td class=\"p\">%.2f%%</td>", c,
			        100.0 * (double)c / (double)total);
		else
			fputs("></td><td class=\"p\"></td>", f);
		fprintf(f, "<td class=\"n\">%" PRId64 "</td><td class=\"t\"><code>", n);
		html_esc(f, line);
		fputs("</code>", f);
		for (size_t i = 0, shown = 0; i < s->nchains && shown < NCHAINS; i++)
			if (s->chains[i].line == n) {
				fprintf(f, "<div class=\"inl\">inlined: %" PRId64 " samples in ",
				        s->chains[i].count);
				html_esc(f, s->chains[i].text);
				fputs("</div>", f);
				shown++;
			}
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table>\n", f);
	free(line);
	fclose(in);
	return 0;
}

/* objdump's lines near those with samples (a big function has
 * thousands), the sampled ones heated; gaps shown as one line. */
#define ASM_CONTEXT 4
/* The samples of an annotated line: its first 8 columns ("%8d", or
 * blank; the address after them is hex and must not be read). */
static int64_t asm_count(const char *l)
{
	char buf[9];
	snprintf(buf, sizeof buf, "%s", l);
	return strlen(l) > 8 && l[8] == ' ' ? strtoll(buf, NULL, 10) : 0;
}

#define ASM_MAX 400
static void asm_lines(char *text, FILE *f)
{
	size_t n = 0, cap = 0;
	char **v = NULL;
	for (char *l = text, *e; l && *l; l = e ? e + 1 : NULL) {
		e = strchr(l, '\n');
		if (e)
			*e = '\0';
		if (n == cap) /* doubling: objdump gives 10^5 lines for a big function */
			v = prof_xrealloc(v, cap = cap ? 2 * cap : 256, sizeof *v);
		v[n++] = l;
	}
	unsigned char *show = prof_xcalloc(n + 1, 1);
	int64_t max = 0; /* the heat is relative to the hottest instruction */
	for (size_t i = 0; i < n; i++)
		max = asm_count(v[i]) > max ? asm_count(v[i]) : max;
	for (size_t i = 0; i < n; i++)
		if (asm_count(v[i]) > 0 || strstr(v[i], ">:"))
			for (size_t j = i > ASM_CONTEXT ? i - ASM_CONTEXT : 0; j < n && j <= i + ASM_CONTEXT; j++)
				show[j] = 1;
	fputs("<pre class=\"asm\">", f);
	size_t shown = 0;
	for (size_t i = 0; i < n && shown < ASM_MAX; i++) {
		if (!show[i]) {
			if (i == 0 || show[i - 1])
				fputs("<span class=\"gap\">\xe2\x8b\xae</span>\n", f);
			continue;
		}
		int64_t c = asm_count(v[i]);
		if (c > 0) {
			fputs("<span class=\"hot\"", f);
			heat(f, c, max);
			fputs(">", f);
		}
		html_esc(f, v[i]);
		fputs(c > 0 ? "</span>\n" : "\n", f);
		shown++;
	}
	if (shown == ASM_MAX)
		fputs("<span class=\"gap\">(more lines not shown)</span>\n", f);
	fputs("</pre>\n", f);
	free(show);
	free(v);
}

static int have_objdump(void)
{
	const char *path = getenv("PATH");
	char buf[4096];
	for (const char *d = path ? path : "/usr/bin:/bin"; *d;) {
		size_t n = strcspn(d, ":");
		snprintf(buf, sizeof buf, "%.*s/objdump", (int)n, d);
		if (access(buf, X_OK) == 0)
			return 1;
		d += n + (d[n] == ':');
	}
	return 0;
}

/* objdump's lines, those with samples heated. */
static void disassembly(const struct html_in *in, const struct prof_function *fn, struct src *s,
                        const char *name, FILE *f)
{
	const struct profile *p = in->p;
	if (!in->disasm || !s->mapping_id || !s->naddr) {
		fputs("<p class=\"missing\">No disassembly either: the samples are in no known "
		      "file.</p>\n", f);
		return;
	}
	if (prof_mapping_is_jit_map(&p->mappings[s->mapping_id - 1])) {
		fputs("<p class=\"missing\">No disassembly either: a JIT made this code at run "
		      "time, and no file holds it.</p>\n", f);
		return;
	}
	if (!have_objdump()) {
		fputs("<p class=\"missing\">No disassembly either: objdump is not installed "
		      "(Debian: binutils).</p>\n", f);
		return;
	}
	struct prof_function anon = {(char *)name, (char *)name, "", 0};
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	if (!m)
		prof_oom();
	int rc = in->disasm(p, fn ? fn : &anon, &p->mappings[s->mapping_id - 1], s->addr,
	                    s->count, s->naddr, m);
	fclose(m);
	if (rc != 0) {
		fputs("<p class=\"missing\">objdump could not disassemble it.</p>\n", f);
		free(text);
		return;
	}
	asm_lines(text, f);
	free(text);
}

static void one(const struct html_in *in, struct htree *t, size_t id, FILE *f)
{
	const struct profile *p = in->p;
	const struct hframe *fr = &t->frames[id];
	struct src s = {.name = t->str.s[fr->name]};
	collect(p, fr, &s);
	const struct prof_function *fn = fr->fn_id ? &p->functions[fr->fn_id - 1] : NULL;
	fprintf(f, "<article class=\"srcfn\" id=\"src-%zu\"><h3>", id);
	html_esc(f, s.name);
	fputs("</h3>\n<p class=\"meta\">", f);
	html_esc(f, t->str.s[fr->module]);
	fprintf(f, " \xc2\xb7 %" PRId64 " samples self, %.2f%% of all", fr->self,
	        t->total ? 100.0 * (double)fr->self / (double)t->total : 0.0);
	if (fn && *fn->filename) {
		fputs(" \xc2\xb7 <span class=\"path\">", f);
		html_esc(f, fn->filename);
		fputs("</span>", f);
	}
	fputs("</p>\n", f);
	char why[1024];
	if (source(f, fn, &s, t->total, why, sizeof why) != 0) {
		fputs("<p class=\"missing\">Source not available: ", f);
		html_esc(f, why);
		fputs(". The disassembly, with samples per instruction:</p>\n", f);
		disassembly(in, fn, &s, s.name, f);
	}
	fputs("</article>\n", f);
	for (size_t i = 0; i < s.nchains; i++)
		free(s.chains[i].text);
	free(s.chains), free(s.by_line), free(s.addr), free(s.count);
}

void html_sources(const struct html_in *in, struct htree *t, const size_t *hot, size_t nhot,
                  FILE *f)
{
	fputs("<section id=\"source\"><h2>Source of the hottest functions</h2>\n", f);
	if (nhot == 0)
		fputs("<p class=\"missing\">No samples.</p>\n", f);
	fputs("<ol class=\"srcidx\">", f);
	for (size_t i = 0; i < nhot; i++) {
		fprintf(f, "<li><a href=\"#src-%zu\">", hot[i]);
		html_esc(f, t->str.s[t->frames[hot[i]].name]);
		fputs("</a></li>", f);
	}
	fputs("</ol>\n", f);
	for (size_t i = 0; i < nhot; i++)
		one(in, t, hot[i], f);
	fputs("</section>\n", f);
}
