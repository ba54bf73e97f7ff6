/*
 * fuzz-pprof.c - the pprof reader behind `profil report`, then the report
 * writers on whatever it accepted (issue 15).
 *
 * The input is the file, gzipped or not: pprof_read() must return a
 * profile or one error line, never crash, loop or allocate without bound
 * (libFuzzer's -rss_limit_mb and -malloc_limit_mb hold it to that; the
 * decompressed size is capped by PROFIL_MAX_INPUT as `profil report`'s
 * is by PPROF_MAX_BYTES).  A profile it accepts is one the writers must
 * cope with: flat text by function, module, thread, process and line, CSV,
 * the call tree and callers/callees, folded stacks and gmon.out, all
 * written to /dev/null.  Writers that run other programs or read source
 * files (--annotate, HTML) are left out: the fuzzer would spend its time
 * in objdump and the file system.
 */
#include "format/folded.h"
#include "format/gmon.h"
#include "format/pprof.h"
#include "model/profile.h"
#include "report/report.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	/* 16 MiB decompressed: a gzip bomb stops there, as at 1 GiB for real */
	setenv("PROFIL_MAX_INPUT", "16777216", 1);
	snprintf(path, sizeof path, "/dev/shm/fuzz-pprof.%d", (int)getpid());
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

static void writers(const struct profile *p)
{
	static const enum by bys[] = {BY_FUNCTION, BY_MODULE, BY_THREAD, BY_PROCESS, BY_LINE};
	struct ropts o = {.file = path, .pid = -1, .threshold = 1.0};
	for (size_t i = 0; i < sizeof bys / sizeof bys[0]; i++) {
		o.by = bys[i];
		o.fmt = FMT_TEXT;
		report_flat(p, &o, devnull, i == 0);
		o.fmt = FMT_CSV;
		report_flat(p, &o, devnull, 0);
	}
	o.by = BY_FUNCTION;
	o.fmt = FMT_TEXT;
	o.top = 3;
	report_flat(p, &o, devnull, 0);
	o.top = 0;
	o.tree = 1;
	o.threshold = 0;
	report_callgraph(p, &o, devnull);
	o.tree = 0;
	/* a function name the file itself provides, so the graph is walked */
	const char *fn = p->nfunctions ? p->functions[0].name : "main";
	o.callers = fn;
	report_callgraph(p, &o, devnull);
	o.callers = NULL;
	o.callees = fn;
	report_callgraph(p, &o, devnull);
	folded_write(p, devnull);
	gmon_write(p, NULL, devnull);
	report_header(p, path, devnull);
	fflush(devnull);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, size, 1, f) != 1)
		abort();
	fclose(f);
	struct profile *p = NULL;
	char err[768];
	if (pprof_read(path, &p, err, sizeof err) == 0) {
		/* The writers are linear in the frames (the suite's deep.pprof
		 * case checks a 100000-frame stack): past a few thousand, a run
		 * would only cost time the fuzzer can use better. */
		size_t frames = 0;
		for (size_t i = 0; i < p->nsamples; i++)
			frames += p->samples[i].nlocs;
		if (frames <= 4096)
			writers(p);
		prof_free(p);
	} else if (!err[0] || strchr(err, '\n')) {
		abort(); /* an error is one line, and there is one */
	}
	unlink(path);
	return 0;
}
