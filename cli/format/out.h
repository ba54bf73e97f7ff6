/*
 * out.h - output files written atomically: a temporary file beside the
 * target, fsynced and renamed over it only when everything succeeded, so
 * a failed write never leaves a partial file or spoils an old one.
 * A target that exists and is not a regular file (/dev/null, /dev/full, a
 * FIFO) is written in place; its errors are reported all the same.
 */
#ifndef PROFIL_CLI_OUT_H
#define PROFIL_CLI_OUT_H

#include <stddef.h>
#include <stdio.h>

struct outfile;

/* path NULL or "-": standard output.  NULL on failure, with a one-line
 * message (naming path and the reason) in err. */
struct outfile *out_open(const char *path, char *err, size_t errlen);
/* Whether out_open(path) would be refused, asked without creating
 * anything: 0, or -1 with the same kind of line in err (a caller about to
 * run a long command asks before it, not after). */
int out_check(const char *path, char *err, size_t errlen);
FILE *out_fp(struct outfile *o);
/* Flushes, syncs, renames into place, frees o: 0, or -1 with err set and
 * the temporary file removed. */
int out_commit(struct outfile *o, char *err, size_t errlen);
/* Drops the output (temporary file removed) and frees o. */
void out_abort(struct outfile *o);

#endif
