/*
 * symkeep.c - symtab.c's index of a module's symbol table, kept across
 * recordings by build-id (or file identity).
 *
 * Why: a program whose big libraries have only a symbol table pays for
 * the index in every recording: rustc's librustc_driver (165,000
 * symbols) and libLLVM (258,000) cost `profil record` 28 + 43 ms to
 * index and 45 ms more in the eight direct questions to libdwfl that come
 * first (each a pass over the whole table), 130 ms for a compile of
 * 70 ms.  A table never changes for a build, so the first recording that
 * builds an index keeps it, beside the decompressed debuginfo (zcache.c's
 * directory), as "<build-id>.sym" ("file-<identity>.sym" for a file
 * without one, as rustc's), and later recordings map that file and
 * answer from it at once: no pass, no sort, only the pages a binary
 * search touches are read.
 *
 * What is kept is the index as symtab.c holds it in memory (the arrays
 * are written as they are and mapped back read-only), without names:
 * a name is libdwfl's string, taken by the symbol's index when an answer
 * needs it.  So a kept file is only good for the table it was built
 * from: its header records libdw's version, the table's size and its
 * first global symbol, and 64 symbols spread over the table are checked
 * against libdwfl's (candidate or not, address, size, binding) before the
 * file is used.  One that does not check out (another version, a table
 * libdwfl now finds elsewhere, such as installed debuginfo, a damaged or
 * short file) is rebuilt and replaced.  A symbol index from a span is
 * checked against the table's size where it is used (symtab.c).  Any
 * failure leaves the index built in memory, as before: the file only
 * saves time.
 *
 * File (host order): "PRFSYM01", libdw's version (16 bytes, NUL padded),
 * 8-byte words: the table's size, its first global, plain, two_passes,
 * and the span count of each of the REACHES arrays; then the table's
 * records (struct sym_rec, 24 bytes), then per array its spans (struct
 * sym_span, 24 bytes) and their prefix maxima (8 bytes each).
 */
#include "symtab_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define MAGIC "PRFSYM01"
#define LIMIT (1ull << 32) /* of any count: a file claiming more is bad */
#define SPOT_CHECKS 64

struct head {
	char magic[8];
	char libdw[16];
	uint64_t nsyms, first_global, plain, two_passes;
	uint64_t count[REACHES];
};

_Static_assert(sizeof(struct sym_rec) == 24 && sizeof(struct sym_span) == 24 &&
                   sizeof(struct head) % 8 == 0,
               "kept arrays are written and mapped as they are");

/* The key of a module without a build-id (rustc's libraries): its file's
 * identity, "file-<device>-<inode>-<size>-<mtime>", as the unwinder's
 * cache keys such objects: a file replaced or rewritten gets another. */
int sym_file_key(Dwfl_Module *mod, char *out, size_t size)
{
	const char *mainfile = NULL;
	struct stat st;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
	if (!mainfile || stat(mainfile, &st) != 0 || !S_ISREG(st.st_mode))
		return -1;
	int n = snprintf(out, size, "file-%lx-%lx-%lx-%lx.%09ld", (unsigned long)st.st_dev,
	                 (unsigned long)st.st_ino, (unsigned long)st.st_size,
	                 (unsigned long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	return n > 0 && (size_t)n < size ? 0 : -1;
}

/* "<dir>/<key>.sym" into path, key the build-id in hex or file_key():
 * 0, or -1 (no cache directory, no key). */
static int kept_path(Dwfl_Module *mod, char *path, size_t size)
{
	const char *dir = sym_zcache_dir();
	const unsigned char *bits;
	GElf_Addr vaddr;
	char key[256];
	int n = dir ? dwfl_module_build_id(mod, &bits, &vaddr) : 0;
	if (!dir)
		return -1;
	if (n > 0 && (size_t)n * 2 < sizeof key)
		sym_hex(bits, (size_t)n, key);
	else if (sym_file_key(mod, key, sizeof key) != 0)
		return -1;
	return snprintf(path, size, "%s/%s.sym", dir, key) < (int)size ? 0 : -1;
}

/* The header a file for t's module must have (counts aside). */
static void expected_head(struct head *h, size_t nsyms, Dwfl_Module *mod)
{
	memset(h, 0, sizeof *h);
	memcpy(h->magic, MAGIC, 8);
	sym_libdw_version(h->libdw);
	h->nsyms = nsyms;
	h->first_global = (uint64_t)(int64_t)dwfl_module_getsymtab_first_global(mod);
}

/* The file's size its header claims, 0 when a count is out of bounds. */
static uint64_t claimed_size(const struct head *h)
{
	if (h->nsyms >= LIMIT)
		return 0;
	uint64_t size = sizeof *h + h->nsyms * sizeof(struct sym_rec);
	for (int r = 0; r < REACHES; r++) {
		if (h->count[r] >= LIMIT)
			return 0;
		size += h->count[r] * (sizeof(struct sym_span) + sizeof(uint64_t));
	}
	return size;
}

/* Whether the kept records agree with libdwfl's table at SPOT_CHECKS
 * symbols spread over it. */
static int spot_checks_pass(const struct sym_rec *recs, size_t n, Dwfl_Module *mod)
{
	for (size_t k = 0; k < SPOT_CHECKS && k < n; k++) {
		size_t i = n <= SPOT_CHECKS ? k : k * (n - 1) / (SPOT_CHECKS - 1);
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, (int)i, &sym, &addr, NULL, NULL, NULL);
		int candidate = sym_symtab_candidate(name, &sym);
		const struct sym_rec *r = &recs[i];
		if (candidate != r->candidate ||
		    (candidate && (r->value != addr || r->size != sym.st_size ||
		                   r->bind != sym_symtab_binding(&sym))))
			return 0;
	}
	return 1;
}

/* Points t's arrays into the mapping m of a checked file with header h. */
static void point_into(struct sym_symtab *t, char *m, const struct head *h)
{
	char *p = m + sizeof *h;
	t->recs = (struct sym_rec *)p;
	p += h->nsyms * sizeof(struct sym_rec);
	for (int r = 0; r < REACHES; r++) {
		struct sym_reach *reach = &t->reach[r];
		reach->n = reach->cap = h->count[r];
		reach->v = (struct sym_span *)p;
		p += h->count[r] * sizeof(struct sym_span);
		reach->maxend = (uint64_t *)p;
		p += h->count[r] * sizeof(uint64_t);
	}
	t->nsyms = h->nsyms;
	t->plain = (int)h->plain;
	t->two_passes = (int)h->two_passes;
}

/* The mapping of path when its header is the one expected; else NULL. */
static char *map_checked(const char *path, const struct head *want, size_t *size)
{
	char *m = sym_keep_map(path, sizeof *want, size, 0);
	const struct head *h = (const struct head *)m;
	if (m && (memcmp(h, want, offsetof(struct head, plain)) != 0 || h->plain > 1 ||
	          h->two_passes > 1 || claimed_size(h) != (uint64_t)*size)) {
		munmap(m, *size);
		m = NULL;
		*size = 0;
	}
	return m;
}

int sym_symtab_load(struct sym_symtab *t, Dwfl_Module *mod)
{
	char path[4096];
	int n = dwfl_module_getsymtab(mod);
	if (n < 0 || kept_path(mod, path, sizeof path) != 0)
		return -1;
	struct head want;
	size_t size;
	expected_head(&want, (size_t)n, mod);
	char *m = map_checked(path, &want, &size);
	if (!m)
		return -1;
	const struct head *h = (const struct head *)m;
	if (!spot_checks_pass((const struct sym_rec *)(m + sizeof *h), (size_t)n, mod)) {
		munmap(m, size);
		return -1;
	}
	point_into(t, m, h);
	t->map = m;
	t->map_size = size;
	return 0;
}

void sym_symtab_keep(const struct sym_symtab *t, Dwfl_Module *mod)
{
	char path[4096], tmp[4200];
	if (t->map || kept_path(mod, path, sizeof path) != 0 || sym_zcache_make_dir() != 0)
		return;
	struct head h;
	expected_head(&h, t->nsyms, mod);
	h.plain = (uint64_t)t->plain;
	h.two_passes = (uint64_t)t->two_passes;
	for (int r = 0; r < REACHES; r++)
		h.count[r] = t->reach[r].n;
	FILE *f = sym_keep_open(path, tmp, sizeof tmp);
	if (!f)
		return;
	int ok = fwrite(&h, sizeof h, 1, f) == 1 &&
	         fwrite(t->recs, sizeof *t->recs, t->nsyms, f) == t->nsyms;
	for (int r = 0; ok && r < REACHES; r++) {
		const struct sym_reach *reach = &t->reach[r];
		ok = fwrite(reach->v, sizeof *reach->v, reach->n, f) == reach->n &&
		     fwrite(reach->maxend, sizeof *reach->maxend, reach->n, f) == reach->n;
	}
	sym_keep_close(f, tmp, path, ok);
}
