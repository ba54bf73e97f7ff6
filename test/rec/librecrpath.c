/*
 * librecrpath.so: linked with a DT_RPATH (the old tag) naming the
 * directory of librecplug.so, which it opens by its bare name: glibc
 * searches the caller's DT_RPATH, so the call finds it only when made
 * from here (a wrapper of dlopen that made it from its own object would
 * get "cannot open shared object file").
 */
#include "rec.h"

#include <dlfcn.h>
#include <stdio.h>

void *rpath_open_plug(void);
void *rpath_open_plug(void)
{
	void *h = dlopen("librecplug.so", RTLD_NOW);
	if (!h)
		fprintf(stderr, "librecrpath.so: %s\n", dlerror());
	return h;
}
