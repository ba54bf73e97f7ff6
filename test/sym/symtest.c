/*
 * symtest.c - runs the symbolizer's tests (symcases.c), each in a child
 * process so that one failing check does not stop the others.
 *
 *   symtest            every test
 *   symtest NAME...    only those
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void run_prog(const char *prog, struct run *r)
{
	char cmd[1024], line[600], what[32];
	snprintf(cmd, sizeof cmd, "%s/%s", SYM_BIN, prog);
	FILE *f = popen(cmd, "r");
	CHECK(f != NULL);
	memset(r, 0, sizeof *r);
	while (fgets(line, sizeof line, f)) {
		unsigned long v;
		if (strncmp(line, "map ", 4) == 0 && r->nmaps < 64)
			snprintf(r->maps[r->nmaps++], sizeof r->maps[0], "%s", line + 4);
		else if (sscanf(line, "pid %lu", &v) == 1)
			r->pid = (uint32_t)v;
		else if (sscanf(line, "%*s %31s %lx", what, &v) == 2) {
			uint64_t *dst = !strcmp(what, "plain") ? &r->plain : !strcmp(what, "inline")
				? &r->inlined : !strcmp(what, "lib") ? &r->lib : !strcmp(what, "cxx")
				? &r->cxx : !strcmp(what, "libc") ? &r->libc : !strcmp(what, "vdso")
				? &r->vdso : NULL;
			if (dst)
				*dst = v;
		}
	}
	CHECK(pclose(f) == 0);
	CHECK(r->pid != 0 && r->nmaps > 0 && r->plain != 0);
}

long file_size(const char *path, ino_t *ino)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	if (ino)
		*ino = st.st_ino;
	return (long)st.st_size;
}

struct sym_image *image_of(struct sym_cache *c, const char *path)
{
	char id[128];
	file_build_id(path, id, sizeof id);
	struct sym_image *im = sym_cache_get(c, path, id);
	CHECK(im != NULL);
	return im;
}

void file_build_id(const char *path, char *buf, size_t size)
{
	buf[0] = '\0';
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	const unsigned char *id;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, (const void **)&id) : -1;
	for (ssize_t i = 0; i < n && (size_t)(2 * i + 2) < size; i++)
		sprintf(buf + 2 * i, "%02x", id[i]);
	if (elf)
		elf_end(elf);
	close(fd);
}

void file_kept_key(const char *path, char *buf, size_t size)
{
	char id[128];
	file_build_id(path, id, sizeof id);
	unsigned long long bytes = 0;
	int fd = open(path, O_RDONLY);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t shstrndx;
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;
			const char *name;
			if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
			    strcmp(name, ".debug_info") == 0)
				bytes = sh.sh_size; /* the test's programs: not compressed */
		}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	snprintf(buf, size, "%s-%llx", id, bytes);
}

struct profile *run_profile(const struct run *r, const char *from, const char *as_path)
{
	struct profile *p = prof_new();
	for (size_t i = 0; i < r->nmaps; i++) {
		unsigned long lo, hi, off;
		char perms[8], path[512] = "", id[128];
		if (sscanf(r->maps[i], "%lx-%lx %7s %lx %*s %*s %511[^\n]", &lo, &hi, perms, &off,
		           path) < 4 || !path[0] || (path[0] == '[' && strcmp(path, "[vdso]")))
			continue;
		size_t n = strlen(path), k = from ? strlen(from) : 0;
		const char *use = from && n >= k && !strcmp(path + n - k, from) ? as_path : path;
		file_build_id(path, id, sizeof id); /* as recorded: the original's */
		struct prof_mapping m = {.start = lo, .limit = hi, .file_offset = off,
		                         .path = (char *)use, .build_id = id, .pid = r->pid};
		prof_add_mapping(p, &m);
	}
	return p;
}

uint64_t add_loc(struct profile *p, uint64_t address)
{
	uint64_t mid = 0;
	for (size_t i = 0; i < p->nmappings; i++)
		if (address >= p->mappings[i].start && address < p->mappings[i].limit)
			mid = i + 1;
	return prof_intern_location(p, mid, address);
}

void symbolize(struct profile *p, const struct sym_options *opt)
{
	char err[256];
	if (symbolize_profile(p, opt, err, sizeof err) != 0) {
		fprintf(stderr, "symbolize_profile: %s\n", err);
		exit(1);
	}
}

const char *loc_name(const struct profile *p, uint64_t loc)
{
	const struct prof_location *l = &p->locations[loc - 1];
	CHECK(l->nlines > 0);
	return p->functions[l->lines[0].function_id - 1].name;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);
	return n >= k && strcmp(s + n - k, tail) == 0;
}

void expect_chain(const struct profile *p, uint64_t loc, size_t n, const char *const *names,
                  const long *lines, const char *file)
{
	const struct prof_location *l = &p->locations[loc - 1];
	for (size_t i = 0; i < l->nlines; i++) {
		const struct prof_function *f = &p->functions[l->lines[i].function_id - 1];
		fprintf(stderr, "  [%zu] %s (%s) %s:%lld\n", i, f->name, f->system_name, f->filename,
		        (long long)l->lines[i].line);
	}
	CHECK(l->nlines == n);
	for (size_t i = 0; i < n; i++) {
		const struct prof_function *f = &p->functions[l->lines[i].function_id - 1];
		CHECK(strcmp(f->name, names[i]) == 0);
		CHECK(lines[i] < 0 || l->lines[i].line == lines[i]);
		CHECK(file[0] ? ends_with(f->filename, file) : f->filename[0] == '\0');
	}
}

long marked_line(const char *source, const char *mark)
{
	char path[1024], line[1024], tag[64];
	snprintf(path, sizeof path, "%s/%s", SYM_SRCDIR, source);
	snprintf(tag, sizeof tag, "/* %s */", mark);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	for (long n = 1; fgets(line, sizeof line, f); n++)
		if (strstr(line, tag)) {
			fclose(f);
			return n;
		}
	fclose(f);
	CHECK(!"marker not found");
	return 0;
}

/* 1 passed, 0 failed, -1 skipped (the case exited SYM_SKIP, having
 * said why). */
static int run_case(const struct symcase *c)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		c->fn();
		exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	int skip = WIFEXITED(status) && WEXITSTATUS(status) == SYM_SKIP;
	printf("%s %s\n", ok ? "ok  " : skip ? "skip" : "FAIL", c->name);
	return skip ? -1 : ok;
}

int main(int argc, char **argv)
{
	int failed = 0, passed = 0, skipped = 0;
	for (const struct symcase *c = symcases; c->name; c++) {
		int wanted = argc < 2;
		for (int i = 1; i < argc; i++)
			wanted |= strcmp(argv[i], c->name) == 0;
		if (wanted) {
			int r = run_case(c);
			r > 0 ? passed++ : r == 0 ? failed++ : skipped++;
		}
	}
	printf("symbolizer: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed != 0;
}
