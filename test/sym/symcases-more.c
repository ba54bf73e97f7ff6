/*
 * symcases-more.c - the symbolizer's cases for addresses that symbols do
 * not name, the vDSO, changed files, caching across processes, and
 * demangling.
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* Not in any symbol: module+0xoffset in the ELF's address space. */
void sym_unknown_address(void)
{
	struct run r;
	run_prog("symprog", &r);
	struct profile *p = run_profile(&r, NULL, NULL);
	uint64_t mid = 0;
	for (size_t i = 0; i < p->nmappings && !mid; i++)
		if (strstr(p->mappings[i].path, "/symprog") && p->mappings[i].file_offset == 0)
			mid = i + 1;
	CHECK(mid);
	uint64_t header = prof_intern_location(p, mid, p->mappings[mid - 1].start + 0x10);
	struct prof_mapping gone = {.start = 0x7000000000, .limit = 0x7000010000,
	                            .file_offset = 0x2000, .path = "/nonexistent/libgone.so",
	                            .build_id = "", .pid = r.pid};
	uint64_t in_gone = prof_intern_location(p, prof_add_mapping(p, &gone), 0x7000000123);
	struct prof_mapping anon = {.start = 0x6000000000, .limit = 0x6000010000,
	                            .path = "", .build_id = "", .pid = r.pid};
	uint64_t in_anon = prof_intern_location(p, prof_add_mapping(p, &anon), 0x6000000040);
	uint64_t nowhere = prof_intern_location(p, 0, 0x1234);
	symbolize(p, NULL);
	fprintf(stderr, "  %s | %s | %s | %s\n", loc_name(p, header), loc_name(p, in_gone),
	        loc_name(p, in_anon), loc_name(p, nowhere));
	CHECK(strcmp(loc_name(p, header), "symprog+0x10") == 0);
	CHECK(strcmp(loc_name(p, in_gone), "libgone.so+0x2123") == 0);
	CHECK(strcmp(loc_name(p, in_anon), "[unknown]+0x40") == 0);
	CHECK(strcmp(loc_name(p, nowhere), "0x1234") == 0);
	CHECK(p->locations[nowhere - 1].nlines == 1);
	prof_free(p);
}

/* The vDSO is not on disk: ours names it (same kernel). */
void sym_vdso(void)
{
	struct run r;
	run_prog("symprog", &r);
	if (!r.vdso || !getauxval(AT_SYSINFO_EHDR)) { /* valgrind hides ours */
		printf("skipped: no vDSO clock_gettime here\n");
		return;
	}
	struct profile *p = run_profile(&r, NULL, NULL);
	uint64_t loc = add_loc(p, r.vdso + 1);
	CHECK(p->locations[loc - 1].mapping_id != 0);
	symbolize(p, NULL);
	const char *name = loc_name(p, loc);
	fprintf(stderr, "  vdso: %s\n", name);
	CHECK(strcmp(name, "__vdso_clock_gettime") == 0 || strcmp(name, "clock_gettime") == 0);
	prof_free(p);
}

/* The file at the path is not the one recorded (another build-id): its
 * symbols are not used; the recorded build-id finds the right file. */
void sym_changed_file(void)
{
	struct run r;
	char other[512], id[128], root[256], cmd[1024];
	run_prog("symprog", &r);
	snprintf(other, sizeof other, "%s/symprog-nopie", SYM_BIN);
	struct profile *p = run_profile(&r, "/symprog", other); /* recorded id: symprog's */
	uint64_t loc = add_loc(p, r.plain);
	const struct sym_options quiet = {.no_default_debug_dir = 1, .quiet = 1};
	symbolize(p, &quiet);
	CHECK(strncmp(loc_name(p, loc), "symprog-nopie+0x", 16) == 0);
	prof_free(p);

	file_build_id(SYM_BIN "/symprog", id, sizeof id);
	snprintf(root, sizeof root, "/tmp/symtest-%d", (int)getpid());
	snprintf(cmd, sizeof cmd, "mkdir -p %s/.build-id/%.2s && cp %s/symprog.debug "
	         "%s/.build-id/%.2s/%s.debug", root, id, SYM_BIN, root, id, id + 2);
	CHECK(system(cmd) == 0);
	const char *dirs[] = {root, NULL};
	const struct sym_options found = {.debug_dirs = dirs, .no_default_debug_dir = 1};
	p = run_profile(&r, "/symprog", other);
	loc = add_loc(p, r.plain);
	symbolize(p, &found);
	const char *names[] = {"plain_function"};
	long lines[] = {marked_line("symprog.c", "@plain")};
	expect_chain(p, loc, 1, names, lines, "test/sym/symprog.c");
	prof_free(p);
	snprintf(cmd, sizeof cmd, "rm -rf %s", root);
	CHECK(system(cmd) == 0);
}

/* Two processes, the same files at other addresses: both right, one
 * function each; a location that has lines already is left alone. */
void sym_two_processes(void)
{
	struct run a, b;
	run_prog("symprog", &a);
	run_prog("symprog", &b);
	struct profile *p = run_profile(&a, NULL, NULL);
	struct profile *q = run_profile(&b, NULL, NULL);
	for (size_t i = 0; i < q->nmappings; i++)
		prof_add_mapping(p, &q->mappings[i]);
	prof_free(q);
	uint64_t la = add_loc(p, a.lib), done = add_loc(p, a.plain);
	uint64_t fn = prof_intern_function(p, "already", "already", "", 0);
	struct prof_line line = {fn, 7};
	prof_set_lines(p, done, &line, 1);
	/* b's mappings were added last: add_loc picks the last match */
	uint64_t lb = add_loc(p, b.lib);
	CHECK(p->mappings[p->locations[lb - 1].mapping_id - 1].pid == b.pid);
	symbolize(p, NULL);
	CHECK(strcmp(loc_name(p, la), "symlib_function") == 0);
	CHECK(p->locations[la - 1].lines[0].function_id == p->locations[lb - 1].lines[0].function_id);
	CHECK(p->locations[done - 1].lines[0].function_id == fn);
	prof_free(p);
}

/* Names as people read them, by libiberty: C++ as libstdc++'s
 * __cxa_demangle writes them (std:: abbreviations kept, a clone suffix
 * named), Rust (v0 and legacy, an LTO suffix included), C as it is;
 * the same again when the answer is remembered. */
void sym_demangle_names(void)
{
	static const char *const cases[][2] = {
		{"_RNvNtCs5FxD4tM6viY_14rustc_metadata7locator20get_metadata_section",
		 "rustc_metadata::locator::get_metadata_section"},
		{"_RNvNvMs0_NtNtNtCsjrHSEGnQ3l9_3std3sys6thread4unixNtB7_6Thread3new12thread_start"
		 ".llvm.364393679", "<std::sys::thread::unix::Thread>::new::thread_start"},
		{"_ZN8rec_rust3hot17h0123456789abcdefE", "rec_rust::hot"},
		{"_ZN3foo3barEv", "foo::bar()"},
		{"_ZN3foo3barE", "foo::bar"},
		{"_ZNSs6appendEPKc", "std::string::append(char const*)"},
		{"_ZNSt6vectorIiSaIiEE9push_backEOi",
		 "std::vector<int, std::allocator<int> >::push_back(int&&)"},
		{"_Z3foov.cold", "foo() [clone .cold]"},
		{"_Zjunk", "_Zjunk"},
		{"main", "main"},
		{"_Rnot_rust", "_Rnot_rust"},
	};
	/* twice: the second round's answers are the memo's (demangle.c),
	 * each a copy of its own the caller frees */
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
			char *got = sym_demangle(cases[i][0]);
			char *again = sym_demangle(cases[i][0]);
			if (strcmp(got, cases[i][1]) != 0)
				fprintf(stderr, "  %s: %s, want %s\n", cases[i][0], got, cases[i][1]);
			CHECK(strcmp(got, cases[i][1]) == 0);
			CHECK(again != got && strcmp(again, got) == 0);
			free(got);
			CHECK(strcmp(again, cases[i][1]) == 0);
			free(again);
		}
}

const struct symcase symcases[] = {
	{"sym_pie", sym_pie},
	{"sym_nopie", sym_nopie},
	{"sym_inline_chain", sym_inline_chain},
	{"sym_shared_library", sym_shared_library},
	{"sym_cxx_demangled", sym_cxx_demangled},
	{"sym_demangle_names", sym_demangle_names},
	{"sym_stripped_build_id", sym_stripped_build_id},
	{"sym_stripped_debuglink", sym_stripped_debuglink},
	{"sym_usr_lib_debug", sym_usr_lib_debug},
	{"sym_dynsym_only", sym_dynsym_only},
	{"sym_dynsym_index_at_once", sym_dynsym_index_at_once},
	{"sym_unknown_address", sym_unknown_address},
	{"sym_vdso", sym_vdso},
	{"sym_changed_file", sym_changed_file},
	{"sym_two_processes", sym_two_processes},
	{"sym_symtab_matches_libdwfl", sym_symtab_matches_libdwfl},
	{"sym_symtab_kept", sym_symtab_kept},
	{"sym_symtab_kept_small", sym_symtab_kept_small},
	{"sym_plt_stubs", sym_plt_stubs},
	{"sym_fde_start_names", sym_fde_start_names},
	{"sym_go_table", sym_go_table},
	{"sym_debug_cache", sym_debug_cache},
	{"sym_debug_cache_first_run", sym_debug_cache_first_run},
	{"sym_debuginfod_only_with_servers", sym_debuginfod_only_with_servers},
	{"sym_cu_ranges_cache", sym_cu_ranges_cache},
	{"sym_cu_lines_cache", sym_cu_lines_cache},
	{"sym_cu_kids_cache", sym_cu_kids_cache},
	{"sym_addr_answers_kept", sym_addr_answers_kept},
	{"sym_addr_answers_merged", sym_addr_answers_merged},
	{"sym_addr_answers_strings", sym_addr_answers_strings},
	{"sym_addr_spans", sym_addr_spans},
	{"sym_libdw_out_of_memory", sym_libdw_out_of_memory},
	{"sym_reach_orders_stably", sym_reach_orders_stably},
	{NULL, NULL},
};
