/*
 * dynsym.c - a function a loaded object defines, and its size, from the
 * object's own dynamic symbol table, found through its GNU hash table.
 *
 * Why not dladdr1(RTLD_DL_SYMENT): glibc answers it by walking every
 * symbol of the object for the nearest one (_dl_addr), some 3,000 for
 * the C library.  The lazy helper asks the size of 25 system call
 * wrappers at every process image's start (engine/lazy_helper.c), and
 * those 25 walks were 0.3 ms of CPU on a 2-core VM: the biggest single
 * item of a profiled /bin/true's start after the loader's own work.  A
 * hash lookup per name is a few hundred nanoseconds.
 *
 * What is read is the object's in-memory image as the loader mapped it
 * (the dynamic section, the hash table, the symbols and their names), so
 * nothing is opened or allocated; the object must stay loaded while the
 * answer is used.  An object without DT_GNU_HASH (no linker has made such
 * shared objects by default since 2006; musl's own loader, not ours, is
 * the exception) answers "not found", and the caller falls back on
 * dladdr1.
 *
 * Not for signal context (it could be, but nothing needs it there).
 */
#include "base/base.h"

#include <elf.h>
#include <link.h>
#include <string.h>

struct dyn_tables {
	const ElfW(Sym) *symtab;
	const char *strtab;
	const uint32_t *gnu_hash;
	const uint16_t *versym; /* NULL: the object has no symbol versions */
};

/* The object's extent as its PT_LOAD segments say: [lo, hi) of vaddrs. */
static void load_extent(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi)
{
	*lo = UINTPTR_MAX, *hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_vaddr < *lo)
			*lo = ph->p_vaddr;
		if (ph->p_vaddr + ph->p_memsz > *hi)
			*hi = ph->p_vaddr + ph->p_memsz;
	}
}

/* A d_ptr as an address: glibc's loader adds the load bias to these
 * entries in place where the dynamic section is writable, other loaders
 * (and glibc where it is read-only) do not.  Either form is taken, by
 * where it points: into the object's mapped extent, or at an offset
 * inside it.  0 when it is neither. */
static uintptr_t dyn_address(const struct dl_phdr_info *info, uintptr_t v, uintptr_t lo,
                             uintptr_t hi)
{
	if (v >= info->dlpi_addr + lo && v < info->dlpi_addr + hi)
		return v;
	if (v >= lo && v < hi)
		return info->dlpi_addr + v;
	return 0;
}

static int dyn_tables(const struct dl_phdr_info *info, struct dyn_tables *t)
{
	uintptr_t lo, hi;
	memset(t, 0, sizeof *t);
	load_extent(info, &lo, &hi);
	if (lo >= hi)
		return -1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_DYNAMIC)
			continue;
		const ElfW(Dyn) *d = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
		size_t n = ph->p_memsz / sizeof *d;
		for (size_t k = 0; k < n && d[k].d_tag != DT_NULL; k++) {
			uintptr_t at = dyn_address(info, (uintptr_t)d[k].d_un.d_ptr, lo, hi);
			if (d[k].d_tag == DT_SYMTAB)
				t->symtab = (const ElfW(Sym) *)at;
			else if (d[k].d_tag == DT_STRTAB)
				t->strtab = (const char *)at;
			else if (d[k].d_tag == DT_GNU_HASH)
				t->gnu_hash = (const uint32_t *)at;
			else if (d[k].d_tag == DT_VERSYM)
				t->versym = (const uint16_t *)at;
		}
		break;
	}
	return t->symtab && t->strtab && t->gnu_hash ? 0 : -1;
}

static uint32_t gnu_hash_of(const char *name)
{
	uint32_t h = 5381;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	return h;
}

/* The symbol index defining name, or 0.  The table: nbuckets, symoffset,
 * bloom words, bloom shift, the bloom filter (ElfW(Addr) words), the
 * buckets, then one chain word per symbol from symoffset on, the last of
 * each bucket's run with its low bit set.  A name may be defined in
 * several versions (glibc's memcpy: the 2.2.5 one, a plain function, and
 * the 2.14 default, an IFUNC); the default is the one a lookup without a
 * version binds, dlsym()'s: a symbol whose version index has the hidden
 * bit (0x8000) is passed over. */
static uint32_t gnu_lookup(const struct dyn_tables *t, const char *name)
{
	const uint32_t *g = t->gnu_hash;
	uint32_t nbuckets = g[0], symoffset = g[1], bloom_words = g[2];
	if (nbuckets == 0)
		return 0;
	const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(g + 4) + bloom_words);
	const uint32_t *chain = buckets + nbuckets;
	uint32_t h = gnu_hash_of(name);
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return 0;
	for (;; i++) {
		uint32_t ch = chain[i - symoffset];
		if ((ch | 1) == (h | 1) && !(t->versym && (t->versym[i] & 0x8000)) &&
		    strcmp(t->strtab + t->symtab[i].st_name, name) == 0)
			return i;
		if (ch & 1)
			return 0;
	}
}

size_t dynsym_function(const struct dl_phdr_info *info, const char *name, uintptr_t *addr)
{
	struct dyn_tables t;
	*addr = 0;
	if (dyn_tables(info, &t) != 0)
		return 0;
	uint32_t i = gnu_lookup(&t, name);
	const ElfW(Sym) *s = i ? &t.symtab[i] : NULL;
	/* the low nibble is the type (ELF32_ST_TYPE and ELF64_ST_TYPE alike);
	 * not an IFUNC: its value is the resolver, not the code called */
	if (!s || s->st_shndx == SHN_UNDEF || s->st_size == 0 || (s->st_info & 0xf) != STT_FUNC)
		return 0;
	*addr = info->dlpi_addr + s->st_value;
	return s->st_size;
}
