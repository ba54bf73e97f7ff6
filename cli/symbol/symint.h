/*
 * symint.h - the symbolizer's internals, shared by its files:
 *   image.c   ELF files opened for symbols, cached by path + build-id
 *   vdso.c    this process's vDSO as a file libdwfl can read
 *   lookup.c  one address -> its inline chain (names, files, lines)
 *   scopes.c  the DIEs holding an address (dwarf_getscopes, cheaper)
 *   kids.c    DIE lists walked as libdw does, indexed by address
 *   symtab.c  the symbol table's answer per address, asked once per stretch
 *   symkeep.c symtab.c's index kept across recordings, by build-id
 *   reach.c   intervals by start, for symtab.c and perfmap.c
 *   plt.c     the PLT's stubs named after the functions they jump to
 *   gopcln.c  Go functions named by the program's own table
 *   fde.c     the start of the function (FDE) holding an address
 *   zcache.c  separate debuginfo kept decompressed, by build-id
 *   cuindex.c CU address ranges kept across recordings, by build-id
 *             and DWARF size (image.c's dwarf_key(), as the two below)
 *   linecache.c  a CU's line answers and file table, kept likewise
 *   kidcache.c   a CU's DIE indexes (kids.c, scopes.c), kept likewise
 *   addrkeep.c   lookup.c's answer per address, kept likewise
 *   perfmap.c a JIT's /tmp/perf-PID.map (for the record's build.c)
 *   nodebuginfod.c  libdebuginfod loaded only when a server is named
 *   dwoom.c   running out of memory inside libdw, survived
 *   symbolize.c  the driver over a profile
 */
#ifndef PROFIL_CLI_SYMINT_H
#define PROFIL_CLI_SYMINT_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "symbolize.h"

/* One frame of an inline chain.  Strings are malloc'd (sym_frames_free). */
/* The addresses [span[0], span[1]) around pc an answer certainly holds
 * for, narrowed by each boundary b its parts depend on: the lookups give
 * theirs to sym_span_cut() (lookup.c says why spans are kept). */
static inline void sym_span_cut(uint64_t span[2], uint64_t pc, uint64_t b)
{
	if (!span)
		return;
	if (b <= pc) {
		if (b > span[0])
			span[0] = b;
	} else if (b < span[1]) {
		span[1] = b;
	}
}

struct sym_frame {
	char *name;        /* demangled */
	char *system_name; /* as in the symbol table / DW_AT_linkage_name */
	char *file;        /* function's source file, NULL when unknown */
	int64_t decl_line; /* line the function starts on, 0 unknown */
	int64_t line;      /* line in it at this address, 0 unknown */
};
#define SYM_MAX_FRAMES 64

struct sym_image;  /* one ELF file with its Dwfl, bias 0 */
struct sym_cache;  /* every image opened in one symbolize_profile() */

struct sym_cache *sym_cache_new(const struct sym_options *opt);
void sym_cache_free(struct sym_cache *c);
/* Writes what the cache has to keep (kidcache.c's indexes) and ends the
 * libdwfl sessions, but unmaps none of the kept files: for a cache left
 * to the process's exit (symbolize.h's leave_to_exit). */
void sym_cache_leave(struct sym_cache *c);
/* The image for a mapping's file, opened on first use; NULL when no file
 * with the right build-id can be found (build_id may be ""). */
struct sym_image *sym_cache_get(struct sym_cache *c, const char *path, const char *build_id);

/* Load bias of a mapping of im at start whose first byte is file_offset:
 * address - bias is the ELF vaddr.  -1 when no PT_LOAD maps that offset. */
int sym_image_bias(struct sym_image *im, uint64_t start, uint64_t file_offset, uint64_t *bias);

/* Inline chain at ELF address vaddr, innermost first, into out[max];
 * returns the count, 0 when nothing names the address. */
size_t sym_image_lookup(struct sym_image *im, uint64_t vaddr, struct sym_frame *out, size_t max);
/* fde.c: start of the function holding vaddr by its CFI (the FDE's
 * initial location; between two entries of .eh_frame_hdr's table, the
 * first's); 0, or -1 when no CFI covers vaddr.  *sym_image_fdes
 * (the image's, NULL at first) is fde.c's index, built on first use. */
int sym_image_fde_start(struct sym_image *im, uint64_t vaddr, uint64_t *start);
/* How many times sym_image_fde_start() has asked libdw (tests). */
unsigned long sym_fde_libdw_asks(void);
struct sym_fdes;
struct sym_fdes **sym_image_fdes(struct sym_image *im);
void sym_fdes_free(struct sym_fdes *f);
void sym_frames_free(struct sym_frame *f, size_t n);

/* The Dwfl behind an image (lookup.c needs it; image.c owns it). */
struct Dwfl_Module *sym_image_module(struct sym_image *im);
/* The file's path as recorded. */
const char *sym_image_path(const struct sym_image *im);

/* Whether any name in the symbol table libdwfl searches for an address
 * (dwfl_module_addrinfo) starts with _Z (C++), read once. */
int sym_image_has_cxx_symbols(struct sym_image *im);

/* reach.c: intervals [start, end) sorted by start, each with the index of
 * the symbol it stands for, and the highest end of every prefix. */
struct sym_span {
	uint64_t start, end;
	int idx;
	int pad; /* 0: symtab.c's kept index writes spans as they are */
};
struct sym_reach {
	struct sym_span *v;
	uint64_t *maxend; /* sym_reach_finish() makes it */
	size_t n, cap;
};
int sym_reach_add(struct sym_reach *r, uint64_t start, uint64_t end, int idx);
/* Sorts by start, equal starts in the order added: before the queries. */
int sym_reach_finish(struct sym_reach *r);
/* How many intervals start at or below addr; the highest end among them
 * (0: none); those that cover addr, into out[max] (-1: more than max). */
size_t sym_reach_count(const struct sym_reach *r, uint64_t addr);
uint64_t sym_reach_upto(const struct sym_reach *r, uint64_t addr);
int sym_reach_covering(const struct sym_reach *r, uint64_t addr, const struct sym_span **out,
                       int max);
/* Of the intervals covering addr, the one added last (largest idx); NULL. */
const struct sym_span *sym_reach_latest(const struct sym_reach *r, uint64_t addr);
void sym_reach_free(struct sym_reach *r);

/* symtab.c: the symbol table's name for vaddr, as dwfl_module_addrinfo
 * gives it, asked of libdwfl once per stretch between symbol boundaries;
 * *t (the image's, NULL at first) is built on first use. */
struct sym_symtab;
struct sym_symtab **sym_image_symtab(struct sym_image *im);
const char *sym_symtab_name(struct sym_symtab **t, struct Dwfl_Module *mod, uint64_t vaddr);
/* The same, and into span the addresses [span[0], span[1]) around vaddr
 * that certainly have the same answer: the stretch between two
 * boundaries, or vaddr alone before the index is built. */
const char *sym_symtab_name_span(struct sym_symtab **t, struct Dwfl_Module *mod, uint64_t vaddr,
                                 uint64_t span[2]);
/* That about n more addresses of the module will be asked (the
 * symbolizer counts a profile's before it starts). */
void sym_symtab_expect(struct sym_symtab **t, size_t n);
void sym_symtab_free(struct sym_symtab *t);
/* How many times sym_symtab_name() has asked libdwfl (tests). */
unsigned long sym_symtab_libdwfl_asks(void);

/* plt.c: "function@plt" when vaddr is in one of the module's PLT stubs,
 * else NULL; *t (the image's, NULL at first) is built on first use. */
struct sym_plt;
struct sym_plt **sym_image_plt(struct sym_image *im);
const char *sym_plt_name(struct sym_plt **t, struct Dwfl_Module *mod, uint64_t vaddr);
void sym_plt_free(struct sym_plt *t);

/* gopcln.c: a Go function's name, file and line at vaddr from the
 * program's own table (.gopclntab), for Go code nothing else names: 1
 * with out filled, or 0.  *t (the image's, NULL at first) is found on
 * first use. */
struct sym_gopcln;
struct sym_gopcln **sym_image_gopcln(struct sym_image *im);
int sym_gopcln_lookup(struct sym_gopcln **t, struct Dwfl_Module *mod, uint64_t vaddr,
                      struct sym_frame *out);
/* Whether the module has such a table: 1, 0, -1 (unknown: no memory). */
int sym_gopcln_present(struct sym_gopcln **t, struct Dwfl_Module *mod);
void sym_gopcln_free(struct sym_gopcln *t);
/* The same on a table at bytes[0, size) (tests, fuzz-gopcln): parse
 * gives NULL when its header does not check out; at names vaddr. */
struct sym_gopcln *sym_gopcln_parse(const void *bytes, size_t size);
int sym_gopcln_at(const struct sym_gopcln *g, uint64_t vaddr, struct sym_frame *out);

/* cuindex.c: the CU of an address by libdw's aranges, kept across
 * recordings by build-id in zcache.c's directory.  sym_image_cus() loads
 * them on first use (NULL: none, use libdwfl's lookups); sym_cus_find()
 * gives the CU DIE's offset of a DWARF address, -1 if no CU has it, and
 * cuts span (NULL: none) to where the answer stays the same. */
struct sym_cus;
struct sym_cus *sym_image_cus(struct sym_image *im, Dwarf *dbg);
struct sym_cus *sym_cus_load(Dwarf *dbg, const char *build_id);
int sym_cus_find(const struct sym_cus *c, uint64_t addr, uint64_t *die_off, uint64_t span[2]);
void sym_cus_free(struct sym_cus *c);
const char *sym_zcache_dir(void);  /* NULL: no cache */
int sym_zcache_make_dir(void);
/* zcache.c: a file of the cache written whole, so that a reader sees all
 * of it or none: sym_keep_open() opens a new temporary file beside path
 * (its name into tmp); sym_keep_close() closes it and, when ok, renames
 * it to path, else removes it: 0 when path is the new file, else -1. */
FILE *sym_keep_open(const char *path, char *tmp, size_t size);
int sym_keep_close(FILE *f, const char *tmp, const char *path, int ok);
/* A kept file mapped read-only, whole (its size into *size), when it is
 * a regular file of min bytes or more; else NULL.  Mapped, not read: only
 * the pages used are brought in, from the page cache, with no copy (a
 * recording of a Python program read 4.5 MB of kept files into fresh
 * heap each time, a fault a page where faults are dear).  Kept files are
 * replaced by rename, never rewritten in place, so a mapping stays whole.
 * whole: the caller reads every page (it checks the file whole first),
 * so they are all mapped at once (MAP_POPULATE), not a fault each. */
void *sym_keep_map(const char *path, size_t min, size_t *size, int whole);
/* libdw's version, NUL padded, as the kept files record it: a file made
 * by another version is rebuilt (its answers are that version's). */
void sym_libdw_version(char out[16]);

/* linecache.c: a CU's line answers and file table as libdw gives them,
 * kept across recordings by build-id in zcache.c's directory.
 * sym_image_cu_lines(): the image's for cu, loaded (or built and kept)
 * on first use; NULL when there is no cache directory or build-id, or
 * libdw cannot decode the CU: ask libdw then.  sym_cu_lines_at(): the
 * file and line dwarf_getsrc_die() + dwarf_linesrc() give at a DWARF
 * address: 1, or 0 for none, span cut likewise.  sym_cu_lines_file(): file-table entry idx
 * as dwarf_filesrc() names it, NULL past the table's end. */
struct sym_cu_lines;
const struct sym_cu_lines *sym_image_cu_lines(struct sym_image *im, Dwarf_Die *cu);
struct sym_cu_lines *sym_cu_lines_load(Dwarf_Die *cu, const char *build_id);
int sym_cu_lines_at(const struct sym_cu_lines *l, uint64_t addr, const char **file, int *line,
                    uint64_t span[2]);
const char *sym_cu_lines_file(const struct sym_cu_lines *l, uint64_t idx);
void sym_cu_lines_free(void *l);

/* kidcache.c: a CU's DIE indexes kept across recordings by build-id.
 * sym_image_kept(): the image's for cu, loaded on first use; NULL when
 * there is no cache directory or build-id, or cu is not in the module's
 * own DWARF.  A parent's children as kids.c indexes them (spans sorted
 * by lo, then kid: the child's place in the list); the offsets of the
 * subprograms among the CU's children, sorted.  Getters return 0 for
 * none kept; puts of what is already there do nothing; sym_kept_save()
 * writes the file when something was put since it was read or last
 * written, and sym_kept_free() saves, then frees. */
struct sym_kept_span {
	uint64_t lo, hi, off, kid;
};
struct sym_kept;
struct sym_kept *sym_image_kept(struct sym_image *im, Dwarf_Die *cu);
struct sym_kept *sym_kept_load(Dwarf_Die *cu, const char *build_id);
int sym_kept_kids(const struct sym_kept *k, uint64_t parent, const struct sym_kept_span **spans,
                  size_t *n, uint64_t *nkids);
void sym_kept_kids_put(struct sym_kept *k, uint64_t parent, const struct sym_kept_span *spans,
                       size_t n, uint64_t nkids);
int sym_kept_top(const struct sym_kept *k, const uint64_t **offs, size_t *n);
void sym_kept_top_put(struct sym_kept *k, const uint64_t *offs, size_t n);
void sym_kept_save(void *k);
void sym_kept_free(void *k);

/* symkeep.c: the key of a module without a build-id, its file's identity
 * ("file-<device>-<inode>-<size>-<mtime>"): 0, or -1 (no such file). */
int sym_file_key(struct Dwfl_Module *mod, char *out, size_t size);

/* addrkeep.c: sym_image_lookup()'s answers kept across recordings by
 * the image's DWARF key, this program's build-id and libdw's version.
 * sym_addrs_load(): NULL when there is no cache directory, key or
 * build-id of ours.  sym_addrs_get(): the kept chain at vaddr, or this
 * run's for a span holding it (strings malloc'd, as sym_image_lookup
 * gives them) and 0, or -1 for none; sym_addrs_put() adds an answer
 * found this run for the addresses [span[0], span[1]); sym_addrs_save()
 * writes the kept and added ones when something was added;
 * sym_addrs_free() saves, then frees. */
struct sym_addrs;
struct sym_addrs *sym_addrs_load(const char *key);
int sym_addrs_get(const struct sym_addrs *a, uint64_t vaddr, struct sym_frame *out, size_t max,
                  size_t *n);
void sym_addrs_put(struct sym_addrs *a, const uint64_t span[2], const struct sym_frame *f,
                   size_t n);
void sym_addrs_save(struct sym_addrs *a);
void sym_addrs_free(struct sym_addrs *a);
/* The kept file's path for key under dir (malloc'd): it names this
 * program's build-id too. */
char *sym_addrs_path(const char *dir, const char *key);
/* Tests: whether images load kept answers (1 at first), and how many
 * answers sym_addrs_get() has given. */
void sym_addrs_enable(int on);
unsigned long sym_addrs_hits(void);

/* What scopes.c keeps of an image's CUs (image.c owns it, NULL at first). */
struct sym_scopes;
struct sym_scopes **sym_image_scopes(struct sym_image *im);
void sym_scopes_free(struct sym_scopes *s);
/* The DIEs holding pc in cu that dwarf_getscopes() finds, outermost (a
 * child of cu) first, down to the innermost, into a malloc'd *path, and
 * their count (0: none); -1 when libdw's own answer is needed (it may
 * fail, or differ: see scopes.c).  kept: cu's kept indexes, or NULL.
 * span (NULL: none) is cut to where the same DIEs hold the address. */
int sym_scopes_at(struct sym_scopes **s, struct sym_kept *kept, Dwarf_Die *cu, Dwarf_Addr pc,
                  Dwarf_Die **path, uint64_t span[2]);
/* How many times sym_scopes_at() has returned -1 (tests). */
unsigned long sym_scopes_libdw_asks(void);

/* kids.c: a map keyed by address (a DIE's), values non-NULL. */
struct sym_map {
	const void **keys;
	void **vals;
	size_t cap, n;
};
void *sym_map_get(const struct sym_map *m, const void *key);
void sym_map_put(struct sym_map *m, const void *key, void *val);
void sym_map_free(struct sym_map *m, void (*free_val)(void *));
void sym_map_each(const struct sym_map *m, void (*fn)(void *));
/* keptset.c: what an image keeps across recordings (cuindex.c's units,
 * linecache.c's line tables and kidcache.c's DIE indexes, by CU DIE),
 * named by its DWARF key; image.c holds one per image, zeroed at first.
 * sym_image_cus(), sym_image_cu_lines() and sym_image_kept() fill it;
 * sym_keptset_save() writes the DIE indexes that grew;
 * sym_keptset_free() saves them too, then frees all. */
struct sym_keptset {
	struct sym_cus *cus;     /* loaded on first use */
	int cus_tried;
	struct sym_addrs *addrs; /* likewise */
	int addrs_tried;
	struct sym_map lines;    /* sym_cu_lines, or a marker for none */
	struct sym_map kept;     /* sym_kept, or a marker for none */
	char key[300];           /* "" for none */
	int key_done;
};
struct sym_keptset *sym_image_keptset(struct sym_image *im);
/* The image's kept answers per address (addrkeep.c), NULL for none. */
struct sym_addrs *sym_image_addrs(struct sym_image *im);
void sym_keptset_save(struct sym_keptset *ks);
void sym_keptset_free(struct sym_keptset *ks);
/* The walk of dwarf_getscopes over a list of sibling DIEs from first:
 * visit(die, im, arg) on each, an imported unit's children in place (im:
 * the imports it is in).  Returns visit's first nonzero, 0 at the end, -1
 * when libdw fails. */
struct sym_import {
	const void *unit;
	const struct sym_import *up;
};
typedef int sym_visit_fn(Dwarf_Die *die, const struct sym_import *im, void *arg);
int sym_walk_list(Dwarf_Die first, const struct sym_import *im, sym_visit_fn *visit,
                  void *arg);
/* Whether that walk goes into die's children. */
int sym_walks_into(Dwarf_Die *die);
/* parent's children indexed by address, cached in cache (values freed
 * with sym_kids_free), taken from kept or put there when built (kept may
 * be NULL); NULL when libdw failed listing them. */
struct sym_kids;
struct sym_kids *sym_kids_of(struct sym_map *cache, struct sym_kept *kept, Dwarf_Die *parent);
int sym_kids_find(struct sym_kids *k, Dwarf_Addr pc, Dwarf_Die *kid, uint64_t span[2]);
void sym_kids_free(void *kids);

/* A file holding this process's vDSO image (a memfd path under
 * /proc/self/fd), or NULL when there is no vDSO. */
const char *sym_vdso_path(void);

/* zcache.c: the find_debuginfo callback (libdwfl's standard one, then
 * a decompressed copy kept in the cache directory set by
 * sym_zcache_use(); NULL or "": none).  dirs: the absolute debug roots,
 * whose .build-id directories it reads itself (held, not copied). */
void sym_zcache_use(const char *dir, char *const *dirs, size_t ndirs);
int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                       Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                       GElf_Word debuglink_crc, char **debuginfo_file_name);

/* Demangled C++ name (malloc'd), or a copy of name when it is not one. */
char *sym_demangle(const char *name);

/* strdup whose failure is sym_oom()'s. */
char *sym_strdup(const char *s);

/* dwoom.c: an allocation that fails while an address is named.
 * sym_module_dwarf(): dwfl_module_getdwarf() with our out-of-memory
 * handler set on the Dwarf (and its alternate file); NULL once DWARF is
 * lost.  sym_oom_guard(): makes here the place a failure jumps to (after
 * setjmp(*here) in the caller), returning the guard before it, which
 * sym_oom_unguard() puts back.  sym_oom(): our own allocations' failure:
 * the reserve given back, then the jump, or prof_oom() outside a guard.
 * sym_dwarf_lost(): 1 after a failure (no DWARF read again).
 * sym_oom_say(): one line on stderr, the first time, naming the file.
 * sym_oom_reserve(): the size of each of the driver's two reserve blocks.
 * sym_oom_end(): the fault handling the first guard set up, undone.
 * sym_oom_libdw_calls(): how often libdw called our handler (tests). */
Dwarf *sym_module_dwarf(Dwfl_Module *mod, Dwarf_Addr *bias);
jmp_buf *sym_oom_guard(jmp_buf *here);
void sym_oom_unguard(jmp_buf *outer);
_Noreturn void sym_oom(void);
int sym_dwarf_lost(void);
void sym_oom_say(const char *path);
size_t sym_oom_reserve(void);
void sym_oom_end(void);
unsigned long sym_oom_libdw_calls(void);

/* Hex string of a build-id's bytes, into buf (2*len+1). */
void sym_hex(const unsigned char *bits, size_t len, char *buf);

#endif
