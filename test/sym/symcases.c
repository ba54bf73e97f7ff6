/*
 * symcases.c - what the symbolizer must get right (issue 10, "Symbols"),
 * one case per kind of file.  Each runs a test program, builds a profile
 * from the addresses it printed, and symbolizes it after it exited.
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct sym_options no_debug_dirs = {.no_default_debug_dir = 1, .quiet = 1};

static void expect_plain(const char *prog)
{
	struct run r;
	run_prog(prog, &r);
	struct profile *p = run_profile(&r, NULL, NULL);
	uint64_t loc = add_loc(p, r.plain);
	symbolize(p, NULL);
	const char *names[] = {"plain_function"};
	long lines[] = {marked_line("symprog.c", "@plain")};
	expect_chain(p, loc, 1, names, lines, "test/sym/symprog.c");
	const struct prof_mapping *m = &p->mappings[p->locations[loc - 1].mapping_id - 1];
	CHECK(m->has_functions && m->has_lines);
	prof_free(p);
}

void sym_pie(void) { expect_plain("symprog"); }
void sym_nopie(void) { expect_plain("symprog-nopie"); }

/* inner() inlined into middle() inlined into outer(): innermost first,
 * each caller at its call site. */
void sym_inline_chain(void)
{
	struct run r;
	run_prog("symprog", &r);
	struct profile *p = run_profile(&r, NULL, NULL);
	uint64_t loc = add_loc(p, r.inlined);
	symbolize(p, NULL);
	const char *names[] = {"inner", "middle", "outer"};
	long lines[] = {marked_line("symprog.c", "@inner"), marked_line("symprog.c", "@middle"),
	                marked_line("symprog.c", "@outer")};
	expect_chain(p, loc, 3, names, lines, "test/sym/symprog.c");
	prof_free(p);
}

void sym_shared_library(void)
{
	struct run r;
	run_prog("symprog", &r);
	struct profile *p = run_profile(&r, NULL, NULL);
	uint64_t loc = add_loc(p, r.lib);
	symbolize(p, NULL);
	const char *names[] = {"symlib_function"};
	long lines[] = {marked_line("symlib.c", "@lib")};
	expect_chain(p, loc, 1, names, lines, "test/sym/symlib.c");
	prof_free(p);
}

void sym_cxx_demangled(void)
{
	struct run r;
	run_prog("symprog", &r);
	struct profile *p = run_profile(&r, NULL, NULL);
	uint64_t loc = add_loc(p, r.cxx);
	symbolize(p, NULL);
	const char *names[] = {"ns::Klass::method(int)"};
	long lines[] = {marked_line("symcxx.cc", "@cxx")};
	expect_chain(p, loc, 1, names, lines, "test/sym/symcxx.cc");
	const struct prof_function *f = &p->functions[p->locations[loc - 1].lines[0].function_id - 1];
	CHECK(strcmp(f->system_name, "_ZN2ns5Klass6methodEi") == 0);
	prof_free(p);
}

/* A debug root laid out like /usr/lib/debug, holding symprog's
 * debuginfo under its build-id only. */
static void make_debug_root(char *root, size_t size, const char *id)
{
	char dir[512], cmd[2048];
	snprintf(root, size, "/tmp/symtest-%d", (int)getpid());
	snprintf(dir, sizeof dir, "%s/.build-id/%.2s", root, id);
	snprintf(cmd, sizeof cmd, "mkdir -p %s && cp %s/symprog.debug %s/%s.debug", dir, SYM_BIN,
	         dir, id + 2);
	CHECK(system(cmd) == 0);
}

static void remove_debug_root(const char *root)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

/* Stripped of everything; its debuginfo found by build-id alone. */
void sym_stripped_build_id(void)
{
	struct run r;
	char root[256], id[128], stripped[512];
	run_prog("symprog", &r);
	snprintf(stripped, sizeof stripped, "%s/symprog.stripped", SYM_BIN);
	file_build_id(stripped, id, sizeof id);
	CHECK(id[0]);
	make_debug_root(root, sizeof root, id);
	const char *dirs[] = {root, NULL};
	struct sym_options opt = {.debug_dirs = dirs, .no_default_debug_dir = 1};

	struct profile *p = run_profile(&r, "/symprog", stripped);
	uint64_t loc = add_loc(p, r.inlined);
	symbolize(p, &opt);
	const char *names[] = {"inner", "middle", "outer"};
	long lines[] = {marked_line("symprog.c", "@inner"), -1, -1};
	expect_chain(p, loc, 3, names, lines, "test/sym/symprog.c");
	prof_free(p);

	/* without the root nothing names it: the debuginfo did */
	p = run_profile(&r, "/symprog", stripped);
	loc = add_loc(p, r.plain);
	symbolize(p, &no_debug_dirs);
	CHECK(strncmp(loc_name(p, loc), "symprog.stripped+0x", 19) == 0);
	prof_free(p);
	remove_debug_root(root);
}

/* Stripped, with a .gnu_debuglink to .debug/symprog.debug beside it. */
void sym_stripped_debuglink(void)
{
	struct run r;
	char linked[512];
	run_prog("symprog", &r);
	snprintf(linked, sizeof linked, "%s/linked/symprog", SYM_BIN);
	struct profile *p = run_profile(&r, "/symprog", linked);
	uint64_t loc = add_loc(p, r.plain);
	symbolize(p, &no_debug_dirs);
	const char *names[] = {"plain_function"};
	long lines[] = {marked_line("symprog.c", "@plain")};
	expect_chain(p, loc, 1, names, lines, "test/sym/symprog.c");
	prof_free(p);
}

/* libc's debuginfo from libc6-dbg in /usr/lib/debug, searched by default. */
void sym_usr_lib_debug(void)
{
	struct run r;
	run_prog("symprog", &r);
	struct profile *p = run_profile(&r, NULL, NULL);
	uint64_t loc = add_loc(p, r.libc);
	const struct prof_mapping *m = &p->mappings[p->locations[loc - 1].mapping_id - 1];
	char debug[600];
	struct stat st;
	snprintf(debug, sizeof debug, "/usr/lib/debug/.build-id/%.2s/%s.debug", m->build_id,
	         m->build_id + 2);
	if (stat(debug, &st) != 0) {
		printf("skipped: no %s (Debian: apt-get install libc6-dbg)\n", debug);
		return;
	}
	symbolize(p, NULL);
	const struct prof_location *l = &p->locations[loc - 1];
	const struct prof_function *f = &p->functions[l->lines[0].function_id - 1];
	fprintf(stderr, "  libc: %s %s:%lld\n", f->name, f->filename, (long long)l->lines[0].line);
	CHECK(l->lines[0].line > 0 && f->filename[0] && strchr(f->name, '+') == NULL);
	prof_free(p);
}

/* symprog's run (into r) as a profile whose libsymlib.so is the copy
 * with only .dynsym (its path into lib). */
static struct profile *dynsym_profile(struct run *r, char *lib, size_t size)
{
	run_prog("symprog", r);
	snprintf(lib, size, "%s/libsymlib.dynsym.so", SYM_BIN);
	return run_profile(r, "/libsymlib.so", lib);
}

/* Only .dynsym: the exported name, no line. */
void sym_dynsym_only(void)
{
	struct run r;
	char lib[512];
	struct profile *p = dynsym_profile(&r, lib, sizeof lib);
	uint64_t loc = add_loc(p, r.lib);
	symbolize(p, &no_debug_dirs);
	const char *names[] = {"symlib_function"};
	long lines[] = {0};
	expect_chain(p, loc, 1, names, lines, "");
	const struct prof_mapping *m = &p->mappings[p->locations[loc - 1].mapping_id - 1];
	CHECK(m->has_functions && !m->has_lines);
	prof_free(p);
}

/* A module without DWARF and with at least eight addresses to name gets
 * its symbol index at once (symtab.c's DIRECT_ASKS), not after eight
 * passes of libdwfl over its table; the names are the same. */
void sym_dynsym_index_at_once(void)
{
	struct run r;
	char lib[512];
	struct profile *p = dynsym_profile(&r, lib, sizeof lib);
	uint64_t loc[16];
	for (int i = 0; i < 16; i++)
		loc[i] = add_loc(p, r.lib + (uint64_t)i);
	unsigned long asks = sym_symtab_libdwfl_asks();
	symbolize(p, &no_debug_dirs);
	asks = sym_symtab_libdwfl_asks() - asks;
	fprintf(stderr, "  16 addresses in %s: libdwfl asked %lu times\n", lib, asks);
	CHECK(asks < 8);
	const char *names[] = {"symlib_function"};
	long lines[] = {0};
	for (int i = 0; i < 16; i++)
		expect_chain(p, loc[i], 1, names, lines, "");
	prof_free(p);
}
