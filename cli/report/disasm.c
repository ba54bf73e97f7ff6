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

/* objdump's output for argv, read line by line into f with counts. */
static int run(char *const argv[], const uint64_t *fa, const int64_t *count, size_t n,
               int64_t total, FILE *f, int *lines)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]), close(fd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	FILE *in = fdopen(fd[0], "r");
	char *line = NULL;
	size_t cap = 0;
	*lines = 0;
	while (in && getline(&line, &cap, in) >= 0) {
		char *end;
		uint64_t a = strtoull(line, &end, 16);
		int64_t c = 0;
		if (end != line && *end == ':') {
			for (size_t i = 0; i < n; i++)
				c += fa[i] == a ? count[i] : 0;
			(*lines)++;
		}
		if (c)
			fprintf(f, "%8" PRId64 " %6.2f%% %s", c, 100.0 * (double)c / (double)total, line);
		else
			fprintf(f, "%8s %7s %s", "", "", line);
	}
	free(line);
	if (in)
		fclose(in);
	else
		close(fd[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

int annotate_disassembly(const struct profile *p, const struct prof_function *fn,
                         const struct prof_mapping *m, const uint64_t *addr,
                         const int64_t *count, size_t n, FILE *f)
{
	uint64_t bias, lo = UINT64_MAX, hi = 0;
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
	char *sym, *start, *stop;
	if (asprintf(&sym, "--disassemble=%s", fn->system_name) < 0 ||
	    asprintf(&start, "--start-address=0x%" PRIx64, lo) < 0 ||
	    asprintf(&stop, "--stop-address=0x%" PRIx64, hi + 16) < 0)
		prof_oom();
	int64_t total = prof_total(p);
	fflush(f);
	char *by_name[] = {"objdump", "-d", "--no-show-raw-insn", sym, m->path, NULL};
	char *by_range[] = {"objdump", "-d", "--no-show-raw-insn", start, stop, m->path, NULL};
	int lines = 0;
	int rc = run(by_name, fa, count, n, total, f, &lines);
	if (rc == 0 && lines == 0) /* no such symbol (stripped): the sampled range */
		rc = run(by_range, fa, count, n, total, f, &lines);
	if (rc != 0 || lines == 0)
		fprintf(stderr, "profil report: objdump could not disassemble %s in %s\n", fn->name,
		        m->path);
	free(fa), free(sym), free(start), free(stop);
	return rc == 0 && lines ? 0 : -1;
}
