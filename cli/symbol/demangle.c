/*
 * demangle.c - C++ names for people, and the symbolizer's small string
 * helpers.  The demangler is libstdc++'s __cxa_demangle (the Itanium C++
 * ABI's, kept with GCC): linked with -lstdc++, declared here because C
 * has no <cxxabi.h>.
 */
#include "symint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

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
	/* Only _Z names are C++ (a C "main" must stay "main", which the
	 * demangler would read as a type name). */
	if (strncmp(name, "_Z", 2) == 0) {
		int status = -1;
		char *d = __cxa_demangle(name, NULL, NULL, &status);
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
