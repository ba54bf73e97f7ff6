/*
 * nodebuginfod.c - libdwfl without libdebuginfod when no server is set.
 *
 * Why: when libdwfl finds no debuginfo for a module with a build-id
 * (dash, bash, /usr/bin/sort, liblzma: anything without a -dbgsym
 * package), dwfl_standard_find_debuginfo() ends by asking debuginfod, and
 * elfutils 0.188 (Debian 12) dlopen()s libdebuginfod.so.1 for that the
 * first time whether or not DEBUGINFOD_URLS names a server.  That library
 * pulls in libcurl and its thirty-odd dependencies (GnuTLS, Kerberos,
 * LDAP, ...): 8-11 ms of relocation per recording, a fifth of `profil
 * record`'s own CPU on a 3 s xz run and the largest single item of it.
 * Without a server the library can only answer "not found" (its
 * debuginfod_find_* return -ENOSYS), which is what libdwfl does when the
 * library is missing: nothing changes but the time.
 *
 * How: the profil executable defines dlopen(), which the dynamic linker
 * binds libdw's call to (the executable comes first in the lookup order,
 * and an unversioned definition satisfies its dlopen@GLIBC reference).
 * That one name, while DEBUGINFOD_URLS is unset or blank, gets NULL as if
 * it were not installed; every other call goes to the next dlopen (libc's,
 * or a sanitizer's interceptor) unchanged.  Set DEBUGINFOD_URLS and
 * libdebuginfod is loaded and used exactly as before.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#define DEBUGINFOD_SONAME "libdebuginfod.so"

/* Whether s is NULL or only blanks (libdebuginfod splits the list on
 * whitespace: a blank one names no server). */
static int blank(const char *s)
{
	if (!s)
		return 1;
	s += strspn(s, " \t\n");
	return *s == '\0';
}

static int refused(const char *file)
{
	if (!file || !blank(getenv("DEBUGINFOD_URLS")))
		return 0;
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	return strncmp(base, DEBUGINFOD_SONAME, sizeof DEBUGINFOD_SONAME - 1) == 0;
}

void *dlopen(const char *file, int mode)
{
	typedef void *open_fn(const char *, int);
	static open_fn *next; /* the same value whoever stores it */
	if (refused(file))
		return NULL;
	open_fn *f = __atomic_load_n(&next, __ATOMIC_RELAXED);
	if (!f) {
		f = (open_fn *)dlsym(RTLD_NEXT, "dlopen");
		__atomic_store_n(&next, f, __ATOMIC_RELAXED);
	}
	return f ? f(file, mode) : NULL;
}
