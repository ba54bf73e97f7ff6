/*
 * report.h - `profil report [options] [FILE]`: reads a pprof profile and
 * prints reports (flat, by module/thread/process, per line, annotated
 * source, call graph) or converts it (csv, pprof, gmon, folded).
 */
#ifndef PROFIL_CLI_REPORT_H
#define PROFIL_CLI_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "../model/profile.h"

/* argv[0] is "report"; returns profil's exit status. */
int cmd_report(int argc, char **argv);

enum by { BY_FUNCTION, BY_MODULE, BY_THREAD, BY_PROCESS, BY_COMMAND, BY_LINE };
enum fmt { FMT_TEXT, FMT_CSV, FMT_PPROF, FMT_GMON, FMT_FOLDED, FMT_HTML };

struct ropts {
	const char *file;      /* input */
	const char *output;    /* -o; NULL: standard output */
	enum by by;
	enum fmt fmt;
	const char *annotate;  /* --annotate FUNC */
	const char *callers, *callees; /* --callers / --callees FUNC */
	int tree;              /* --tree */
	double threshold;      /* --threshold percent for --tree */
	long top;              /* --top N; 0: all */
	long pid;              /* --pid P; -1: all */
	const char *comm;      /* --comm NAME */
	const char *module;    /* --module M (gmon) */
	const char *diff;      /* --diff BASE: compare BASE (baseline) with file */
};

/* options.c: 0, or -1 after one line on stderr (2 is the exit status). */
int report_options(int argc, char **argv, struct ropts *o);

/* Writers of one report onto f (the caller handles the file).  Each
 * returns 0, or -1 after one line on stderr. */
int report_flat(const struct profile *p, const struct ropts *o, FILE *f, int tty);
int report_annotate(const struct profile *p, const struct ropts *o, FILE *f);
int report_callgraph(const struct profile *p, const struct ropts *o, FILE *f);

/* disasm.c: objdump's disassembly of fn in m's file, with the samples at
 * the process addresses addr[] (counts count[]) beside each instruction. */
int annotate_disassembly(const struct profile *p, const struct prof_function *fn,
                         const struct prof_mapping *m, const uint64_t *addr,
                         const int64_t *count, size_t n, FILE *f);

/* diff.c: --diff: the largest changes of self and cum share from base
 * to p, as text, or the differential HTML page with --format html. */
int report_diff(const struct profile *base, const struct profile *p, const struct ropts *o,
                FILE *f);
/* The HTML page (cli/format/html.h) of p, with base for --diff. */
int report_html(const struct profile *base, const struct profile *p, const struct ropts *o,
                FILE *f);

/* The header line: samples, CPU seconds, rate, processes, threads, lost. */
void report_header(const struct profile *p, const char *file, FILE *f);

#endif
