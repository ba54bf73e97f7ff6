/*
 * options.c - `profil report`'s command line.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void usage(FILE *f)
{
	fputs("usage: profil report [options] [FILE]   (FILE: profil.pprof)\n"
	      "  --by function|module|thread|process|command\n"
	      "                        rows of the flat profile\n"
	      "  --lines               per source line, with the inline chain\n"
	      "  --annotate FUNC       FUNC's source (or disassembly) with samples per line\n"
	      "  --callers FUNC, --callees FUNC, --tree [--threshold PCT]   call graph\n"
	      "  --top N               the N hottest rows only\n"
	      "  --pid P, --comm NAME  only samples of that process / command\n"
	      "  --format text|csv|pprof|gmon|folded|html, -o FILE, --module M (gmon)\n"
	      "  --diff BASE           changes from profile BASE to FILE (text or html)\n",
	      f);
}

static int bad(const char *what, const char *arg)
{
	fprintf(stderr, "profil report: %s '%s' (see profil report --help)\n", what, arg);
	return -1;
}

static int number(const char *s, long min, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min)
		return -1;
	*out = v;
	return 0;
}

static int pick(const char *arg, const char *const *names, int n, int *out)
{
	for (int i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0)
			return *out = i, 0;
	return -1;
}

enum { O_BY = 256, O_LINES, O_ANNOTATE, O_CALLERS, O_CALLEES, O_TREE, O_THRESHOLD, O_TOP,
       O_PID, O_COMM, O_FORMAT, O_MODULE, O_HELP, O_DIFF };

static const struct option longopts[] = {
	{"by", required_argument, 0, O_BY}, {"lines", no_argument, 0, O_LINES},
	{"annotate", required_argument, 0, O_ANNOTATE},
	{"callers", required_argument, 0, O_CALLERS}, {"callees", required_argument, 0, O_CALLEES},
	{"tree", no_argument, 0, O_TREE}, {"threshold", required_argument, 0, O_THRESHOLD},
	{"top", required_argument, 0, O_TOP}, {"pid", required_argument, 0, O_PID},
	{"comm", required_argument, 0, O_COMM}, {"format", required_argument, 0, O_FORMAT},
	{"module", required_argument, 0, O_MODULE}, {"output", required_argument, 0, 'o'},
	{"help", no_argument, 0, O_HELP}, {"diff", required_argument, 0, O_DIFF}, {0, 0, 0, 0},
};

static int one(int c, const char *arg, struct ropts *o)
{
	static const char *const bys[] = {"function", "module", "thread", "process", "command"};
	static const char *const fmts[] = {"text", "csv", "pprof", "gmon", "folded", "html"};
	int v;
	char *end;
	switch (c) {
	case O_BY:
		if (pick(arg, bys, 5, &v) != 0)
			return bad("--by takes function, module, thread, process or command, not", arg);
		o->by = (enum by)v;
		return 0;
	case O_LINES: o->by = BY_LINE; return 0;
	case O_ANNOTATE: o->annotate = arg; return 0;
	case O_CALLERS: o->callers = arg; return 0;
	case O_CALLEES: o->callees = arg; return 0;
	case O_TREE: o->tree = 1; return 0;
	case O_THRESHOLD:
		o->threshold = strtod(arg, &end);
		return *end || end == arg || o->threshold < 0 || o->threshold > 100
		       ? bad("--threshold takes a percentage, not", arg) : 0;
	case O_TOP: return number(arg, 1, &o->top) ? bad("--top takes a positive number, not", arg) : 0;
	case O_PID: return number(arg, 0, &o->pid) ? bad("--pid takes a process id, not", arg) : 0;
	case O_COMM: o->comm = arg; return 0;
	case O_FORMAT:
		if (pick(arg, fmts, 6, &v) != 0)
			return bad("--format takes text, csv, pprof, gmon, folded or html, not", arg);
		o->fmt = (enum fmt)v;
		return 0;
	case O_MODULE: o->module = arg; return 0;
	case O_DIFF: o->diff = arg; return 0;
	case 'o': o->output = arg; return 0;
	case O_HELP: usage(stdout); exit(0);
	default: return -1; /* getopt said what */
	}
}

int report_options(int argc, char **argv, struct ropts *o)
{
	*o = (struct ropts){.file = "profil.pprof", .pid = -1, .threshold = 1.0};
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "o:", longopts, NULL)) != -1) {
		if (c == '?' || c == ':') /* getopt leaves the word it choked on before optind */
			return bad("unknown option or missing argument:", argv[optind - 1]);
		if (one(c, optarg, o) != 0)
			return -1;
	}
	if (optind < argc)
		o->file = argv[optind++];
	if (optind < argc)
		return bad("more than one input file:", argv[optind]);
	if (o->diff && o->fmt != FMT_TEXT && o->fmt != FMT_HTML) {
		fprintf(stderr, "profil report: --diff writes text or html only\n");
		return -1;
	}
	if (o->fmt == FMT_GMON && !o->output)
		o->output = "gmon.out";
	return 0;
}
