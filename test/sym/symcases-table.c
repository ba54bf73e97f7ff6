/*
 * symcases-table.c - symtab.c against libdwfl itself: for real modules
 * (symnest.s, written to meet every rule of libdwfl's choice, with and
 * without its .symtab; the test library with only .dynsym, the test program, libc with
 * Debian's separate debuginfo when installed, gcc's cc1, whose .dynsym
 * holds tens of thousands of symbols), the name symtab.c gives every
 * address around every symbol boundary, and at random addresses, must be
 * dwfl_module_addrinfo's.  The addresses are asked in an order that makes
 * symtab.c answer most of them from a slot it filled earlier.
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <string.h>
#include <unistd.h>

/* At most this many boundaries are tried, fewer of a large table: each
 * question to libdwfl reads the whole table (cc1's: about 1 ms). */
#define MAX_BOUNDS 1500
#define LARGE_TABLE 5000
#define LARGE_BOUNDS 250 /* 128 of them kept for the sections */

static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
	return *s;
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The boundaries of mod's table that symtab.c slots by (starts and
 * ends), of every symbol or, in a large table, of every stride-th. */
static size_t bounds_of(Dwfl_Module *mod, GElf_Addr *out, size_t max)
{
	int n = dwfl_module_getsymtab(mod);
	size_t stride = n > 0 ? (size_t)n * 2 / (max - 128) + 1 : 1, k = 0;
	for (int i = 0; i < n && k + 2 <= max - 128; i += (int)stride) {
		GElf_Sym sym;
		GElf_Addr addr;
		if (!dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL))
			continue;
		out[k++] = addr;
		out[k++] = addr + sym.st_size;
	}
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	for (Elf_Scn *scn = NULL; elf && (scn = elf_nextscn(elf, scn)) != NULL && k + 2 <= max;) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		if (sh && (sh->sh_flags & SHF_ALLOC)) {
			out[k++] = sh->sh_addr + bias;
			out[k++] = sh->sh_addr + bias + sh->sh_size;
		}
	}
	return k;
}

/* Compares every address near each boundary, then random ones; returns
 * how many were compared. */
static size_t compare_module(const char *path)
{
	struct sym_cache *c = sym_cache_new(NULL);
	char id[128];
	file_build_id(path, id, sizeof id);
	struct sym_image *im = sym_cache_get(c, path, id);
	CHECK(im);
	Dwfl_Module *mod = sym_image_module(im);
	static GElf_Addr b[MAX_BOUNDS];
	uint64_t rnd = 0x9e3779b97f4a7c15ULL;
	int large = dwfl_module_getsymtab(mod) > LARGE_TABLE;
	size_t nb = bounds_of(mod, b, large ? LARGE_BOUNDS : MAX_BOUNDS);
	CHECK(nb > 0);
	size_t compared = 0;
	const int64_t near[] = {0, 1, 2, 7, -1, 3, -2};
	for (size_t pass = 0; pass < sizeof near / sizeof near[0]; pass++)
		for (size_t i = 0; i < nb; i++) {
			GElf_Addr a = b[i] + (GElf_Addr)near[pass];
			GElf_Off off;
			GElf_Sym sym;
			const char *want = dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
			const char *got = sym_symtab_name(sym_image_symtab(im), mod, a);
			if (!same(want, got)) {
				fprintf(stderr, "  %s: %#lx: libdwfl %s, symtab.c %s\n", path,
				        (unsigned long)a, want ? want : "(none)", got ? got : "(none)");
				CHECK(same(want, got));
			}
			compared++;
		}
	GElf_Addr lo = b[0], hi = b[0];
	for (size_t i = 0; i < nb; i++)
		lo = b[i] < lo ? b[i] : lo, hi = b[i] > hi ? b[i] : hi;
	/* A small module's every address, else random ones. */
	int every = hi - lo <= 1 << 15;
	int count = every ? (int)(hi - lo) : large ? 200 : 2000;
	for (int i = 0; i < count && hi > lo; i++) {
		GElf_Addr a = every ? lo + (GElf_Addr)i : lo + next_random(&rnd) % (hi - lo);
		GElf_Off off;
		GElf_Sym sym;
		const char *want = dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
		CHECK(same(want, sym_symtab_name(sym_image_symtab(im), mod, a)));
		compared++;
	}
	sym_cache_free(c);
	return compared;
}

void sym_symtab_matches_libdwfl(void)
{
	const char *mods[] = {SYM_BIN "/libsymnest.so", SYM_BIN "/libsymnest.dynsym.so",
	                      SYM_BIN "/libsymlib.dynsym.so", SYM_BIN "/symprog",
	                      "/lib/x86_64-linux-gnu/libc.so.6",
	                      "/usr/lib/gcc/x86_64-linux-gnu/12/cc1"};
	for (size_t i = 0; i < sizeof mods / sizeof mods[0]; i++) {
		if (access(mods[i], R_OK) != 0) {
			fprintf(stderr, "  %s: not here, not compared\n", mods[i]);
			continue;
		}
		unsigned long asks = sym_symtab_libdwfl_asks();
		size_t n = compare_module(mods[i]);
		asks = sym_symtab_libdwfl_asks() - asks;
		fprintf(stderr, "  %s: %zu addresses, same names; libdwfl asked %lu times\n", mods[i],
		        n, asks);
		/* The regression: symbolizing gcc asked libdwfl per address,
		 * each a search of cc1's 40,000 symbols. */
		CHECK(asks * 10 < n);
	}
}
