/*
 * gmon.h - a gmon.out for one module of the profile, read by GNU gprof
 * together with that module's file.
 */
#ifndef PROFIL_CLI_GMON_H
#define PROFIL_CLI_GMON_H

#include <stdio.h>

#include "../model/profile.h"

/* module: a path or file name; NULL for the executable of the first
 * process.  0, or -1 after one line on stderr. */
int gmon_write(const struct profile *p, const char *module, FILE *f);

#endif
