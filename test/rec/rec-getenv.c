/*
 * rec-getenv.c - a program with a getenv of its own, which every library
 * in the process then calls instead of libc's.  bash has one, which
 * answered the agent's constructor from a table of shell variables that
 * a library loaded beside the agent (tcmalloc) had started: no
 * PROFIL_RECORD_DIR, and bash went unprofiled.  This one knows no
 * variable at all.
 *
 *   rec-getenv [UNITS]   getenv_hot for UNITS of CPU time (rec.h)
 */
#include "rec.h"

#include <stdlib.h>

char *getenv(const char *name)
{
	(void)name;
	return NULL;
}

__attribute__((noinline)) static void getenv_hot(unsigned long units)
{
	REC_BURN(units, 0x47);
}

int main(int argc, char **argv)
{
	getenv_hot(argc > 1 ? strtoul(argv[1], NULL, 10) : 30);
	return 0;
}
