/*
 * pprof.h - the profile as a pprof file: gzipped profile.proto
 * (github.com/google/pprof, proto/profile.proto).
 */
#ifndef PROFIL_CLI_PPROF_H
#define PROFIL_CLI_PPROF_H

#include <stddef.h>

#include "../model/profile.h"

/* Writes p to path ("-": standard output) atomically.  0, or -1 after
 * printing one line on stderr naming the file and the problem; an old
 * file at path is then untouched. */
int pprof_write(const struct profile *p, const char *path);

/* Reads a pprof file, gzipped or not.  0 with *out set, or -1 with a
 * one-line message in err (the caller prefixes nothing: it names path).
 * Hostile input cannot crash it, make it loop or allocate without bound:
 * the decompressed size is capped (PPROF_MAX_BYTES, or the environment's
 * PROFIL_MAX_INPUT bytes when set and smaller), every index is checked. */
#define PPROF_MAX_BYTES (1ull << 30)
int pprof_read(const char *path, struct profile **out, char *err, size_t errlen);

/* The comment prefixes that carry what profile.proto has no field for;
 * see pprof_write.c. */
#define PPROF_C_COMMAND "profil:command "
#define PPROF_C_ENGINE "profil:engine "
#define PPROF_C_LOST "profil:lost "
#define PPROF_C_PROCESS "profil:process "
#define PPROF_C_MAPPING "profil:mapping "

#endif
