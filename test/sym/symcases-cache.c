/*
 * symcases-cache.c - separate debuginfo with compressed sections (as
 * Debian's debug packages ship it) is kept decompressed in the cache
 * directory by build-id (cli/symbol/zcache.c): the names are the same
 * with and without it, the copy is what later runs (and the first, once
 * it has made it) read, and a damaged copy is rebuilt rather than
 * trusted.
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void sh(const char *cmd)
{
	CHECK(system(cmd) == 0);
}

/* 1: an ELF file with that many sections and none compressed; 0 not. */
static int decompressed_elf(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	int ok = elf && elf_kind(elf) == ELF_K_ELF, sections = 0;
	for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr s;
		ok = gelf_getshdr(scn, &s) && !(s.sh_flags & SHF_COMPRESSED);
		sections++;
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return ok && sections > 10;
}

/* symprog.stripped's inline chain, with its debuginfo in root (or not). */
static void expect_names(const struct run *r, const char *root, const char *cache)
{
	char stripped[512];
	snprintf(stripped, sizeof stripped, "%s/symprog.stripped", SYM_BIN);
	const char *dirs[] = {root, NULL};
	struct sym_options opt = {.debug_dirs = dirs, .no_default_debug_dir = 1,
	                          .debug_cache = cache};
	struct profile *p = run_profile(r, "/symprog", stripped);
	uint64_t loc = add_loc(p, r->inlined);
	symbolize(p, &opt);
	const char *names[] = {"inner", "middle", "outer"};
	long lines[] = {marked_line("symprog.c", "@inner"), -1, -1};
	expect_chain(p, loc, 3, names, lines, "test/sym/symprog.c");
	prof_free(p);
}

/* symprog's compressed debuginfo (its build-id into id) under root's
 * .build-id directory, root and cache emptied first; the copy's path
 * in cache into copy. */
static void place_zdebug(const char *root, const char *cache, char *id, size_t idsize,
                         char *copy, size_t copysize)
{
	char zdebug[512], cmd[2048];
	snprintf(zdebug, sizeof zdebug, "%s/symprog.zdebug", SYM_BIN);
	file_build_id(zdebug, id, idsize);
	CHECK(id[0] && !decompressed_elf(zdebug)); /* it is compressed */
	snprintf(copy, copysize, "%s/%s.debug", cache, id);
	snprintf(cmd, sizeof cmd, "rm -rf %s %s && mkdir -p %s/.build-id/%.2s && "
	         "cp %s %s/.build-id/%.2s/%s.debug", root, cache, root, id, zdebug, root, id,
	         id + 2);
	sh(cmd);
}

void sym_debug_cache(void)
{
	struct run r;
	char root[256], cache[256], id[128], cmd[2048], copy[600];
	run_prog("symprog", &r);
	snprintf(root, sizeof root, "/tmp/symtest-root-%d", (int)getpid());
	snprintf(cache, sizeof cache, "/tmp/symtest-cache-%d/deeper", (int)getpid());
	place_zdebug(root, cache, id, sizeof id, copy, sizeof copy);

	/* no cache asked for: none made */
	expect_names(&r, root, NULL);
	CHECK(access(copy, F_OK) != 0);

	/* the first run makes the copy (and its directories) */
	expect_names(&r, root, cache);
	CHECK(decompressed_elf(copy));

	/* later runs read the copy: with the original gone, still named */
	snprintf(cmd, sizeof cmd, "mv %s %s.away", root, root);
	sh(cmd);
	expect_names(&r, root, cache);
	snprintf(cmd, sizeof cmd, "mv %s.away %s", root, root);
	sh(cmd);

	/* a damaged copy is not trusted: rebuilt from the original */
	snprintf(cmd, sizeof cmd, "truncate -s 3000 %s", copy);
	sh(cmd);
	CHECK(!decompressed_elf(copy));
	expect_names(&r, root, cache);
	CHECK(decompressed_elf(copy));

	/* a copy with another build-id (a stale file under this name) too */
	snprintf(cmd, sizeof cmd, "cp %s/libsymlib.so %s", SYM_BIN, copy);
	sh(cmd);
	expect_names(&r, root, cache);
	char again[128];
	file_build_id(copy, again, sizeof again);
	CHECK(strcmp(again, id) == 0 && decompressed_elf(copy));

	/* an unwritable cache changes nothing but the time */
	snprintf(cmd, sizeof cmd, "rm -rf /tmp/symtest-cache-%d && touch /tmp/symtest-cache-%d",
	         (int)getpid(), (int)getpid());
	sh(cmd);
	expect_names(&r, root, cache);

	snprintf(cmd, sizeof cmd, "rm -rf %s /tmp/symtest-cache-%d", root, (int)getpid());
	sh(cmd);
}

/* Whether this process has libdebuginfod mapped. */
static int debuginfod_mapped(void)
{
	char line[1024];
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof line, f))
		found |= strstr(line, "/libdebuginfod") != NULL;
	if (f)
		fclose(f);
	return found;
}

/* In a child of its own (libdwfl decides once per process, under
 * pthread_once, whether it has the library): symbolize an address of a
 * stripped file whose debuginfo is nowhere, with DEBUGINFOD_URLS set to
 * urls (NULL: unset); whether libdebuginfod was then mapped. */
static int loads_debuginfod(const struct run *r, const char *urls, const char *root,
                            const char *cachep)
{
	fflush(NULL);
	pid_t kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		char stripped[512];
		snprintf(stripped, sizeof stripped, "%s/symprog.stripped", SYM_BIN);
		if (urls)
			setenv("DEBUGINFOD_URLS", urls, 1);
		else
			unsetenv("DEBUGINFOD_URLS");
		setenv("DEBUGINFOD_CACHE_PATH", cachep, 1);
		setenv("DEBUGINFOD_TIMEOUT", "2", 1);
		const char *dirs[] = {root, NULL};
		struct sym_options opt = {.debug_dirs = dirs, .no_default_debug_dir = 1};
		struct profile *p = run_profile(r, "/symprog", stripped);
		uint64_t loc = add_loc(p, r->plain);
		symbolize(p, &opt);
		int named = p->locations[loc - 1].nlines > 0; /* .dynsym or file+0x */
		prof_free(p);
		_exit(!named ? 2 : debuginfod_mapped() ? 1 : 0);
	}
	int status;
	CHECK(waitpid(kid, &status, 0) == kid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) < 2);
	return WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

/* libdwfl's search for debuginfo ends with debuginfod, whose library
 * (with libcurl's thirty dependencies) is loaded only when
 * DEBUGINFOD_URLS names a server (cli/symbol/nodebuginfod.c); when it
 * does, the library is used as before. */
void sym_debuginfod_only_with_servers(void)
{
	struct run r;
	char root[256], cmd[1024], cachep[256];
	run_prog("symprog", &r);
	snprintf(root, sizeof root, "/tmp/symtest-empty-%d", (int)getpid());
	snprintf(cachep, sizeof cachep, "/tmp/symtest-dcache-%d", (int)getpid());
	snprintf(cmd, sizeof cmd, "rm -rf %s %s && mkdir -p %s", root, cachep, root);
	sh(cmd);
	CHECK(!loads_debuginfod(&r, NULL, root, cachep));
	CHECK(!loads_debuginfod(&r, "", root, cachep));
	CHECK(!loads_debuginfod(&r, " \t", root, cachep));
	/* a server that refuses at once: loaded, asked, nothing found */
	if (access("/usr/lib/x86_64-linux-gnu/libdebuginfod.so.1", F_OK) == 0)
		CHECK(loads_debuginfod(&r, "http://127.0.0.1:9", root, cachep));
	snprintf(cmd, sizeof cmd, "rm -rf %s %s", root, cachep);
	sh(cmd);
}

/* Every location's chain as text: names, files and lines. */
static void chains(const struct profile *p, char *out, size_t cap)
{
	size_t used = 0;
	out[0] = '\0';
	for (size_t i = 0; i < p->nlocations; i++)
		for (size_t k = 0; k < p->locations[i].nlines; k++) {
			const struct prof_line *l = &p->locations[i].lines[k];
			const struct prof_function *f = &p->functions[l->function_id - 1];
			int n = snprintf(out + used, cap - used, "%zu.%zu %s %s:%lld\n", i, k, f->name,
			                 f->filename, (long long)l->line);
			CHECK(n > 0 && (size_t)n < cap - used);
			used += (size_t)n;
		}
}

/* symprog's and libsymlib's probes, symbolized with cache (or none). */
static void symbolize_probes(const struct run *r, const char *cache, char *out, size_t cap)
{
	struct sym_options opt = {.no_default_debug_dir = 1, .debug_cache = cache};
	struct profile *p = run_profile(r, NULL, NULL);
	add_loc(p, r->plain);
	add_loc(p, r->inlined);
	add_loc(p, r->lib);
	symbolize(p, &opt);
	chains(p, out, cap);
	prof_free(p);
}

/* The CU ranges kept by build-id and DWARF size (cli/symbol/cuindex.c): the first
 * recording writes them, later ones read them instead of libdw's aranges,
 * the names and lines are the same with and without them, and a damaged
 * file is rebuilt, never trusted. */
void sym_cu_ranges_cache(void)
{
	sym_addrs_enable(0); /* these files, not the answers above them */
	struct run r;
	char cache[256], path[512], id[128], cmd[1024];
	static char want[16384], got[16384];
	run_prog("symprog", &r);
	CHECK(r.lib != 0);
	char prog[512];
	snprintf(prog, sizeof prog, "%s/symprog", SYM_BIN);
	file_kept_key(prog, id, sizeof id); /* by build-id and DWARF size */
	CHECK(id[0] != '-');
	snprintf(cache, sizeof cache, "/tmp/symtest-cus-%d", (int)getpid());
	snprintf(path, sizeof path, "%s/%s.cus", cache, id);
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh(cmd);

	symbolize_probes(&r, NULL, want, sizeof want);   /* libdwfl's own lookups */
	CHECK(strstr(want, "inner") && strstr(want, "symprog.c:"));
	symbolize_probes(&r, cache, got, sizeof got);    /* writes the ranges */
	CHECK(strcmp(want, got) == 0);
	ino_t ino, ino2;
	long size = file_size(path, &ino);
	CHECK(size > 16 && (size - 16) % 24 == 0);
	symbolize_probes(&r, cache, got, sizeof got);    /* reads them */
	CHECK(strcmp(want, got) == 0);
	CHECK(file_size(path, &ino2) == size && ino2 == ino); /* not rewritten */

	const char *damage[] = {"truncate -s 20 %s", "printf 'PRFCUS01\\002\\0\\0\\0\\0\\0\\0\\0' > %s",
	                        "printf 'something else entirely' > %s"};
	for (size_t i = 0; i < sizeof damage / sizeof *damage; i++) {
		char what[600];
		snprintf(what, sizeof what, damage[i], path);
		sh(what);
		symbolize_probes(&r, cache, got, sizeof got);
		CHECK(strcmp(want, got) == 0);
		CHECK(file_size(path, NULL) == size); /* rebuilt whole */
	}
	sh(cmd);
}

/* The debuginfo file libdw reads for the stripped program, found through
 * zcache.c's callback with root as the only debug root and cache as the
 * cache (into out). */
static void debugfile_read(const char *root, const char *cache, char *out, size_t size)
{
	char stripped[512], *path = NULL, *roots[] = {(char *)root};
	snprintf(stripped, sizeof stripped, "%s/symprog.stripped", SYM_BIN);
	if (asprintf(&path, ":.debug:%s", root) < 0)
		CHECK(!"out of memory");
	Dwfl_Callbacks cb = {.find_elf = dwfl_build_id_find_elf,
	                     .find_debuginfo = sym_find_debuginfo,
	                     .section_address = dwfl_offline_section_address,
	                     .debuginfo_path = &path};
	sym_zcache_use(cache, roots, 1);
	Dwfl *dwfl = dwfl_begin(&cb);
	CHECK(dwfl != NULL);
	Dwfl_Module *mod = dwfl_report_offline(dwfl, "symprog", stripped, -1);
	Dwarf_Addr bias;
	CHECK(mod != NULL && dwfl_module_getdwarf(mod, &bias) != NULL);
	const char *debugfile = NULL;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	snprintf(out, size, "%s", debugfile ? debugfile : "");
	dwfl_end(dwfl);
	sym_zcache_use(NULL, NULL, 0);
	free(path);
}

/* The first run already reads the copy it makes: handed the compressed
 * original after copying it, libdw inflated every section again. */
void sym_debug_cache_first_run(void)
{
	char root[256], cache[256], id[128], cmd[2048], copy[600], got[4096];
	snprintf(root, sizeof root, "/tmp/symtest-root1-%d", (int)getpid());
	snprintf(cache, sizeof cache, "/tmp/symtest-cache1-%d", (int)getpid());
	place_zdebug(root, cache, id, sizeof id, copy, sizeof copy);
	debugfile_read(root, cache, got, sizeof got);
	fprintf(stderr, "  first run reads %s\n", got);
	CHECK(decompressed_elf(copy));
	CHECK(strcmp(got, copy) == 0);
	/* no cache: the original, as found */
	debugfile_read(root, NULL, got, sizeof got);
	CHECK(strstr(got, root) == got);
	snprintf(cmd, sizeof cmd, "rm -rf %s %s", root, cache);
	sh(cmd);
}
