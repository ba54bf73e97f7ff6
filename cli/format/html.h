/*
 * html.h - `profil report --format html`: one self-contained page (no
 * network, no external files) with the header and a data-quality box,
 * a flame graph, charts, a table of all functions, the source of the
 * hottest functions and, with a baseline, a differential flame graph.
 *
 * The page's static parts (header, quality, top functions, source) are
 * written as HTML and read with scripts blocked; the interactive parts
 * are drawn by the inline script from a JSON copy of the call tree.
 */
#ifndef PROFIL_CLI_HTML_H
#define PROFIL_CLI_HTML_H

#include <stdio.h>

#include "../model/profile.h"

/* Disassembly of fn with the samples at addr[] (counts count[]) beside
 * each instruction, as cli/report's annotate_disassembly writes it: the
 * format layer does not call the report layer itself. */
typedef int html_disasm_fn(const struct profile *p, const struct prof_function *fn,
                           const struct prof_mapping *m, const uint64_t *addr,
                           const int64_t *count, size_t n, FILE *f);

struct html_in {
	const struct profile *p;     /* the profile shown (NEW with a baseline) */
	const char *file;            /* its file name, for the title */
	const struct profile *base;  /* --diff: the baseline, or NULL */
	const char *base_file;
	html_disasm_fn *disasm;      /* NULL: no disassembly */
	int nsource;                 /* source views for this many hottest functions */
};

/* Writes the page onto f; 0, or -1 after one line on stderr. */
int html_write(const struct html_in *in, FILE *f);

#endif
