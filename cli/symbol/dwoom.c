/*
 * dwoom.c - running out of memory (or faulting) in libdw, survived.
 *
 * libdw allocates units, abbreviations and line tables as it reads them,
 * and when malloc() fails it calls the Dwarf's out-of-memory handler,
 * which by default prints "libdw: Cannot allocate memory" and exits.
 * Under an address-space limit (ulimit -v, a batch system's memory limit)
 * that lost the whole recording after the command had run: python3 under
 * `prlimit --as=40000000 profil record` ran to its end, then the record
 * process died in dwarf_getaranges() with no profile written.
 *
 * Every Dwarf the symbolizer asks for (sym_module_dwarf) gets our handler
 * instead, its alternate (dwz) file's too, and each lookup that may reach
 * libdw runs under a guard (lookup.c).  An allocation that fails there,
 * libdw's or ours (sym_oom), gives back the model's reserve (profile.h)
 * and jumps back to the guard.  From then on this process reads no DWARF:
 * libdw's state may be half-built (it does not expect its handler to
 * return), so it is neither asked again nor ended (image.c); the address
 * is named again from the symbol table, as are all that follow, without
 * source lines, and one line on stderr says so.  Outside a guard a failed
 * allocation ends the process as before (prof_oom).
 *
 * libdw does not check every allocation: 0.188's dwarf_getsrclines()
 * dereferences a failed malloc() (SIGSEGV, found by the test of this
 * file), and its concurrent hash tables assert that a resize's malloc()
 * did not fail ("resize_coordinator: Assertion `htab->table' failed",
 * then abort(): the same test, once libprofil.so's DWARF grew).  So a
 * guard also catches SIGSEGV and SIGBUS (a module's file truncated while
 * mapped, damaged DWARF) and SIGABRT raised while it is set, to the
 * same end (glibc's abort() has released its lock when it raises the
 * signal, so leaving its handler by longjmp leaves nothing held; the
 * assertion's own line is printed first), and the stack's growth refused under the same limit is one
 * (read_srclines() takes 150 KiB of it): the handler runs on a stack of
 * its own.  It is installed with the first guard (the actions before it
 * are put back at the driver's end, sym_oom_end()), SA_NODEFER so that
 * jumping out of it leaves nothing blocked (the guards do not save the
 * signal mask: a system call a lookup), and outside a guard it puts the
 * default action back and returns, so that the fault kills the process
 * as it would have.
 *
 * Not thread-safe, like the rest of the symbolizer.
 */
#include "symint.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

static jmp_buf *volatile guard;   /* the running lookup's, NULL outside one */
static int lost;                  /* set at the first failure, for good */
static unsigned long libdw_calls; /* our handler's calls by libdw */

static _Noreturn void failed(void)
{
	prof_reserve_release();
	lost = 1;
	if (guard)
		longjmp(*guard, 1);
	prof_oom();
}

/* noreturn as an attribute, not _Noreturn: clang makes it part of the
 * type, as libdw's Dwarf_OOM has it */
__attribute__((noreturn)) static void libdw_failed(void)
{
	libdw_calls++;
	failed();
}

_Noreturn void sym_oom(void)
{
	failed();
}

int sym_dwarf_lost(void)
{
	return lost;
}

unsigned long sym_oom_libdw_calls(void)
{
	return libdw_calls;
}

Dwarf *sym_module_dwarf(Dwfl_Module *mod, Dwarf_Addr *bias)
{
	if (lost)
		return NULL;
	Dwarf *dbg = dwfl_module_getdwarf(mod, bias);
	if (dbg) {
		dwarf_new_oom_handler(dbg, libdw_failed);
		Dwarf *alt = dwarf_getalt(dbg);
		if (alt)
			dwarf_new_oom_handler(alt, libdw_failed);
	}
	return dbg;
}

/* A SIGABRT is ours only when this process raised it (an assertion's
 * abort()); one sent by another process keeps its default action. */
static void on_fault(int sig, siginfo_t *info, void *uc)
{
	(void)uc;
	int raised_here = sig != SIGABRT || (info && info->si_pid == getpid() &&
	                                      (info->si_code == SI_TKILL || info->si_code == SI_USER));
	if (guard && raised_here) {
		prof_reserve_release(); /* munmap(): safe here */
		lost = 1;
		longjmp(*guard, 1);
	}
	signal(sig, SIG_DFL); /* the fault again, with its default action */
	if (sig == SIGABRT)
		raise(sig); /* not repeated by returning, as a fault is */
}

/* The actions and stack before catch_faults(), put back by sym_oom_end(). */
static int caught;
static struct sigaction old_segv, old_bus, old_abrt;
static stack_t old_stack;

static void catch_faults(void)
{
	static char altstack[64 << 10]; /* the handler's: the faulting one may be full */
	if (caught)
		return;
	caught = 1;
	stack_t st = {.ss_sp = altstack, .ss_size = sizeof altstack};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER |
	              (sigaltstack(&st, &old_stack) == 0 ? SA_ONSTACK : 0);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	sigaction(SIGABRT, &sa, &old_abrt);
}

void sym_oom_end(void)
{
	if (!caught)
		return;
	caught = 0;
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	sigaction(SIGABRT, &old_abrt, NULL);
	sigaltstack(&old_stack, NULL);
}

jmp_buf *sym_oom_guard(jmp_buf *here)
{
	jmp_buf *outer = guard;
	catch_faults();
	guard = here;
	return outer;
}

void sym_oom_unguard(jmp_buf *outer)
{
	guard = outer;
}

/* The smaller of the address-space and data limits, 0 for none. */
static uint64_t limit_of(const char **what)
{
	static const struct {
		int resource;
		const char *what;
	} limits[] = {{RLIMIT_AS, "address space"}, {RLIMIT_DATA, "data"}};
	uint64_t least = 0;
	for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
		struct rlimit rl;
		if (getrlimit(limits[i].resource, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    (!least || rl.rlim_cur < least)) {
			least = rl.rlim_cur;
			*what = limits[i].what;
		}
	}
	return least;
}

/* Each of the driver's two blocks (profile.h): a thirty-second of the
 * limit, between 512 KiB and 8 MiB.  Together they move the point where
 * libdw fails that much earlier, and leave the profile (what is not named
 * yet, the output's buffers) that much to finish with.  Without a limit
 * malloc() does not fail short of the machine's memory: no reserve. */
size_t sym_oom_reserve(void)
{
	const char *what;
	uint64_t limit = limit_of(&what), r = limit / 32;
	if (!limit)
		return 0;
	return (size_t)(r < (512u << 10) ? 512u << 10 : r > (8u << 20) ? 8u << 20 : r);
}

/* " (address space limited to N MiB)", or the data limit's, or "". */
static void limit_words(char *buf, size_t size)
{
	const char *what;
	uint64_t limit = limit_of(&what);
	buf[0] = '\0';
	if (limit)
		snprintf(buf, size, " (%s limited to %llu MiB)", what,
		         (unsigned long long)(limit >> 20));
}

void sym_oom_say(const char *path)
{
	static int said;
	char why[96];
	if (said++)
		return;
	limit_words(why, sizeof why);
	fprintf(stderr, "profil: out of memory reading the debug information of %s%s; its "
	        "functions and every later one are named from symbol tables, without source "
	        "lines\n", path, why);
}
