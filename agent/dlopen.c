/*
 * dlopen.c - a library dlopen()ed is in the stack walk's tables and the
 * module log when dlopen() returns, wherever the call can be wrapped
 * without the program seeing a difference.
 *
 * Why.  The signal handler walks stacks only with the published tables
 * (src/unwind/), which follow the loader at each poll (modpoll.c): the
 * helper's sweep, every SWEEP_MS.  Until then every sample in the new
 * library ended at [unknown] after a guessed frame: a Python script's
 * first 100 ms in each thread after `import hashlib`, 55% of a short
 * one's samples.  In a process whose helper is still deferred
 * (lazy_helper.c) the poll never came: the helper waits for a sample
 * whose stack walks whole, which a library without a table denies, and
 * every sample of a plugin's hot loop had no callers.
 *
 * Why not a plain wrapper.  glibc's dlopen takes its caller from its
 * return address, and the caller's object decides: the namespace the
 * library is loaded into, the search of a name without a '/' along the
 * caller's DT_RUNPATH, the DT_RPATH chain of the loader (which the new
 * object's own dependencies walk), and what $ORIGIN means.  A wrapper
 * that called it would be the caller.  So the symbol is a few
 * instructions of assembly that ask dlopen_route() where to go, with the
 * caller's return address, and jump there with the caller's stack as it
 * was: to glibc's dlopen when the caller could make a difference, or to
 * open_then_poll(), which calls it and then polls (modpoll.c).
 *
 * No difference is possible (glibc 2.36's dl_open_worker_begin() and
 * _dl_map_object()) when the name is NULL, or when no auditor watches
 * (LD_AUDIT, DT_AUDIT: its la_objsearch() is told the loader), the name
 * has no '$', the caller is in the base namespace (ours), no loaded
 * object but the program has a DT_RPATH (the loader chains then search
 * only the program's, from any caller), and either the name has a '/'
 * (no search) or the caller has no DT_RUNPATH (a search along the same
 * paths as from this library).
 * Python's extension modules are loaded by full path; ctypes' bare names
 * from a module with a DT_RUNPATH go straight to glibc, and wait for
 * the poll as before; a deferred helper is made first (dlopen is a safe
 * point, lazy_helper.c), so that the poll comes.
 *
 * x86-64 only, as the stack walk is: elsewhere dlopen is not interposed.
 * Outside signal context (dlopen is not async-signal-safe).
 */
#include "agent.h"
#include "../src/engine/engine.h"
#include "../src/unwind/unwind.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)

typedef void *(*dlopen_fn)(const char *, int);

static void *_Atomic real_dlopen;

static dlopen_fn glibc_dlopen(void)
{
	return (dlopen_fn)agent_next(&real_dlopen, "dlopen");
}

/* Where glibc's dlopen cannot be found: the failure dlopen reports. */
static void *no_dlopen(const char *file, int mode)
{
	(void)file, (void)mode;
	return NULL;
}

/* glibc's dlopen, then a poll.  Its constructors run inside the call,
 * before any poll: a helper is made first (a safe point) so that a sample
 * in them can wake it to poll at once (engine.h sample_in_dlopen). */
static void *open_then_poll(const char *file, int mode)
{
	if (agent_running()) {
		int saved = errno;
		lazy_helper_now();
		errno = saved;
	}
	int outer = sample_in_dlopen; /* a constructor's own dlopen() */
	sample_in_dlopen = SAMPLE_IN_DLOPEN_CALL;
	void *handle = glibc_dlopen()(file, mode);
	sample_in_dlopen = outer;
	if (handle && agent_running()) {
		int saved = errno;
		modules_poll(); /* the new objects' tables and log entries */
		errno = saved;
	}
	return handle;
}

/* What the loaded objects say, for the caller at `from`. */
struct callers_view {
	uintptr_t from;
	int first;        /* the next object listed is the program */
	int caller_seen;  /* from lies in an object listed (base namespace) */
	int caller_runpath;
	int other_rpath;  /* an object but the program has DT_RPATH */
	int program_runpath;
	int program_audit; /* DT_AUDIT, DT_DEPAUDIT: auditors see the loader */
};

static int dynamic_has(const struct dl_phdr_info *info, ElfW(Sxword) tag)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		for (; d->d_tag != DT_NULL; d++)
			if (d->d_tag == tag)
				return 1;
	}
	return 0;
}

static int look(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct callers_view *v = arg;
	int program = v->first;
	v->first = 0;
	if (program) {
		v->program_runpath = dynamic_has(info, DT_RUNPATH);
		v->program_audit = dynamic_has(info, DT_AUDIT) || dynamic_has(info, DT_DEPAUDIT);
	} else if (dynamic_has(info, DT_RPATH)) {
		v->other_rpath = 1;
	}
	uintptr_t lo, hi;
	if (!v->caller_seen && uw_segment_of(info, v->from, &lo, &hi) == 0) {
		v->caller_seen = 1;
		v->caller_runpath = dynamic_has(info, DT_RUNPATH);
	}
	return 0;
}

/* Whether a call of glibc's dlopen from this library does what one from
 * the code at `from` would. */
static int same_from_here(const char *file, uintptr_t from)
{
	if (!file)
		return 1;
	const char *audit = getenv("LD_AUDIT");
	if (strchr(file, '$') || (audit && *audit))
		return 0;
	struct callers_view v = {.from = from, .first = 1};
	modules_iterate(look, &v); /* lists the base namespace only */
	if (!v.caller_seen) {
		Dl_info info;
		if (dladdr((void *)from, &info))
			return 0; /* an object of another namespace */
		v.caller_runpath = v.program_runpath; /* glibc takes the program */
	}
	if (v.other_rpath || v.program_audit)
		return 0;
	return strchr(file, '/') != NULL || !v.caller_runpath;
}

/* Called by the entry below with dlopen's arguments and its caller's
 * return address; returns the function to jump to. */
HIDDEN dlopen_fn dlopen_route(const char *file, int mode, uintptr_t from);
dlopen_fn dlopen_route(const char *file, int mode, uintptr_t from)
{
	(void)mode;
	dlopen_fn real = glibc_dlopen();
	if (!real)
		return no_dlopen;
	if (!agent_running())
		return real;
	int saved = errno;
	int same = same_from_here(file, from);
	if (!same) {
		lazy_helper_now(); /* its polls, at least (a safe point) */
		/* glibc returns to the caller, not to us: the mark is taken
		 * off by this thread's first sample that walks whole
		 * (SAMPLE_IN_DLOPEN_UNTIL_WHOLE, engine.h) */
		if (!sample_in_dlopen)
			sample_in_dlopen = SAMPLE_IN_DLOPEN_UNTIL_WHOLE;
	}
	errno = saved;
	return same ? open_then_poll : real;
}

/* dlopen(file, mode): the arguments kept in their registers across the
 * route's call (the stack aligned to 16 for it), then a jump, so that
 * whichever function runs returns straight to the caller and finds the
 * caller's return address where glibc's dlopen reads it.  The CFI lets
 * a walk (ours, a debugger's) through while the route runs. */
__asm__(".text\n"
        ".globl dlopen\n"
        ".type dlopen, @function\n"
        "dlopen:\n"
        "\t.cfi_startproc\n"
        "\tendbr64\n"
        "\tpushq %rdi\n"
        "\t.cfi_adjust_cfa_offset 8\n"
        "\tpushq %rsi\n"
        "\t.cfi_adjust_cfa_offset 8\n"
        "\tsubq $8, %rsp\n"
        "\t.cfi_adjust_cfa_offset 8\n"
        "\tmovq 24(%rsp), %rdx\n"
        "\tcall dlopen_route\n"
        "\taddq $8, %rsp\n"
        "\t.cfi_adjust_cfa_offset -8\n"
        "\tpopq %rsi\n"
        "\t.cfi_adjust_cfa_offset -8\n"
        "\tpopq %rdi\n"
        "\t.cfi_adjust_cfa_offset -8\n"
        "\tjmp *%rax\n"
        "\t.cfi_endproc\n"
        ".size dlopen, .-dlopen\n");

#endif
