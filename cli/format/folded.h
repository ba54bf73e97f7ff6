/*
 * folded.h - collapsed stacks ("main;f;g 12"), root first, one line per
 * unique stack, as flamegraph.pl, speedscope and inferno read them.
 */
#ifndef PROFIL_CLI_FOLDED_H
#define PROFIL_CLI_FOLDED_H

#include <stdio.h>

#include "../model/profile.h"

/* Lines sorted by stack; inline frames appear as frames of their own.
 * Returns 0 (write errors show on f). */
int folded_write(const struct profile *p, FILE *f);

#endif
