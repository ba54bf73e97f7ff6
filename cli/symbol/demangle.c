/*
 * demangle.c - C++ names for people, and the symbolizer's small string
 * helpers.  The demangler is libstdc++'s __cxa_demangle (the Itanium C++
 * ABI's, kept with GCC), looked up with dlopen() the first time a _Z name
 * needs it rather than linked: loading libstdc++ (and the libm and
 * libgcc_s it needs) costs every run of profil 0.7 ms of relocation
 * (measured: 1.19 against 1.88 ms for an empty program linked with libdw
 * alone or with libstdc++ too), a tenth of `profil record`'s own CPU on a
 * short C program, which has no C++ name to demangle.  Without libstdc++
 * the mangled name is kept.
 *
 * Rust's names, v0 ("_R...") and legacy ("_ZN...17h<hash>E", which the
 * C++ demangler would read with the hash as a last component), are
 * libiberty's rust_demangle()'s, as binutils' c++filt shows them without
 * its verbose flag: paths without crate disambiguators and hashes
 * ("rustc_metadata::locator::get_metadata_section").  It returns NULL for
 * anything else, C++ names included.
 */
#include "symint.h"

#include <dlfcn.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIBSTDCXX_SONAME "libstdc++.so.6"

typedef char *demangle_fn(const char *mangled, char *buf, size_t *len, int *status);

/* __cxa_demangle, or NULL when libstdc++ cannot be loaded (asked once;
 * the symbolizer runs on one thread) */
static demangle_fn *demangler(void)
{
	static demangle_fn *fn;
	static int asked;
	if (!asked) {
		asked = 1;
		void *lib = dlopen(LIBSTDCXX_SONAME, RTLD_LAZY | RTLD_LOCAL);
		if (lib)
			*(void **)&fn = dlsym(lib, "__cxa_demangle");
	}
	return fn;
}

char *sym_strdup(const char *s)
{
	char *d = strdup(s);
	if (!d) {
		fputs("profil: out of memory\n", stderr);
		exit(1);
	}
	return d;
}

char *sym_demangle(const char *name)
{
	if (strncmp(name, "_R", 2) == 0 || strncmp(name, "_ZN", 3) == 0) {
		char *rust = rust_demangle(name, DMGL_PARAMS | DMGL_ANSI);
		if (rust)
			return rust;
	}
	/* Only _Z names are C++ (a C "main" must stay "main", which the
	 * demangler would read as a type name). */
	demangle_fn *demangle = strncmp(name, "_Z", 2) == 0 ? demangler() : NULL;
	if (demangle) {
		int status = -1;
		char *d = demangle(name, NULL, NULL, &status);
		if (d && status == 0)
			return d;
		free(d);
	}
	return sym_strdup(name);
}

void sym_hex(const unsigned char *bits, size_t len, char *buf)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < len; i++) {
		buf[2 * i] = digits[bits[i] >> 4];
		buf[2 * i + 1] = digits[bits[i] & 15];
	}
	buf[2 * len] = '\0';
}
