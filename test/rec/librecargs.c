/*
 * librecargs.c - a library whose constructor keeps the arguments the
 * dynamic loader passes it, for rec-ctor to print after dlopen(): glibc
 * passes a library dlopen()ed the program's arguments as the C library
 * keeps them, which the agent once left at argc 0 and argv NULL.
 */
#include "rec.h"

static int seen_argc = -1;
static const char *seen_argv0;

__attribute__((constructor)) static void args_start(int argc, char **argv, char **envp)
{
	(void)envp;
	seen_argc = argc;
	seen_argv0 = argv ? argv[0] : 0;
}

int recargs_argc(void)
{
	return seen_argc;
}

const char *recargs_argv0(void)
{
	return seen_argv0;
}
