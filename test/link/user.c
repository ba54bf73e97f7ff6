/*
 * user.c - libprofil-user.so: a library linked with libprofil, which a
 * program that is not loads with dlopen() and unloads (issue 9, item 10).
 * user_profile(fn) profiles a little work and, while profiling, creates a
 * thread running the caller's fn, which outlives the library.  The thread
 * is made by libprofil's pthread_create, as in any program that links
 * libprofil (here the global scope would give libc's), so it starts and
 * ends in libprofil's code.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>

#include "profil.h"

int user_profile(void *(*fn)(void *));

static volatile unsigned long sink;

int user_profile(void *(*fn)(void *))
{
	/* pcsample(), not profil(): in a library loaded with RTLD_LOCAL,
	 * profil binds to libc's (the global scope comes first) */
	static uintptr_t pcs[100000];
	pthread_t t;
	if (pcsample(pcs, 100000) != 0)
		return -1;
	void *self = dlopen("libprofil.so.1", RTLD_NOW | RTLD_NOLOAD);
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
		(int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))
			dlsym(self, "pthread_create");
	if (!create || create(&t, NULL, fn, NULL) != 0)
		return -1;
	dlclose(self);
	pthread_detach(t);
	for (unsigned long i = 0; i < 50000000; i++)
		sink += i;
	return (int)pcsample(NULL, 0);
}
