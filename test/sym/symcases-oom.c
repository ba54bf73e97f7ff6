/*
 * symcases-oom.c - libdw running out of memory (cli/symbol/dwoom.c).
 * Under an address-space limit libdw's allocations fail, and its own
 * handler ends the process ("libdw: Cannot allocate memory", exit 1):
 * profil record lost its whole profile that way.  Here a process maps
 * our library, then limits its address space to what it uses plus a
 * little, and names every function of the library: each address must
 * get a name (from DWARF until it fails, from the symbol table after),
 * and the process must live.  The slack is tried at several sizes, each
 * in a child of its own, so that libdw, not only our code, is the one
 * that fails in at least one of them.
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define LIBRARY SYM_BIN "/../../libprofil.so"
#define MAX_FUNCS 4096

/* The library's function symbols (nm), their addresses into addr. */
static size_t functions(uint64_t *addr, size_t max)
{
	FILE *f = popen("nm --defined-only " LIBRARY, "r");
	char line[512];
	size_t n = 0;
	CHECK(f != NULL);
	while (n < max && fgets(line, sizeof line, f)) {
		unsigned long long a;
		char type;
		if (sscanf(line, "%llx %c", &a, &type) == 2 && (type == 't' || type == 'T') && a)
			addr[n++] = a;
	}
	CHECK(pclose(f) == 0);
	return n;
}

/* This process's mapped address space, in bytes. */
static uint64_t address_space(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long kb = 0;
	CHECK(f != NULL);
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmSize: %llu kB", &kb) == 1)
			break;
	fclose(f);
	CHECK(kb > 0);
	return kb << 10;
}

/* In a child: the image opened, the limit set at slack bytes above what
 * the process maps, every function named.  Its exit status: 10, plus 1
 * when libdw called our handler, plus 2 when DWARF was given up; 1 when
 * an address got no name. */
static void limited(const uint64_t *addr, size_t n, uint64_t slack)
{
	struct sym_options opt = {.quiet = 1};
	struct sym_cache *c = sym_cache_new(&opt);
	struct sym_image *im = image_of(c, LIBRARY);
	prof_reserve_take(1 << 20); /* as symbolize_profile() takes it */
	prof_reserve_take(1 << 20);
	struct rlimit rl;
	rl.rlim_cur = rl.rlim_max = address_space() + slack;
	CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
	for (size_t i = 0; i < n; i++) {
		struct sym_frame f[SYM_MAX_FRAMES];
		size_t nf = sym_image_lookup(im, addr[i], f, SYM_MAX_FRAMES);
		CHECK(nf > 0 && f[0].name && f[0].name[0]);
	}
	exit(10 + (sym_oom_libdw_calls() > 0) + 2 * sym_dwarf_lost());
}

void sym_libdw_out_of_memory(void)
{
#ifdef __SANITIZE_ADDRESS__
	/* ASan's allocator reports a failed allocation instead of returning
	 * NULL, and its shadow is most of the address space: nothing here to
	 * see under it (make check runs this case without it) */
	fputs("sym_libdw_out_of_memory: not under ASan\n", stderr);
	exit(SYM_SKIP);
#endif
	static const uint64_t slacks[] = {0,         64 << 10, 128 << 10, 256 << 10,
	                                  512 << 10, 1 << 20,  2 << 20,  4 << 20};
	static uint64_t addr[MAX_FUNCS];
	size_t n = functions(addr, MAX_FUNCS);
	int libdw_failed = 0;
	CHECK(n > 200);
	for (size_t i = 0; i < sizeof slacks / sizeof slacks[0]; i++) {
		fflush(NULL);
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0)
			limited(addr, n, slacks[i]);
		int status;
		CHECK(waitpid(pid, &status, 0) == pid);
		fprintf(stderr, "slack %llu KiB: %s %d\n", (unsigned long long)(slacks[i] >> 10),
		        WIFEXITED(status) ? "exit" : "signal",
		        WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) >= 10 && WEXITSTATUS(status) <= 13);
		/* libdw's handler called, and DWARF given up after it */
		libdw_failed |= WEXITSTATUS(status) == 13;
	}
	CHECK(libdw_failed);
}
