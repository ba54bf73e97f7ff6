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
#include "../model/index.h"

#include <libiberty/demangle.h>
#include <stdint.h>
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

static char *demangle_once(const char *name)
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

/*
 * The names demangled so far, by mangled name.  A program without DWARF
 * is named by its symbol table, one demangling per sampled address, and
 * its addresses share few names: a recording of 27 compiles asked 3,671
 * times (cc1 is C++), 15 M of the record process's 174 M instructions at
 * some 4,000 a name.  Demangling is a function of the name alone, so a
 * kept answer never goes stale; the memo stops taking names at MEMO_MAX
 * (a bound on its memory: later names are demangled each time) and is
 * left to the process's exit, as the symbol tables are.  Open
 * addressing, at most half full, by the model's string hash; not the
 * model's prof_index, whose growth exits when memory is short, where a
 * memo that cannot grow only stops remembering.  Single-threaded, as
 * the symbolizer is.
 */
#define MEMO_MAX (1u << 16)

struct memo_entry {
	uint64_t hash;
	char *mangled, *demangled; /* mangled NULL: a free slot */
};

static struct memo {
	struct memo_entry *v;
	size_t cap, n;
} memo;

static struct memo_entry *memo_slot(struct memo_entry *v, size_t cap, uint64_t h, const char *name)
{
	for (size_t i = h & (cap - 1);; i = (i + 1) & (cap - 1))
		if (!v[i].mangled || (v[i].hash == h && strcmp(v[i].mangled, name) == 0))
			return &v[i];
}

/* Room for one more name; 0 when the memo is full or memory is short. */
static int memo_room(void)
{
	if (2 * (memo.n + 1) <= memo.cap)
		return 1;
	size_t cap = memo.cap ? 2 * memo.cap : 1024;
	if (memo.n >= MEMO_MAX)
		return 0;
	struct memo_entry *v = calloc(cap, sizeof *v);
	if (!v)
		return 0;
	for (size_t i = 0; i < memo.cap; i++)
		if (memo.v[i].mangled)
			*memo_slot(v, cap, memo.v[i].hash, memo.v[i].mangled) = memo.v[i];
	free(memo.v);
	memo.v = v;
	memo.cap = cap;
	return 1;
}

char *sym_demangle(const char *name)
{
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return sym_strdup(name); /* neither demangler's: as it is */
	uint64_t h = prof_hash_str(name);
	struct memo_entry *e = memo.cap ? memo_slot(memo.v, memo.cap, h, name) : NULL;
	if (e && e->mangled)
		return sym_strdup(e->demangled);
	char *d = demangle_once(name);
	if (memo_room()) {
		char *copy = strdup(name), *kept = strdup(d);
		if (copy && kept) {
			*memo_slot(memo.v, memo.cap, h, name) = (struct memo_entry){h, copy, kept};
			memo.n++;
		} else {
			free(copy), free(kept);
		}
	}
	return d;
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
