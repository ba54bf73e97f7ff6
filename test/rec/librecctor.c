/*
 * librecctor.c - a library whose constructor does real work before the
 * program's main, as a C++ library's static initialisers do (LLVM's
 * registrations were a third of a short clang run).  The agent's
 * constructors run before every other object's (-z initfirst), so this
 * one is sampled as itself; it was `[start-up]` before.
 *
 * The dynamic loader passes constructors the program's arguments:
 * ctor_hot burns argv[1] units of CPU time (rec.h), 30 when absent.
 */
#include "rec.h"

#include <stdlib.h>

static unsigned long burned;

__attribute__((noinline)) static void ctor_hot(unsigned long units)
{
	REC_BURN(units, 0x43);
	burned = units;
}

__attribute__((constructor)) static void ctor_start(int argc, char **argv, char **envp)
{
	(void)envp;
	ctor_hot(argc > 1 ? strtoul(argv[1], NULL, 10) : 30);
}

unsigned long recctor_burned(void)
{
	return burned;
}
