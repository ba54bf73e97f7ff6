/*
 * profile.h - the one in-memory profile every reader produces and every
 * writer consumes (record -> model -> pprof; pprof -> model -> text, csv,
 * gmon, ...).  It mirrors pprof's profile.proto so that reading and
 * writing pprof loses nothing, and adds nothing a report could not get
 * back from a pprof file.
 *
 * Identity rules (as in pprof):
 *   - ids are 1-based indices: mappings[id-1], functions[id-1],
 *     locations[id-1].  0 means "none".
 *   - a mapping belongs to one process image (pid + exec generation):
 *     two processes mapping the same library have two mappings, so an
 *     address is meaningful only together with its mapping.
 *   - a location is one (mapping, address) pair; its lines[] are the
 *     inline chain at that address, innermost function first.  A location
 *     not yet symbolized has nlines == 0.
 *   - a sample's locs[] is its call stack, leaf first; for a caller frame
 *     the address is the return address minus one.
 *
 * Ownership: every string and array is owned by the profile and freed by
 * prof_free().  Strings are NUL-terminated UTF-8 (or raw bytes as found).
 */
#ifndef PROFIL_CLI_PROFILE_H
#define PROFIL_CLI_PROFILE_H

#include <stddef.h>
#include <stdint.h>

struct prof_mapping {
	uint64_t start, limit;   /* [start, limit) in the process */
	uint64_t file_offset;    /* file offset mapped at start */
	char *path;              /* "" when unknown; "[vdso]" for the vDSO */
	char *build_id;          /* lowercase hex, "" when unknown */
	uint32_t pid;            /* process image it belongs to */
	uint8_t has_functions, has_lines; /* symbolization found them */
};

struct prof_function {
	char *name;              /* demangled; "module+0xoffset" when unknown */
	char *system_name;       /* mangled (linker) name, or same as name */
	char *filename;          /* source file, "" when unknown */
	int64_t start_line;
};

struct prof_line {
	uint64_t function_id;
	int64_t line;            /* 0 when unknown */
};

struct prof_location {
	uint64_t mapping_id;     /* 0: in no known mapping */
	uint64_t address;        /* absolute address in the process */
	size_t nlines;
	struct prof_line *lines; /* innermost first */
};

struct prof_sample {
	size_t nlocs;
	uint64_t *locs;          /* location ids, leaf first */
	int64_t count;           /* samples */
	int64_t cpu_ns;          /* count * period_ns */
	uint32_t pid, tid;       /* 0 when unknown */
	char *thread;            /* thread name, "" when unknown */
	char *comm;              /* process command name, "" when unknown */
};

/* A process recorded (from pprof: derived from comments, see pprof.c). */
struct prof_process {
	uint32_t pid, ppid;
	char *cmdline;           /* arguments joined by spaces */
};

struct profile {
	struct prof_mapping *mappings;   size_t nmappings;
	struct prof_function *functions; size_t nfunctions;
	struct prof_location *locations; size_t nlocations;
	struct prof_sample *samples;     size_t nsamples;
	struct prof_process *processes;  size_t nprocesses;
	int64_t period_ns;       /* CPU time one sample stands for */
	int64_t time_ns;         /* start, ns since the Unix epoch */
	int64_t duration_ns;     /* wall time of the recording */
	char *command;           /* the recorded command line */
	char *engine;            /* e.g. "thread-cputime-timers" */
	uint64_t lost;           /* samples lost (ring full, ...) */
	char **comments;         size_t ncomments; /* other free text */
};

/* Allocation failure in any of these prints one line and exits(1): the
 * command has no way to carry on without memory. */
struct profile *prof_new(void);
void prof_free(struct profile *p);

/* Builders: each returns the new (or existing, for the intern calls) id. */
uint64_t prof_add_mapping(struct profile *p, const struct prof_mapping *m); /* copies strings */
/* The id of a mapping the same as m (path, build-id, range and file
 * offset; its pid aside), added if there is none: a file several
 * processes map at the same place (every non-PIE cc1 of a build, a forked
 * child's program and libraries) is one mapping, so each of its
 * instructions one location (a make -j2 recording's 49,335 locations were
 * 19,311 so).  The mapping keeps the pid of the first to add it. */
uint64_t prof_intern_mapping(struct profile *p, const struct prof_mapping *m);
uint64_t prof_intern_function(struct profile *p, const char *name, const char *system_name,
                              const char *filename, int64_t start_line);
uint64_t prof_intern_location(struct profile *p, uint64_t mapping_id, uint64_t address);
/* Adds count to the sample with the same stack, pid, tid (merging); the
 * thread and comm strings are copied. */
void prof_add_sample(struct profile *p, const uint64_t *locs, size_t nlocs, int64_t count,
                     uint32_t pid, uint32_t tid, const char *thread, const char *comm);
/* Sets a location's inline chain (innermost first); replaces any before. */
void prof_set_lines(struct profile *p, uint64_t location_id, const struct prof_line *lines,
                    size_t n);
/* Keeps strings: copies them. */
void prof_add_process(struct profile *p, uint32_t pid, uint32_t ppid, const char *cmdline);
void prof_add_comment(struct profile *p, const char *text);
/* Sum of all samples' count. */
int64_t prof_total(const struct profile *p);
/* Processes (distinct pids, sampled or not; an exec keeps the pid) and
 * threads (distinct pid and tid among the samples). */
void prof_count_tasks(const struct profile *p, size_t *processes, size_t *threads);

/* Added for readers and writers (cli/format, cli/report): */
/* Like prof_add_sample with an explicit CPU time (a reader keeps the
 * file's values); prof_add_sample uses count * period_ns, so set
 * period_ns before adding samples with it. */
void prof_add_sample_ns(struct profile *p, const uint64_t *locs, size_t nlocs, int64_t count,
                        int64_t cpu_ns, uint32_t pid, uint32_t tid, const char *thread,
                        const char *comm);
/* A new location even if (mapping, address) is known: a reader keeps a
 * file's distinct locations distinct. */
uint64_t prof_add_location(struct profile *p, uint64_t mapping_id, uint64_t address);
/* Replaces a string field of the profile (command, engine) with a copy. */
void prof_set_string(char **field, const char *value);
/* Allocation that prints one line and exits(1) on failure, after giving
 * back the reserve (below), a block at a time, and trying again. */
void *prof_xrealloc(void *old, size_t n, size_t size); /* n * size, overflow-checked */
void *prof_xcalloc(size_t n, size_t size);
/* arr, or arr moved to room for twice *cap elements (first when *cap is
 * 0) when its n elements fill it: the one doubling of every array that
 * grows by one. */
void *prof_xgrow(void *arr, size_t n, size_t *cap, size_t first, size_t size);
char *prof_xstrdup(const char *s); /* NULL gives "" */
/* The length of a mapping's path without the " (deleted)" the kernel
 * adds to a file replaced or removed while mapped (the file at the bare
 * path may be its successor: its build-id says). */
size_t prof_path_bare_len(const char *path);
_Noreturn void prof_oom(void);
/* Address space set aside (blocks of len bytes, mapped but never
 * touched; two at most) before work that may exhaust it under a limit
 * (ulimit -v, RLIMIT_DATA), and given back a block at a time by
 * allocations that fail, so that what follows can still finish the
 * profile: symbolizing with libdw, whose allocations grow with the debug
 * information, takes them (cli/symbol/dwoom.c), and gives one back when
 * libdw fails; the other is for whatever fails next (the output's
 * compressor, pprof_write.c).  release returns 1 when it gave one back. */
void prof_reserve_take(size_t len);
int prof_reserve_release(void);

/* Names (names.c).  A module is its mapping's file name without
 * directories ("[unknown]" for none); a frame is the function of line k
 * of location l, or "module+0xoffset" (file offset) when l has no line k.
 * The result is the profile's string or buf. */
#define PROF_NAME_BUF 256
const char *prof_module_name(const struct profile *p, uint64_t mapping_id);
/* A location's module name: its mapping's, or a marker's own name. */
const char *prof_location_module(const struct profile *p, const struct prof_location *l);
/* Whether m is code a JIT made, named by its /tmp/perf-PID.map (the
 * record's build.c makes such mappings): no file holds its bytes. */
int prof_mapping_is_jit_map(const struct prof_mapping *m);
uint64_t prof_module_offset(const struct profile *p, const struct prof_location *l);
const char *prof_frame_name(const struct profile *p, const struct prof_location *l, size_t k,
                            char buf[PROF_NAME_BUF]);
/* Keeps only the samples keep() accepts (filters such as --pid). */
void prof_keep_samples(struct profile *p, int (*keep)(const struct prof_sample *, void *),
                       void *ctx);
void prof_free_sample(struct prof_sample *s);  /* its arrays and strings */
void prof_rehash_samples(struct profile *p);   /* after samples[] changed */

#endif
