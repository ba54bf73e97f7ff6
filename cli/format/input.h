/*
 * input.h - a whole input file in memory, gunzipped when it is gzip,
 * never more than a cap: a hostile file cannot make the reader allocate
 * without bound (a zip bomb stops at the cap with an error).
 */
#ifndef PROFIL_CLI_INPUT_H
#define PROFIL_CLI_INPUT_H

#include <stddef.h>
#include <stdint.h>

/* 0 with *buf (malloc'd, caller frees) and *len, or -1 with a one-line
 * message in err that names path. */
int input_load(const char *path, uint64_t cap, unsigned char **buf, size_t *len, char *err,
               size_t errlen);

#endif
