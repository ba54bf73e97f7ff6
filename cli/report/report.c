/*
 * report.c - `profil report`: read, filter, write one report.  The output
 * goes through out.h, so a failed report leaves no partial file.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../format/folded.h"
#include "../format/gmon.h"
#include "../format/out.h"
#include "../format/pprof.h"

static int keep(const struct prof_sample *s, void *ctx)
{
	const struct ropts *o = ctx;
	return (o->pid < 0 || s->pid == (uint32_t)o->pid) && (!o->comm || !strcmp(s->comm, o->comm));
}

/* After a filter: only the processes that still have samples, so the
 * header and a pprof written from the filtered profile agree. */
static void keep_sampled_processes(struct profile *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nprocesses; i++) {
		int sampled = 0;
		for (size_t k = 0; k < p->nsamples && !sampled; k++)
			sampled = p->samples[k].pid == p->processes[i].pid;
		if (sampled)
			p->processes[n++] = p->processes[i];
		else
			free(p->processes[i].cmdline);
	}
	p->nprocesses = n;
}

/* Writes the chosen text report onto the output; 0 or -1.  base: the
 * --diff baseline, or NULL. */
static int write_report(const struct profile *base, const struct profile *p,
                        const struct ropts *o)
{
	char err[512];
	struct outfile *out = out_open(o->output, err, sizeof err);
	if (!out) {
		fprintf(stderr, "profil report: %s\n", err);
		return -1;
	}
	FILE *f = out_fp(out);
	int tty = !o->output && isatty(STDOUT_FILENO);
	int rc;
	if (base)
		rc = report_diff(base, p, o, f);
	else if (o->fmt == FMT_HTML)
		rc = report_html(NULL, p, o, f);
	else if (o->annotate)
		rc = report_annotate(p, o, f);
	else if (o->callers || o->callees || o->tree)
		rc = report_callgraph(p, o, f);
	else if (o->fmt == FMT_FOLDED)
		rc = folded_write(p, f);
	else if (o->fmt == FMT_GMON)
		rc = gmon_write(p, o->module, f);
	else
		rc = report_flat(p, o, f, tty);
	if (rc != 0) {
		out_abort(out);
		return -1;
	}
	if (out_commit(out, err, sizeof err) != 0) {
		fprintf(stderr, "profil report: %s\n", err);
		return -1;
	}
	return 0;
}

/* --diff: the baseline, filtered as the profile is. */
static int diff_read(const struct ropts *o, struct profile **base)
{
	char err[768];
	if (pprof_read(o->diff, base, err, sizeof err) != 0) {
		fprintf(stderr, "profil report: %s\n", err);
		return -1;
	}
	if (o->pid >= 0 || o->comm) {
		prof_keep_samples(*base, keep, (void *)o);
		keep_sampled_processes(*base);
	}
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct ropts o;
	if (report_options(argc, argv, &o) != 0)
		return 2;
	char err[768];
	struct profile *p;
	if (pprof_read(o.file, &p, err, sizeof err) != 0) {
		fprintf(stderr, "profil report: %s\n", err);
		return 1;
	}
	if (o.pid >= 0 || o.comm) {
		prof_keep_samples(p, keep, &o);
		if (p->nsamples == 0) {
			if (o.comm)
				fprintf(stderr, "profil report: no samples of command %s in %s\n", o.comm, o.file);
			else
				fprintf(stderr, "profil report: no samples of pid %ld in %s\n", o.pid, o.file);
			prof_free(p);
			return 1;
		}
	}
	if (o.pid >= 0 || o.comm)
		keep_sampled_processes(p);
	if (o.fmt == FMT_PPROF && !o.output && isatty(STDOUT_FILENO)) {
		fputs("profil report: not writing a binary profile to a terminal; use -o FILE\n", stderr);
		prof_free(p);
		return 2;
	}
	struct profile *base = NULL;
	if (o.diff && diff_read(&o, &base) != 0) {
		prof_free(p);
		return 1;
	}
	int rc = o.fmt == FMT_PPROF ? pprof_write(p, o.output ? o.output : "-")
	                            : write_report(base, p, &o);
	prof_free(p);
	if (base)
		prof_free(base);
	return rc == 0 ? 0 : 1;
}
