/*
 * symcases-table.c - symtab.c against libdwfl itself: for real modules
 * (symnest.s, written to meet every rule of libdwfl's choice, with and
 * without its .symtab; the test library with only .dynsym, the test program, libc with
 * Debian's separate debuginfo when installed, gcc's cc1, whose .dynsym
 * holds tens of thousands of symbols), the name symtab.c gives every
 * address around every symbol boundary, and at random addresses, must be
 * dwfl_module_addrinfo's.  The addresses are asked in an order that makes
 * symtab.c answer most of them from a slot it filled earlier.  The same
 * with the index kept on disk (symkeep.c): made, read back, damaged.
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <malloc.h>
#include <string.h>
#include <sys/stat.h>
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

/* Compares every address near each boundary, then random ones, with
 * symtab.c's index kept in cache (NULL: none); returns how many were
 * compared. */
static size_t compare_module(const char *path, const char *cache)
{
	struct sym_options opt = {.debug_cache = cache};
	struct sym_cache *c = sym_cache_new(&opt);
	struct sym_image *im = image_of(c, path);
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
		size_t n = compare_module(mods[i], NULL);
		asks = sym_symtab_libdwfl_asks() - asks;
		fprintf(stderr, "  %s: %zu addresses, same names; libdwfl asked %lu times\n", mods[i],
		        n, asks);
		/* The regression: symbolizing gcc asked libdwfl per address,
		 * each a search of cc1's 40,000 symbols. */
		CHECK(asks * 10 < n);
	}
}

/* The only *.sym file in dir (into path), and its size; -1 when not one. */
static long kept_file(const char *dir, char *path, size_t size)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "ls %s/*.sym 2>/dev/null", dir);
	FILE *f = popen(cmd, "r");
	CHECK(f != NULL);
	char line[512];
	int n = 0;
	while (fgets(line, sizeof line, f))
		n++, snprintf(path, size, "%.*s", (int)strcspn(line, "\n"), line);
	pclose(f);
	struct stat st;
	return n == 1 && stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Sets the symbol index of every span of the kept file's first array
 * (the global pass's sized symbols) to one past any table, by the layout
 * symkeep.c's comment gives: a 112-byte header (the table's size at 24,
 * the arrays' counts from 56), the table's 24-byte records, then each
 * array's 24-byte spans (the index at 16). */
static void spoil_span_indexes(const char *path)
{
	FILE *f = fopen(path, "r+b");
	CHECK(f != NULL);
	uint64_t nsyms, count;
	CHECK(fseek(f, 24, SEEK_SET) == 0 && fread(&nsyms, 8, 1, f) == 1);
	CHECK(fseek(f, 56, SEEK_SET) == 0 && fread(&count, 8, 1, f) == 1);
	CHECK(count > 0);
	int32_t bad = INT32_MAX;
	for (uint64_t i = 0; i < count; i++)
		CHECK(fseek(f, (long)(112 + nsyms * 24 + i * 24 + 16), SEEK_SET) == 0 &&
		      fwrite(&bad, 4, 1, f) == 1);
	CHECK(fclose(f) == 0);
}

static void sh_ok(const char *cmd)
{
	CHECK(system(cmd) == 0);
}

/* One module's index kept in a fresh cache: the names stay libdwfl's
 * when it is made, when it is read back, and when it is damaged. */
static void kept_module(const char *path, const char *cache)
{
	char cmd[1200], kept[512];
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh_ok(cmd);
	unsigned long asks = sym_symtab_libdwfl_asks();
	compare_module(path, cache);
	unsigned long made = sym_symtab_libdwfl_asks() - asks;
	long size = kept_file(cache, kept, sizeof kept);
	CHECK(size > 112);
	snprintf(cmd, sizeof cmd, "cp %s %s.good", kept, kept);
	sh_ok(cmd);

	/* read back: no question before the index (the direct ones) */
	asks = sym_symtab_libdwfl_asks();
	compare_module(path, cache);
	unsigned long read = sym_symtab_libdwfl_asks() - asks;
	fprintf(stderr, "  %s: %ld bytes kept; libdwfl asked %lu times, then %lu\n", path, size,
	        made, read);
	CHECK(read < made);

	/* short, or records that are not the table's: rebuilt as it was */
	const char *damage[] = {"truncate -s 100 %s", "truncate -s -8 %s",
	                        "head -c 960 /dev/zero | tr '\\0' '\\377' | "
	                        "dd of=%s bs=1 seek=112 conv=notrunc status=none"};
	for (size_t i = 0; i < sizeof damage / sizeof damage[0]; i++) {
		snprintf(cmd, sizeof cmd, damage[i], kept);
		sh_ok(cmd);
		compare_module(path, cache);
		snprintf(cmd, sizeof cmd, "cmp -s %s %s.good", kept, kept);
		sh_ok(cmd);
	}

	/* spans naming no symbol of the table: libdwfl answers those */
	spoil_span_indexes(kept);
	compare_module(path, cache);
}

/* fn(path, cache) for each of the n modules this machine has. */
static void each_present(const char *const *mods, size_t n,
                         void (*fn)(const char *path, const char *cache), const char *cache)
{
	for (size_t i = 0; i < n; i++) {
		if (access(mods[i], R_OK) != 0)
			fprintf(stderr, "  %s: not here, not compared\n", mods[i]);
		else
			fn(mods[i], cache);
	}
}

void sym_symtab_kept(void)
{
	char cache[256], noid[512], cmd[1200];
	snprintf(cache, sizeof cache, "/tmp/symtest-symkeep-%d", (int)getpid());
	/* rustc's libraries have no build-id: kept by the file's identity */
	snprintf(noid, sizeof noid, "/tmp/symtest-symkeep-noid-%d.so", (int)getpid());
	snprintf(cmd, sizeof cmd, "objcopy --remove-section .note.gnu.build-id %s/libsymnest.so %s",
	         SYM_BIN, noid);
	sh_ok(cmd);
	char id[128];
	file_build_id(noid, id, sizeof id);
	CHECK(id[0] == 0);
	const char *mods[] = {SYM_BIN "/libsymnest.so", SYM_BIN "/libsymlib.dynsym.so", noid,
	                      "/usr/lib/gcc/x86_64-linux-gnu/12/cc1"};
	each_present(mods, sizeof mods / sizeof mods[0], kept_module, cache);
	snprintf(cmd, sizeof cmd, "rm -rf %s %s", cache, noid);
	sh_ok(cmd);
}

/* Heap bytes in use (glibc's count; the sanitizers' mallocs give 0). */
static size_t heap_in_use(void)
{
	return mallinfo2().uordblks;
}

/* A kept index costs what the recording asks of it, not its table's
 * size: names and the slots' answers fill in as addresses are asked
 * (symtab_int.h).  The regression: both were calloc'd arrays by symbol
 * and by slot, 20 MB zeroed for libLLVM's table in every recording of
 * rustc, at least 8 bytes a symbol. */
static void kept_index_costs_what_is_asked(const char *path, const char *cache)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh_ok(cmd);
	compare_module(path, cache); /* made and kept */
	struct sym_options opt = {.debug_cache = cache};
	struct sym_cache *c = sym_cache_new(&opt);
	struct sym_image *im = image_of(c, path);
	Dwfl_Module *mod = sym_image_module(im);
	int n = dwfl_module_getsymtab(mod); /* libdwfl's own tables first */
	static GElf_Addr b[LARGE_BOUNDS];
	size_t nb = bounds_of(mod, b, LARGE_BOUNDS);
	CHECK(nb > 10);
	if (n <= LARGE_TABLE) { /* libc without its debuginfo: too small to tell */
		fprintf(stderr, "  %s: %d symbols, not compared\n", path, n);
		sym_cache_free(c);
		return;
	}
	size_t before = heap_in_use();
	for (size_t i = 0; i < 10; i++) {
		GElf_Off off;
		GElf_Sym sym;
		const char *want = dwfl_module_addrinfo(mod, b[i], &off, &sym, NULL, NULL, NULL);
		CHECK(same(want, sym_symtab_name(sym_image_symtab(im), mod, b[i])));
	}
	size_t grew = heap_in_use() - before;
	fprintf(stderr, "  %s: %d symbols; 10 names from the kept index took %zu bytes\n", path,
	        n, grew);
	if (before) /* glibc's malloc */
		CHECK(grew < (size_t)n * sizeof(void *) / 4);
	sym_cache_free(c);
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh_ok(cmd);
}

void sym_symtab_kept_small(void)
{
	char cache[256];
	snprintf(cache, sizeof cache, "/tmp/symtest-symsmall-%d", (int)getpid());
	const char *mods[] = {"/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
	                      "/lib/x86_64-linux-gnu/libc.so.6"};
	each_present(mods, sizeof mods / sizeof mods[0], kept_index_costs_what_is_asked, cache);
}

/* The reference order: by start, equal starts by idx (the order added). */
static int by_start_then_idx(const void *a, const void *b)
{
	const struct sym_span *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* n spans from seed, their starts spread over span bytes (many equal
 * when span is small), added in idx order; finished and compared with
 * the reference order, and the prefix maxima with a scan. */
static void reach_against_qsort(size_t n, uint64_t base, uint64_t span, uint64_t seed)
{
	struct sym_reach r = {0};
	struct sym_span *want = malloc((n ? n : 1) * sizeof *want);
	CHECK(want != NULL);
	for (size_t i = 0; i < n; i++) {
		uint64_t start = base + next_random(&seed) % span;
		CHECK(sym_reach_add(&r, start, start + next_random(&seed) % 4096, (int)i) == 0);
		want[i] = r.v[i];
	}
	qsort(want, n, sizeof *want, by_start_then_idx);
	CHECK(sym_reach_finish(&r) == 0);
	CHECK(r.n == n);
	uint64_t high = 0;
	for (size_t i = 0; i < n; i++) {
		high = want[i].end > high ? want[i].end : high;
		if (r.v[i].start != want[i].start || r.v[i].end != want[i].end ||
		    r.v[i].idx != want[i].idx || r.maxend[i] != high) {
			fprintf(stderr, "  %zu spans: position %zu differs\n", n, i);
			CHECK(!"sym_reach_finish orders as a stable sort by start");
		}
	}
	sym_reach_free(&r);
	free(want);
}

/* sym_reach_finish() (reach.c) sorts by key and permutes the spans in
 * place: every permutation's cycles, equal starts in the order added,
 * and starts too far apart for its keys (the plain radix sort). */
void sym_reach_orders_stably(void)
{
	static const size_t sizes[] = {0, 1, 2, 3, 17, 1000, 100000, 1500000};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		reach_against_qsort(sizes[i], 0x400000, 1u << 27, 42 + i); /* a module's */
		reach_against_qsort(sizes[i], 0x7f0000000000, 64, 7 + i);  /* starts repeat */
		reach_against_qsort(sizes[i], 0, (uint64_t)1 << 62, 3 + i); /* > 2^40 apart */
	}
	fprintf(stderr, "  spans up to %zu ordered as a stable sort\n", sizes[7]);
}
