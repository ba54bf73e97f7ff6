/*
 * symcases-spans.c - answers kept for a span of addresses
 * (cli/symbol/lookup.c, addrkeep.c): in a module only its symbol table
 * names, the stretch symtab.c answers alike; with DWARF, the addresses of
 * one line in the same unit and DIEs.  An answer is given for the span's
 * other addresses in the same recording and, from the file, in later
 * ones; each must be the one a lookup without kept answers gives, at
 * every address asked (modules with and without DWARF, C, C++, nested
 * scopes, libc with its debugging information when installed, cc1).
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <string.h>
#include <unistd.h>

#define CLUSTERS 600 /* places in the text, as hot functions are */
#define PER 8        /* addresses asked near each */
#define ASKED (CLUSTERS * PER)

/* One answer as a line: each frame's names, file and lines. */
static void answer_text(struct sym_image *im, uint64_t vaddr, char *out, size_t size)
{
	struct sym_frame f[SYM_MAX_FRAMES];
	size_t n = sym_image_lookup(im, vaddr, f, SYM_MAX_FRAMES), len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s|%s|%s|%lld|%lld;", f[i].name,
		                        f[i].system_name, f[i].file ? f[i].file : "-",
		                        (long long)f[i].decl_line, (long long)f[i].line);
	sym_frames_free(f, n);
}

/* The module's .text, in the addresses lookups take. */
static void text_of(struct sym_image *im, uint64_t *lo, uint64_t *hi)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(sym_image_module(im), &bias);
	size_t shstrndx;
	CHECK(elf && elf_getshdrstrndx(elf, &shstrndx) == 0);
	*lo = *hi = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    strcmp(name, ".text") == 0)
			*lo = sh.sh_addr + bias, *hi = *lo + sh.sh_size;
	}
	CHECK(*hi > *lo);
}

/* Addresses of two recordings: each cluster's first PER addresses in
 * the first, as many others near them in the second (the same places
 * sampled again, mostly at other addresses). */
static void addresses(uint64_t lo, uint64_t hi, uint64_t first[ASKED], uint64_t second[ASKED])
{
	uint64_t rnd = 0x9e3779b97f4a7c15ULL;
	for (size_t c = 0; c < CLUSTERS; c++) {
		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		uint64_t at = lo + (rnd >> 17) % (hi - lo);
		for (size_t k = 0; k < PER; k++) {
			uint64_t a = at + 5 * k, b = at + 5 * k + 2;
			first[c * PER + k] = a < hi ? a : lo;
			second[c * PER + k] = b < hi ? b : lo;
		}
	}
}

/* The spans in dir's kept file (its header's count at byte 72). */
static uint64_t kept_spans(const char *dir)
{
	char pattern[300];
	glob_t g;
	snprintf(pattern, sizeof pattern, "%s/*.addrs", dir);
	CHECK(glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc == 1);
	uint64_t n = 0;
	int fd = open(g.gl_pathv[0], O_RDONLY);
	CHECK(fd >= 0 && pread(fd, &n, 8, 72) == 8);
	close(fd);
	globfree(&g);
	return n;
}

/* Every address of v answered as want says, by a cache in dir (NULL:
 * none kept); the kept answers given, from files. */
static unsigned long ask_all(const char *path, const char *dir, const uint64_t *v,
                             char (*want)[512])
{
	struct sym_options opt = {.debug_cache = dir};
	struct sym_cache *c = sym_cache_new(&opt);
	struct sym_image *im = image_of(c, path);
	unsigned long hits = sym_addrs_hits();
	for (size_t i = 0; i < ASKED; i++) {
		char got[512];
		answer_text(im, v[i], got, sizeof got);
		if (strcmp(got, want[i]) != 0) {
			fprintf(stderr, "  %s: %#llx: %s, without kept answers %s\n", path,
			        (unsigned long long)v[i], got, want[i]);
			CHECK(strcmp(got, want[i]) == 0);
		}
	}
	hits = sym_addrs_hits() - hits;
	sym_cache_free(c); /* writes the file */
	return hits;
}

static void one_module(const char *path)
{
	static uint64_t first[ASKED], second[ASKED];
	static char want1[ASKED][512], want2[ASKED][512];
	char dir[256], cmd[600];
	snprintf(dir, sizeof dir, "/tmp/symtest-spans-%d", (int)getpid());
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);

	sym_addrs_enable(0); /* the answers without kept ones */
	struct sym_options none = {.debug_cache = dir};
	struct sym_cache *c = sym_cache_new(&none);
	struct sym_image *im = image_of(c, path);
	uint64_t lo, hi;
	text_of(im, &lo, &hi);
	addresses(lo, hi, first, second);
	for (size_t i = 0; i < ASKED; i++) {
		answer_text(im, first[i], want1[i], sizeof want1[i]);
		answer_text(im, second[i], want2[i], sizeof want2[i]);
	}
	sym_cache_free(c);
	sym_addrs_enable(1);
	CHECK(system(cmd) == 0);

	unsigned long hits1 = ask_all(path, dir, first, want1);
	uint64_t spans = kept_spans(dir);
	unsigned long hits2 = ask_all(path, dir, second, want2);
	fprintf(stderr, "  %s: %d addresses kept as %llu spans; %lu of %d others answered "
	        "from them\n", path, ASKED, (unsigned long long)spans, hits2, ASKED);
	CHECK(hits1 == 0);          /* there was no file */
	CHECK(spans * 3 < ASKED * 2); /* spans answered some of the rest of the run */
	CHECK(hits2 * 2 > ASKED);   /* and most of the next one */
	CHECK(system(cmd) == 0);
}

void sym_addr_spans(void)
{
	const char *mods[] = {SYM_BIN "/libsymnest.dynsym.so", SYM_BIN "/libsymlib.dynsym.so",
	                      SYM_BIN "/symprog", SYM_BIN "/libsymlib.so", SYM_BIN "/libsymcxx.so",
	                      SYM_BIN "/libsymnest.so", "/lib/x86_64-linux-gnu/libc.so.6",
	                      "/usr/lib/gcc/x86_64-linux-gnu/12/cc1"};
	for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) {
		if (access(mods[i], R_OK) != 0) {
			fprintf(stderr, "  %s: not here, not asked\n", mods[i]);
			continue;
		}
		one_module(mods[i]);
	}
}
