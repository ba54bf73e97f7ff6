/*
 * demangle.c - C++ and Rust names for people, and the symbolizer's small
 * string helpers.
 *
 * Both demanglers are libiberty's, linked statically (Debian ships only
 * libiberty.a; its licence's linking exception allows it), the code
 * binutils' c++filt runs:
 *  - Rust's names, v0 ("_R...") and legacy ("_ZN...17h<hash>E", which the
 *    C++ demangler would read with the hash as a last component), by
 *    rust_demangle(), as c++filt shows them without its verbose flag:
 *    paths without crate disambiguators and hashes
 *    ("rustc_metadata::locator::get_metadata_section").  It returns NULL
 *    for anything else, C++ names included.
 *  - C++ names (the Itanium ABI's "_Z...") by cplus_demangle_v3(), the
 *    cp-demangle.c that GCC also builds into libstdc++'s __cxa_demangle,
 *    with the same options (parameters, std:: abbreviations kept short:
 *    no DMGL_VERBOSE), so the same names.  It used to be __cxa_demangle
 *    itself, dlopen()ed at the first _Z name so that C programs did not
 *    pay libstdc++'s loading; but most real commands meet a C++ name
 *    (gcc's cc1 is C++), and that dlopen (relocating libstdc++, libm and
 *    libgcc_s) was a tenth of `profil record`'s own CPU on a 20 ms gcc -c.
 * Anything else, or a name neither can read, is kept as it is.
 */
#include "symint.h"

#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *sym_strdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		sym_oom();
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
	if (strncmp(name, "_Z", 2) == 0) {
		char *cxx = cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI);
		if (cxx)
			return cxx;
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
