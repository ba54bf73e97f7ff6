/*
 * rec-ctor.c - a program whose library (librecctor.so) burns CPU time in
 * its constructor, before main: prints "ctor UNITS" with what it burned.
 * With "args", it also prints the name the C library keeps for it and
 * what the constructor of a library it dlopen()s (librecargs.so, beside
 * it) was passed:
 *
 *   rec-ctor [UNITS [args]]
 *   ctor UNITS
 *   name rec-ctor
 *   dlopen ctor argc 3 argv[0] rec-ctor
 */
#include "rec.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path ? path : "(null)";
}

static int show_args(void)
{
	char lib[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", lib, sizeof lib - 32);
	if (n <= 0)
		return 1;
	lib[n] = '\0';
	strcpy(strrchr(lib, '/') + 1, "librecargs.so");
	void *h = dlopen(lib, RTLD_NOW);
	int (*argc_of)(void) = h ? (int (*)(void))dlsym(h, "recargs_argc") : NULL;
	const char *(*argv0_of)(void) = h ? (const char *(*)(void))dlsym(h, "recargs_argv0") : NULL;
	if (!argc_of || !argv0_of) {
		fprintf(stderr, "rec-ctor: %s\n", dlerror());
		return 1;
	}
	printf("name %s\n", program_invocation_short_name);
	printf("dlopen ctor argc %d argv[0] %s\n", argc_of(), base(argv0_of()));
	return 0;
}

int main(int argc, char **argv)
{
	printf("ctor %lu\n", recctor_burned());
	return argc > 2 && strcmp(argv[2], "args") == 0 ? show_args() : 0;
}
