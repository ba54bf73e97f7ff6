/*
 * disasm.c - `--annotate` without source: objdump's disassembly of the
 * function, each instruction with the samples at its address.  objdump
 * runs without a shell (the path is the profile's, not to be trusted).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../format/elfaddr.h"
#include "report.h"

/* objdump's output for argv, as lines. */
static char **objdump(char *const argv[], size_t *nlines)
{
	int fd[2];
	char **v = NULL;
	*nlines = 0;
	if (pipe(fd) != 0)
		return NULL;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]), close(fd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	FILE *in = pid > 0 ? fdopen(fd[0], "r") : NULL;
	char *line = NULL;
	size_t cap = 0, vcap = 0;
	while (in && getline(&line, &cap, in) >= 0) {
		if (*nlines == vcap) /* doubling: a big function has 10^5 lines */
			v = prof_xrealloc(v, vcap = vcap ? 2 * vcap : 256, sizeof *v);
		v[(*nlines)++] = prof_xstrdup(line);
	}
	free(line);
	in ? fclose(in) : close(fd[0]);
	int st = 0;
	if (pid > 0)
		waitpid(pid, &st, 0);
	return v;
}

/* Instruction address of an objdump line ("  401136:\t..."), or 0. */
static uint64_t insn_addr(const char *line)
{
	char *end;
	uint64_t a = strtoull(line, &end, 16);
	return end != line && *end == ':' && (line[0] == ' ' || line[0] == '\t') ? a : 0;
}

/* Prints the function's lines: each instruction with the samples whose
 * address falls in it (from its address up to the next one's).  Returns
 * the number of instructions. */
static size_t print(char **v, size_t nv, const uint64_t *fa, const int64_t *count, size_t n,
                    int64_t total, FILE *f)
{
	size_t insns = 0;
	for (size_t i = 0; i < nv; i++) {
		uint64_t a = insn_addr(v[i]), next = UINT64_MAX;
		if (!a && !strstr(v[i], ">:"))
			continue; /* section headers and blank lines */
		for (size_t j = i + 1; a && j < nv && next == UINT64_MAX; j++)
			next = insn_addr(v[j]) ? insn_addr(v[j]) : strstr(v[j], ">:") ? a + 16 : UINT64_MAX;
		int64_t c = 0;
		for (size_t k = 0; a && k < n; k++)
			c += fa[k] >= a && fa[k] < (next == UINT64_MAX ? a + 16 : next) ? count[k] : 0;
		insns += a != 0;
		if (c)
			fprintf(f, "%8" PRId64 " %6.2f%% %s", c, 100.0 * (double)c / (double)total, v[i]);
		else
			fprintf(f, "%8s %7s %s", "", "", v[i]);
	}
	return insns;
}

/* The widest range disassembled when no symbol bounds the function: an
 * inlined function's samples lie all over its callers (Py_DECREF's over
 * 500 KiB of libpython: 10^5 lines, minutes of the HTML report under
 * ASan, cli_html_14 killed at 120 s in CI). */
#define RANGE_MAX (16 * 1024)

/* Narrows [*lo, *hi] to RANGE_MAX around the hottest address when it is
 * wider; returns the width it had in KiB, or 0 if left alone. */
static int narrow(const uint64_t *fa, const int64_t *count, size_t n, uint64_t *lo,
                  uint64_t *hi)
{
	if (*hi - *lo <= RANGE_MAX)
		return 0;
	int width = (int)((*hi - *lo) / 1024);
	size_t top = 0;
	for (size_t k = 1; k < n; k++)
		top = count[k] > count[top] ? k : top;
	uint64_t from = fa[top] > *lo + RANGE_MAX / 2 ? fa[top] - RANGE_MAX / 2 : *lo;
	*lo = from;
	*hi = from + RANGE_MAX;
	return width;
}

static void free_lines(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int annotate_disassembly(const struct profile *p, const struct prof_function *fn,
                         const struct prof_mapping *m, const uint64_t *addr,
                         const int64_t *count, size_t n, FILE *f)
{
	uint64_t bias, lo = UINT64_MAX, hi = 0;
	if (prof_mapping_is_jit_map(m)) {
		fprintf(stderr, "profil report: %s is code a JIT made at run time (named by %s): "
		        "no file holds it to disassemble\n", fn->name, m->path);
		return -1;
	}
	if (elf_bias(m, &bias) != 0) {
		fprintf(stderr, "profil report: cannot read %s to disassemble %s\n", m->path, fn->name);
		return -1;
	}
	uint64_t *fa = prof_xrealloc(NULL, n, sizeof *fa);
	for (size_t i = 0; i < n; i++) {
		fa[i] = addr[i] - bias;
		lo = fa[i] < lo ? fa[i] : lo;
		hi = fa[i] > hi ? fa[i] : hi;
	}
	char *sym, *start = NULL, *stop = NULL;
	if (asprintf(&sym, "--disassemble=%s", fn->system_name) < 0)
		prof_oom();
	char *by_name[] = {"objdump", "-d", "--no-show-raw-insn", sym, m->path, NULL};
	size_t nv;
	char **v = objdump(by_name, &nv);
	size_t insns = 0;
	for (size_t i = 0; i < nv; i++)
		insns += insn_addr(v[i]) != 0;
	int narrowed = 0;
	if (insns == 0) { /* no such symbol (stripped): the sampled range */
		free_lines(v, nv);
		narrowed = narrow(fa, count, n, &lo, &hi);
		if (asprintf(&start, "--start-address=0x%" PRIx64, lo) < 0 ||
		    asprintf(&stop, "--stop-address=0x%" PRIx64, hi + 16) < 0)
			prof_oom();
		char *by_range[] = {"objdump", "-d", "--no-show-raw-insn", start, stop, m->path,
		                    NULL};
		v = objdump(by_range, &nv);
	}
	fprintf(f, "# %s (%s): disassembly, samples per instruction\n", fn->name, m->path);
	if (narrowed)
		fprintf(f, "# its samples spread over %d KiB (the instances of an inlined "
		        "function): the %d KiB around the hottest address\n", narrowed,
		        RANGE_MAX / 1024);
	insns = print(v, nv, fa, count, n, prof_total(p), f);
	free_lines(v, nv);
	if (insns == 0)
		fprintf(stderr, "profil report: objdump could not disassemble %s in %s\n", fn->name,
		        m->path);
	free(fa), free(sym), free(start), free(stop);
	return insns ? 0 : -1;
}
