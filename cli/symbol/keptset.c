/*
 * keptset.c - an image's answers kept across recordings: cuindex.c's
 * index of its units, linecache.c's line tables and kidcache.c's DIE
 * indexes, a unit at a time as lookups reach it, and addrkeep.c's
 * answers per address.  All are named by the
 * image's DWARF key (dwarf_key()), and a unit's files are loaded, or
 * built and written, on its first use.
 */
#include "symint.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

/* The size of dbg's .debug_info as libdw reads it (decompressed), 0
 * when it has none. */
static uint64_t debug_info_size(Dwarf *dbg)
{
	Elf *elf = dwarf_getelf(dbg);
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".debug_info") != 0)
			continue;
		GElf_Chdr ch;
		return (sh.sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch) ? ch.ch_size
		                                                               : sh.sh_size;
	}
	return 0;
}

/*
 * What the kept caches (cuindex.c, linecache.c, kidcache.c) are named by:
 * the module's build-id in hex and the size of its DWARF's .debug_info,
 * "" when it has no build-id.  The build-id names the program, not its
 * debugging information: one build's debuginfo rewritten after the link
 * (dwz, as Debian's debug packages are; a reproducible rebuild's own
 * .debug beside the distribution's) keeps it, with other offsets, and a
 * unit's kept answers must not be read against another layout.
 * "<build-id>-none" for a module without DWARF: only addrkeep.c's
 * answers (from the symbol table) are kept for it, and debuginfo found
 * later gives it another key.
 */
/* "<id>-<.debug_info size in hex>", or "<id>-none" without DWARF. */
static void key_of(const char *id, Dwarf *dbg, char *key, size_t size)
{
	if (dbg)
		snprintf(key, size, "%s-%llx", id, (unsigned long long)debug_info_size(dbg));
	else
		snprintf(key, size, "%s-none", id);
}

static const char *dwarf_key(struct sym_image *im)
{
	struct sym_keptset *ks = sym_image_keptset(im);
	Dwfl_Module *mod = sym_image_module(im);
	if (!ks->key_done) {
		const unsigned char *bits;
		GElf_Addr vaddr, bias;
		char id[256];
		int n = dwfl_module_build_id(mod, &bits, &vaddr);
		Dwarf *dbg = sym_module_dwarf(mod, &bias);
		if (n > 0 && (size_t)n * 2 < sizeof id) {
			sym_hex(bits, (size_t)n, id);
			key_of(id, dbg, ks->key, sizeof ks->key);
		}
		ks->key_done = 1;
	}
	return ks->key;
}

struct sym_cus *sym_image_cus(struct sym_image *im, Dwarf *dbg)
{
	struct sym_keptset *ks = sym_image_keptset(im);
	if (!ks->cus_tried) {
		ks->cus = sym_cus_load(dbg, dwarf_key(im));
		ks->cus_tried = 1;
	}
	return ks->cus;
}

/* The answers' key: the DWARF key, or for a module without a build-id
 * (rustc's libraries) its file's identity in place of one.  Only these
 * answers are kept for such a module: a file's identity names the file,
 * and the other caches hold offsets into debuginfo that may be another's. */
static void answers_key(struct sym_image *im, char *key, size_t size)
{
	const unsigned char *bits;
	GElf_Addr vaddr, bias;
	char file[256];
	Dwfl_Module *mod = sym_image_module(im);
	snprintf(key, size, "%s", dwarf_key(im));
	if (!*key && dwfl_module_build_id(mod, &bits, &vaddr) <= 0 &&
	    sym_file_key(mod, file, sizeof file) == 0)
		key_of(file, sym_module_dwarf(mod, &bias), key, size);
}

struct sym_addrs *sym_image_addrs(struct sym_image *im)
{
	struct sym_keptset *ks = sym_image_keptset(im);
	if (!ks->addrs_tried) {
		char key[sizeof ks->key];
		answers_key(im, key, sizeof key);
		ks->addrs = sym_addrs_load(key);
		ks->addrs_tried = 1;
	}
	return ks->addrs;
}

/* What the lines map holds for a CU the cache has nothing for. */
static char no_lines;

static void free_lines(void *l)
{
	if (l != &no_lines)
		sym_cu_lines_free(l);
}

const struct sym_cu_lines *sym_image_cu_lines(struct sym_image *im, Dwarf_Die *cu)
{
	struct sym_keptset *ks = sym_image_keptset(im);
	void *l = sym_map_get(&ks->lines, cu->addr);
	if (!l) {
		l = sym_cu_lines_load(cu, dwarf_key(im));
		sym_map_put(&ks->lines, cu->addr, l ? l : &no_lines);
	}
	return l == &no_lines ? NULL : l;
}

/* What the kept map holds for a CU nothing is kept for. */
static char no_kept;

static void free_kept(void *k)
{
	if (k != &no_kept)
		sym_kept_free(k);
}

static void save_kept(void *k)
{
	if (k != &no_kept)
		sym_kept_save(k);
}

struct sym_kept *sym_image_kept(struct sym_image *im, Dwarf_Die *cu)
{
	struct sym_keptset *ks = sym_image_keptset(im);
	void *k = sym_map_get(&ks->kept, cu->addr);
	if (!k) {
		/* offsets are kept: only for units of the module's own DWARF
		 * (not a split unit's .dwo, whose offsets are another file's) */
		Dwarf_Addr bias;
		Dwarf *own = sym_module_dwarf(sym_image_module(im), &bias);
		k = own && dwarf_cu_getdwarf(cu->cu) == own ? sym_kept_load(cu, dwarf_key(im))
		                                          : NULL;
		sym_map_put(&ks->kept, cu->addr, k ? k : &no_kept);
	}
	return k == &no_kept ? NULL : k;
}

void sym_keptset_save(struct sym_keptset *ks)
{
	sym_map_each(&ks->kept, save_kept);
	sym_addrs_save(ks->addrs);
}

void sym_keptset_free(struct sym_keptset *ks)
{
	sym_cus_free(ks->cus);
	sym_addrs_free(ks->addrs);
	sym_map_free(&ks->lines, free_lines);
	sym_map_free(&ks->kept, free_kept);
	memset(ks, 0, sizeof *ks);
}
