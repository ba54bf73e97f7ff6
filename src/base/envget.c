/*
 * envget.c - our settings from the process's environment, read the way
 * libc's getenv reads it, whatever getenv the program links.
 *
 * A program may define getenv itself, and then every library's getenv,
 * ours included, is the program's.  bash does (lib/sh/getenv.c): before
 * its main it looks in its table of shell variables once that table
 * exists, and a library loaded beside ours that set a variable first
 * (gperftools' tcmalloc, preloaded with us) had made it: the agent's
 * constructor found no PROFIL_RECORD_DIR and left every bash of a
 * recording unprofiled, saying nothing.  So the engine and the agent
 * scan environ themselves: the array libc's setenv and putenv change
 * and the kernel's at exec.  A program that keeps its variables
 * elsewhere (bash's own setenv) does not change what we read; it does
 * not change what libc's getenv reads either.
 */
#include "base/base.h"

#include <string.h>

extern char **environ;

const char *profil_getenv(const char *name)
{
	size_t len = strlen(name);
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return NULL;
}
