/*
 * perfmap.h - a process's /tmp/perf-PID.map: the names a JIT gave the
 * code it made (perfmap.c says which JITs write one and which files are
 * trusted).
 */
#ifndef PROFIL_CLI_PERFMAP_H
#define PROFIL_CLI_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct perfmap_entry {
	uint64_t start, end;   /* [start, end) in the process */
	char *name;            /* control characters replaced by '?' */
	size_t order;          /* line number among the valid lines */
	uint64_t mapping_id;   /* the profile mapping made for it; 0: none yet */
};

struct perfmap {
	char *path;
	struct perfmap_entry *v; /* by start, then order */
	uint64_t *reach;         /* reach[i]: the largest end in v[0..i] */
	size_t n;
};

/*
 * The map of process pid, started at start_ns (CLOCK_REALTIME; 0 if
 * unknown).  NULL when there is none (why is "") or it is not trusted or
 * cannot be read (why says so, in a few words).
 */
struct perfmap *perfmap_load(uint32_t pid, int64_t start_ns, char *why, size_t whylen);

/* The function whose code holds pc, the last written if several; NULL. */
struct perfmap_entry *perfmap_find(struct perfmap *pm, uint64_t pc);

void perfmap_free(struct perfmap *pm);

#endif
