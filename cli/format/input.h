/*
 * input.h - a whole input file in memory, gunzipped when it is gzip,
 * never more than a cap: a hostile file cannot make the reader allocate
 * without bound (a zip bomb stops at the cap with an error).
 */
#ifndef PROFIL_CLI_INPUT_H
#define PROFIL_CLI_INPUT_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* 0 with *buf (malloc'd, caller frees) and *len, or -1 with a one-line
 * message in err that names path.  Path "-" is standard input. */
int input_load(const char *path, uint64_t cap, unsigned char **buf, size_t *len, char *err,
               size_t errlen);

/* fopen(path, "r") for a file a profile names (a module, a source):
 * only a regular file, and opening never blocks, so a hostile profile
 * naming a FIFO or a terminal cannot hang the report.  NULL with errno
 * (EINVAL for a file that is not regular). */
FILE *input_open_named(const char *path);

#endif
