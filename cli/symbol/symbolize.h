/*
 * symbolize.h - turn a profile's addresses into functions, files and
 * lines, with elfutils' libdwfl.  The one interface to the symbolizer.
 *
 * What it reads: every mapping (path, build_id, start, limit,
 * file_offset, pid) and every location with nlines == 0.  Locations that
 * already have lines are left alone, so a profile read back from pprof
 * costs nothing, and a partly symbolized one is completed.
 *
 * What it fills: each such location's inline chain, innermost function
 * first (pprof's Line entries): the innermost entry carries the source
 * line at the address, each caller the line of the call site.  Functions
 * are interned (prof_intern_function) with the demangled name, the
 * linker (mangled) name as system_name, their source file and the line
 * they are declared on.  Mappings get has_functions / has_lines when at
 * least one of their locations got a name from symbols / a source line.
 * An address nothing names is never dropped: its function is
 * "module+0xoffset" (module = basename of the mapping's path, offset in
 * the ELF file's address space when the file could be read, else from
 * the start of the file), "[unknown]+0xoffset" for a mapping without a
 * path, "0xaddress" for a location in no mapping.
 *
 * Where symbols come from, per mapping: the file at the mapping's path,
 * when its build-id matches the recorded one (a mismatch means the file
 * changed since recording: its symbols are not trusted, one line on
 * stderr says so, and the file is searched by build-id instead, in the
 * debug directories: <dir>/.build-id/xx/rest, then rest.debug, whose
 * bias comes from the same file's mapping at offset 0); for a stripped
 * file, its
 * separate debuginfo by build-id (<dir>/.build-id/xx/rest.debug, as
 * Debian's -dbgsym and libc6-dbg packages install) or by .gnu_debuglink;
 * DEBUGINFOD_URLS is honoured when set (elfutils' libdebuginfod, if
 * installed); with no DWARF, .symtab or else .dynsym names the function,
 * and Go code none of them names, a Go program's own table (.gopclntab).
 * "[vdso]" is read from this process's own vDSO: the profile is
 * symbolized on the kernel that recorded it.
 *
 * Each file is opened once per call, however many processes mapped it,
 * and each distinct (file, address) is looked up once.
 *
 * Not thread-safe: call from one thread at a time.
 */
#ifndef PROFIL_CLI_SYMBOLIZE_H
#define PROFIL_CLI_SYMBOLIZE_H

#include <stddef.h>

#include "../model/profile.h"

/* A file that holds the module with build_id when the module's recorded
 * path may not (it was deleted or replaced, or is another root's): path
 * opens it, e.g. /proc/self/fd/N of a descriptor the caller keeps open
 * until symbolize_profile() returns. */
struct sym_file {
	const char *build_id; /* lowercase hex */
	const char *path;
};

struct sym_options {
	/* Extra debug roots searched before the default /usr/lib/debug,
	 * each laid out like it (.build-id/xx/rest.debug, or the file's
	 * own path below it); NULL-terminated; NULL for none. */
	const char *const *debug_dirs;
	/* Don't search /usr/lib/debug (tests that want one root only). */
	int no_default_debug_dir;
	/* No warnings on stderr (a changed file, ...). */
	int quiet;
	/* Where separate debuginfo with compressed sections is kept
	 * decompressed, as <build-id>.debug (created when missing); NULL or
	 * "" for no cache: libdw then inflates it on every run. */
	const char *debug_cache;
	/* Leave the kept indexes the call mapped (and its own tables) to the
	 * process's exit instead of unmapping and freeing them: for a caller
	 * that exits next (profil record).  Closing was a tenth of the record
	 * process's CPU on a short Python recording: one munmap a kept file,
	 * each a TLB shootdown on the other CPU, where the exit drops the
	 * whole address space at once (as clang's -disable-free does).
	 * libdwfl's sessions are still ended (image.c says why).  What is
	 * left stays reachable (symbolize.c), so leak checkers do not report
	 * it. */
	int leave_to_exit;
	/* Files tried, by build-id, after a module's recorded path and
	 * before the debug roots; nfiles of them. */
	const struct sym_file *files;
	size_t nfiles;
};

/*
 * Symbolizes every location of p that has no lines yet.  opt may be NULL
 * for the defaults.  Returns 0, or -1 with a one-line reason in err when
 * the symbolizer cannot work at all (out of libdwfl sessions, ...); a
 * file that cannot be read is not an error: its addresses get
 * "module+0xoffset" names.
 */
int symbolize_profile(struct profile *p, const struct sym_options *opt, char *err,
                      size_t errlen);

/*
 * A process's /tmp/perf-PID.map: the names a JIT gave the code it made
 * (perfmap.c says which JITs write one and which files are trusted).
 * sym_perfmap_load(): the map of process pid (ns_pid: its pid in a PID
 * namespace not ours, or 0), started at start_ns (CLOCK_REALTIME; 0 if
 * unknown), the file's path into path; NULL when there is none (why is
 * "") or it is not trusted or cannot be read (why says so, in a few
 * words, of the file path names).
 * sym_perfmap_find(): the function whose code holds pc, of the lines
 * naming it the last written; NULL.
 */
struct sym_perfmap_entry {
	uint64_t start, end;   /* [start, end) in the process */
	char *name;            /* control characters replaced by '?' */
	uint64_t mapping_id;   /* the caller's: 0 when loaded */
};
struct sym_perfmap;
struct sym_perfmap *sym_perfmap_load(uint32_t pid, uint32_t ns_pid, int64_t start_ns,
                                     char *path, size_t pathlen, char *why, size_t whylen);
const char *sym_perfmap_path(const struct sym_perfmap *pm);
struct sym_perfmap_entry *sym_perfmap_find(struct sym_perfmap *pm, uint64_t pc);
void sym_perfmap_free(struct sym_perfmap *pm);

#endif
