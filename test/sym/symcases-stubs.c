/*
 * symcases-stubs.c - addresses no symbol covers, named as binutils names
 * them: PLT stubs after the function they jump to ("memcmp@plt", as
 * objdump -d prints them), and code of a stripped file after the start
 * of the FDE that holds it (readelf --debug-frames), one name per
 * function however many CFI rows it has.
 *
 * Both compare with binutils on the test's own programs and on system
 * files every Debian machine has (sort, libc): files we did not build.
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define BASE 0x100000000ull /* where each file is "mapped" in the profile */

/* A profile with path mapped whole at BASE, as a process would map it:
 * the symbolizer's bias makes BASE + vaddr the file's vaddr. */
static struct profile *file_profile(const char *path, uint64_t *mid)
{
	char id[128];
	file_build_id(path, id, sizeof id);
	struct profile *p = prof_new();
	struct prof_mapping m = {.start = BASE, .limit = BASE + (1ull << 32), .file_offset = 0,
	                         .path = (char *)path, .build_id = id, .pid = 1};
	*mid = prof_add_mapping(p, &m);
	return p;
}

/* Path of the first mapping of r whose path ends in tail, into buf. */
static int mapped_path(const struct run *r, const char *tail, char *buf, size_t size)
{
	for (size_t i = 0; i < r->nmaps; i++) {
		const char *slash = strchr(r->maps[i], '/');
		if (!slash)
			continue;
		snprintf(buf, size, "%s", slash);
		buf[strcspn(buf, "\n")] = '\0';
		size_t n = strlen(buf), k = strlen(tail);
		if (n >= k && strcmp(buf + n - k, tail) == 0)
			return 1;
	}
	return 0;
}

#define MAXSTUBS 4096

static int ends_plt(const char *name)
{
	size_t n = strlen(name);
	return n > 4 && strcmp(name + n - 4, "@plt") == 0;
}

/* Every stub objdump names in file's PLT sections, each symbolized at
 * its first and last byte: the same name, or the test fails.  Returns
 * how many were compared. */
static size_t compare_stubs(const char *file)
{
	static uint64_t addr[MAXSTUBS], at[MAXSTUBS][2];
	static char want[MAXSTUBS][200];
	char cmd[1200], line[400], name[200];
	snprintf(cmd, sizeof cmd, "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null",
	         file);
	FILE *f = popen(cmd, "r");
	CHECK(f != NULL);
	size_t n = 0;
	unsigned long long a;
	while (fgets(line, sizeof line, f) && n < MAXSTUBS)
		/* "0000000000003030 <getenv@plt>:"; IRELATIVE slots print as
		 * *ABS*+0x...@plt (no function to name them after), the
		 * binder's PLT0 as <first@plt-0x10> */
		if (sscanf(line, "%llx <%199[^>]>:", &a, name) == 2 && ends_plt(name) &&
		    !strstr(name, "*ABS*")) {
			addr[n] = a;
			snprintf(want[n++], sizeof want[0], "%s", name);
		}
	pclose(f);
	uint64_t mid;
	struct profile *p = file_profile(file, &mid);
	for (size_t i = 0; i < n; i++) {
		/* the last byte of a stub is the next stub's address - 1,
		 * or within the 8 bytes of the smallest (.plt.got) stub */
		uint64_t last = i + 1 < n && addr[i + 1] - addr[i] <= 16 ? addr[i + 1] - 1
		                : addr[i] + 7;
		at[i][0] = prof_intern_location(p, mid, BASE + addr[i]);
		at[i][1] = prof_intern_location(p, mid, BASE + last);
	}
	symbolize(p, NULL);
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < 2; j++)
			if (strcmp(loc_name(p, at[i][j]), want[i]) != 0) {
				fprintf(stderr, "  %s: %#llx: objdump %s, ours %s\n", file,
				        (unsigned long long)addr[i], want[i], loc_name(p, at[i][j]));
				CHECK(!"stub named as objdump does");
			}
	prof_free(p);
	fprintf(stderr, "  %s: %zu stubs named as objdump names them\n", file, n);
	return n;
}

void sym_plt_stubs(void)
{
	struct run r;
	char libc[512], prog[512];
	run_prog("symprog", &r);
	CHECK(mapped_path(&r, "/symprog", prog, sizeof prog));
	CHECK(compare_stubs(prog) >= 3); /* qsort, printf, dlopen... */
	if (mapped_path(&r, "/libc.so.6", libc, sizeof libc))
		CHECK(compare_stubs(libc) >= 1);
	if (access("/usr/bin/sort", R_OK) == 0)
		CHECK(compare_stubs("/usr/bin/sort") >= 20);
}

#define MAXFDES 8192

/* Every FDE of a stripped file, symbolized at its first byte, middle
 * and last byte: each unnamed address is "<file>+0x<FDE start>".  At
 * least min FDEs must have had all three unnamed, so that a file where
 * symbols named everything cannot pass for one that groups by FDE. */
static void compare_fdes(const char *file, size_t min)
{
	static uint64_t lo[MAXFDES], hi[MAXFDES], at[MAXFDES][3];
	char cmd[1200], line[400];
	snprintf(cmd, sizeof cmd, "readelf --debug-dump=frames '%s' 2>/dev/null", file);
	FILE *f = popen(cmd, "r");
	CHECK(f != NULL);
	size_t n = 0;
	while (fgets(line, sizeof line, f) && n < MAXFDES) {
		const char *pc = strstr(line, " FDE ") ? strstr(line, "pc=") : NULL;
		unsigned long long a, b;
		if (pc && sscanf(pc, "pc=%llx..%llx", &a, &b) == 2 && b > a)
			lo[n] = a, hi[n++] = b;
	}
	pclose(f);
	uint64_t mid;
	struct profile *p = file_profile(file, &mid);
	for (size_t i = 0; i < n; i++) {
		at[i][0] = prof_intern_location(p, mid, BASE + lo[i]);
		at[i][1] = prof_intern_location(p, mid, BASE + lo[i] + (hi[i] - lo[i]) / 2);
		at[i][2] = prof_intern_location(p, mid, BASE + hi[i] - 1);
	}
	symbolize(p, NULL);
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	size_t whole = 0, prefix = strlen(base) + 3;
	for (size_t i = 0; i < n; i++) {
		char want[300];
		snprintf(want, sizeof want, "%s+0x%llx", base, (unsigned long long)lo[i]);
		int unnamed = 0;
		for (int j = 0; j < 3; j++) {
			const char *got = loc_name(p, at[i][j]);
			if (strncmp(got, want, prefix) != 0)
				continue; /* a symbol (or a PLT stub) names it */
			unnamed++;
			if (strcmp(got, want) != 0) {
				fprintf(stderr, "  %s: FDE %#llx..%#llx: ours %s\n", file,
				        (unsigned long long)lo[i], (unsigned long long)hi[i], got);
				CHECK(!"unnamed code named by its FDE's start");
			}
		}
		whole += unnamed == 3;
	}
	prof_free(p);
	fprintf(stderr, "  %s: %zu of %zu FDEs unnamed and named by their start\n", file, whole,
	        n);
	CHECK(whole >= min);
}

void sym_fde_start_names(void)
{
	char stripped[512];
	snprintf(stripped, sizeof stripped, "%s/symprog.stripped", SYM_BIN);
	compare_fdes(stripped, 3);
	/* lld's: its table's section is SHT_X86_64_UNWIND; unread, functions
	 * were split into their CFI rows' starts.  The table answers every
	 * address it bounds, so libdw is asked at most for the last FDE. */
	snprintf(stripped, sizeof stripped, "%s/symprog.lld.stripped", SYM_BIN);
	if (access(stripped, R_OK) == 0) {
		unsigned long asks = sym_fde_libdw_asks();
		compare_fdes(stripped, 3);
		CHECK(sym_fde_libdw_asks() - asks <= 3);
	} else {
		fprintf(stderr, "  %s: not here (no ld.lld), not compared\n", stripped);
	}
	/* functions of many CFI rows, linked by lld (clang's own library) */
	const char *llvm = "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1";
	if (access(llvm, R_OK) == 0)
		compare_fdes(llvm, 100);
	else
		fprintf(stderr, "  %s: not here, not compared\n", llvm);
	if (access("/usr/bin/sort", R_OK) == 0)
		compare_fdes("/usr/bin/sort", 100);
}
