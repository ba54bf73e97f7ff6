/*
 * html.c - the page of `profil report --format html` (html.h): head,
 * header and data-quality box, the sections the script fills in, the
 * static tables shown when scripts are blocked, the source views, the
 * JSON tree and the script.  Nothing is loaded from anywhere: the style
 * and the script are compiled in from cli/format/html/ (the Makefile
 * turns each file into a C string, html_assets.c in the build directory).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html_int.h"

static double pct(int64_t a, int64_t b)
{
	return b > 0 ? 100.0 * (double)a / (double)b : 0.0;
}

static void fact(FILE *f, const char *label, const char *fmt, double v)
{
	fprintf(f, "<div><dt>%s</dt><dd>", label);
	fprintf(f, fmt, v);
	fputs("</dd></div>", f);
}

/* A quality line, flagged when v is over the bad mark. */
static void quality(FILE *f, const char *label, double v, double bad, const char *note)
{
	fprintf(f, "<li class=\"%s\"><b>%.2f%%</b> %s", v > bad ? "warn" : "ok", v, label);
	if (note)
		fprintf(f, " <span class=\"note\">%s</span>", note);
	fputs("</li>\n", f);
}

static void header(FILE *f, const struct html_in *in, const struct htree *t)
{
	const struct profile *p = in->p;
	double cpu = (double)t->cpu_ns / 1e9, hz = p->period_ns > 0 ? 1e9 / (double)p->period_ns : 0;
	fputs("<header><h1>profil</h1><p class=\"cmd\"><code>", f);
	html_esc(f, p->command && *p->command ? p->command : in->file);
	fputs("</code></p><p class=\"file\">", f);
	if (in->base) {
		fputs("differential: <code>", f);
		html_esc(f, in->base_file);
		fputs("</code> (baseline) \xe2\x86\x92 ", f);
	}
	fputs("<code>", f);
	html_esc(f, in->file);
	fputs("</code></p>\n<dl class=\"facts\">", f);
	fact(f, "duration", "%.3f s", (double)p->duration_ns / 1e9);
	fact(f, "CPU", "%.3f s", cpu);
	fact(f, "samples", "%.0f", (double)t->total);
	fact(f, "rate", "%.0f Hz", hz);
	size_t procs, threads;
	prof_count_tasks(p, &procs, &threads);
	fact(f, "processes", "%.0f", (double)procs);
	fact(f, "threads", "%.0f", (double)threads);
	fputs("</dl>\n<div class=\"quality\" id=\"quality\"><h2>Data quality</h2><ul>\n", f);
	quality(f, "samples lost", pct((int64_t)p->lost, t->total + (int64_t)p->lost), 1.0,
	        "(ring full or process gone before the drain)");
	quality(f, "truncated or [unknown] stacks", pct(t->truncated, t->total), 5.0,
	        "(the unwinder stopped outside any known module)");
	quality(f, "unsymbolized", pct(t->unsymbolized, t->total), 20.0,
	        "(leaf named module+0x...: install -dbgsym packages)");
	fputs("<li>engine <b>", f);
	html_esc(f, p->engine && *p->engine ? p->engine : "unknown");
	fprintf(f, "</b>, effective rate <b>%.0f</b> samples per CPU second (nominal %.0f Hz)"
	        "</li>\n", cpu > 0 ? (double)t->total / cpu : 0.0, hz);
	for (size_t i = 0; i < p->ncomments; i++) {
		fputs("<li class=\"note\">", f);
		html_esc(f, p->comments[i]);
		fputs("</li>\n", f);
	}
	fputs("</ul></div></header>\n", f);
}

/* With scripts blocked: the top functions and modules as tables. */
static void static_tables(FILE *f, const struct htree *t, const size_t *order)
{
	fputs("<noscript><p class=\"missing\">Scripts are off: the flame graph, charts and the "
	      "full table need them. The hottest functions:</p>\n<table class=\"grid\"><thead><tr>"
	      "<th>self</th><th>self%</th><th>cum</th><th>cum%</th><th>function</th>"
	      "<th>module</th></tr></thead><tbody>\n", f);
	for (size_t i = 0; i < t->nframes && i < 50; i++) {
		const struct hframe *fr = &t->frames[order[i]];
		fprintf(f, "<tr><td>%" PRId64 "</td><td>%.2f%%</td><td>%" PRId64 "</td><td>%.2f%%"
		        "</td><td>", fr->self, pct(fr->self, t->total), fr->cum, pct(fr->cum, t->total));
		html_esc(f, t->str.s[fr->name]);
		fputs("</td><td>", f);
		html_esc(f, t->str.s[fr->module]);
		fputs("</td></tr>\n", f);
	}
	fputs("</tbody></table></noscript>\n", f);
}

static void asset(FILE *f, const char *name)
{
	fputs(html_asset(name), f);
}

/* The page's interactive sections: empty until the script runs. */
static const char *const sections =
	"<nav><a href=\"#flame\">Flame graph</a><a href=\"#top\">Top functions</a>"
	"<a href=\"#modules\">Modules</a><a href=\"#functions\">All functions</a>"
	"<a href=\"#source\">Source</a></nav>\n"
	"<section id=\"flame\"><h2 id=\"flame-title\">Flame graph</h2>\n"
	"<div class=\"controls\"><label>process <select id=\"sel-proc\"></select></label>"
	"<label>thread <select id=\"sel-thread\"></select></label>"
	"<input id=\"search\" type=\"search\" placeholder=\"search (regex)\">"
	"<span id=\"search-result\"></span>"
	"<button id=\"reset\" type=\"button\">reset zoom</button>"
	"<label><input id=\"icicle\" type=\"checkbox\"> icicle</label></div>\n"
	"<div id=\"crumbs\"></div><div id=\"fg-wrap\"><canvas id=\"fg\"></canvas></div>"
	"<div id=\"tip\" hidden></div><p class=\"legend\" id=\"legend\"></p></section>\n"
	"<section id=\"top\"><h2>Top functions by self time</h2><div id=\"bars\"></div>\n";

int html_write(const struct html_in *in, FILE *f)
{
	struct htree t;
	htree_build(&t, in->p);
	size_t *order = htree_by_self(&t), nhot = 0;
	size_t *hot = prof_xrealloc(NULL, (size_t)in->nsource + 1, sizeof *hot);
	for (size_t i = 0; i < t.nframes && nhot < (size_t)in->nsource; i++)
		if (t.frames[order[i]].self > 0)
			hot[nhot++] = order[i];
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
	      "<title>profil: ", f);
	html_esc(f, in->p->command && *in->p->command ? in->p->command : in->file);
	fputs("</title>\n<style>\n", f);
	asset(f, "style.css");
	fputs("</style></head>\n<body>\n", f);
	header(f, in, &t);
	fputs(sections, f);
	static_tables(f, &t, order);
	fputs("</section>\n<section id=\"modules\"><h2>Modules</h2><div id=\"mods\"></div>"
	      "</section>\n<section id=\"functions\"><h2>All functions</h2>"
	      "<div id=\"table\"></div></section>\n", f);
	html_sources(in, &t, hot, nhot, f);
	fputs("<pre id=\"selftest\" hidden></pre>\n"
	      "<script type=\"application/json\" id=\"profil-data\">", f);
	html_json(f, &t, in, hot, nhot);
	fputs("</script>\n<script>\n\"use strict\";\n", f);
	asset(f, "util.js");
	asset(f, "flame.js");
	asset(f, "tables.js");
	asset(f, "main.js");
	asset(f, "selftest.js");
	fputs("</script>\n</body></html>\n", f);
	free(order), free(hot);
	htree_free(&t);
	if (ferror(f)) {
		fprintf(stderr, "profil report: error writing the HTML page\n");
		return -1;
	}
	return 0;
}
