/*
 * symtest.h - the symbolizer's tests: a run of a test program (symprog),
 * a profile built by hand from the addresses it printed, and checks on
 * what symbolize_profile() made of them.
 */
#ifndef PROFIL_TEST_SYMTEST_H
#define PROFIL_TEST_SYMTEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "../../cli/symbol/symbolize.h"

#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); exit(1); } } while (0)

/* What one run of a test program printed. */
struct run {
	uint32_t pid;
	uint64_t plain, inlined, lib, cxx, libc, vdso; /* probes, 0 if absent */
	char maps[64][640];  /* /proc/self/maps lines */
	size_t nmaps;
};

void run_prog(const char *prog, struct run *r);
/* A profile with r's file mappings; a mapping's path is replaced by
 * as_path when it ends in from (NULL: none). */
struct profile *run_profile(const struct run *r, const char *from, const char *as_path);
/* Location of address (in the mapping containing it, or none). */
uint64_t add_loc(struct profile *p, uint64_t address);
/* Symbolizes with the given options, failing the test on error. */
void symbolize(struct profile *p, const struct sym_options *opt);

/* Checks location loc's chain: n frames named names[i] (innermost first)
 * at lines[i] (-1: any), functions in files ending with file ("": none). */
void expect_chain(const struct profile *p, uint64_t loc, size_t n, const char *const *names,
                  const long *lines, const char *file);
/* Line of the source of test/sym/ marked "@mark". */
long marked_line(const char *source, const char *mark);
/* Lowercase hex build-id of a file, "" when none. */
void file_build_id(const char *path, char *buf, size_t size);
/* What the symbolizer names its kept caches by: the build-id and the
 * size of .debug_info in hex, "<id>-<size>" (path holds its DWARF). */
void file_kept_key(const char *path, char *buf, size_t size);
/* The size of the file at path (its inode into *ino unless NULL), -1
 * when there is none. */
long file_size(const char *path, ino_t *ino);
/* The image of the file at path in c, found by its build-id (the test
 * fails if there is none). */
struct sym_cache;
struct sym_image;
struct sym_image *image_of(struct sym_cache *c, const char *path);
/* Name of loc's innermost function. */
const char *loc_name(const struct profile *p, uint64_t loc);

/* A case's exit status when it cannot run here (after saying why). */
#define SYM_SKIP 77

struct symcase {
	const char *name;
	void (*fn)(void);
};
extern const struct symcase symcases[];

/* The cases (symcases.c, symcases-more.c, symcases-table.c,
 * symcases-stubs.c, symcases-cache.c, symcases-lines.c, symcases-kids.c,
 * symcases-addrs.c, symcases-oom.c). */
void sym_pie(void);
void sym_nopie(void);
void sym_inline_chain(void);
void sym_shared_library(void);
void sym_cxx_demangled(void);
void sym_stripped_build_id(void);
void sym_stripped_debuglink(void);
void sym_usr_lib_debug(void);
void sym_dynsym_only(void);
void sym_dynsym_index_at_once(void);
void sym_unknown_address(void);
void sym_vdso(void);
void sym_changed_file(void);
void sym_two_processes(void);
void sym_symtab_matches_libdwfl(void);
void sym_symtab_kept(void);
void sym_symtab_kept_small(void);
void sym_demangle_names(void);
void sym_plt_stubs(void);
void sym_fde_start_names(void);
void sym_go_table(void);
void sym_debug_cache(void);
void sym_debug_cache_first_run(void);
void sym_debuginfod_only_with_servers(void);
void sym_cu_ranges_cache(void);
void sym_cu_lines_cache(void);
void sym_cu_kids_cache(void);
void sym_addr_answers_kept(void);
void sym_addr_answers_merged(void);
void sym_addr_answers_strings(void);
void sym_addr_spans(void);
void sym_libdw_out_of_memory(void);
void sym_reach_orders_stably(void);

/* symcases-lines.c, for symcases-kids.c too: real modules' addresses
 * around every line-table row, and their chains looked up with a cache
 * directory (kept_run_every(): how many differ from the chains without
 * one, which the first run, with dir NULL, gathers; bad: the only text
 * a differing chain may have, "" any). */
#define MAX_ADDRS 40000
#define KEPT_MODULES 5
struct module {
	const char *path;
	uint64_t *addrs;
	size_t n;
	char **want;  /* libdw's chain per address */
};
size_t kept_modules(struct module *mods);
void kept_modules_free(struct module *mods, size_t n);
size_t kept_run_every(struct module *mods, size_t nmods, const char *dir, const char *bad,
                      size_t every);
/* The same, every address, with at_end(cache) called before the cache is
 * freed. */
struct sym_cache;
size_t kept_run_ending(struct module *mods, size_t nmods, const char *dir,
                       void (*at_end)(struct sym_cache *));

#endif
