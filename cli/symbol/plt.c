/*
 * plt.c - names for the procedure linkage table's stubs: "memcmp@plt".
 *
 * A call into another module goes through a stub in .plt (.plt.sec with
 * IBT, .plt.got for functions bound at load time) that jumps through the
 * GOT.  No symbol covers the stubs, so without this their samples read
 * "module+0x<start of .plt>" while perf, gdb and objdump name each stub
 * after the function it jumps to.  Time there is real (a program calling
 * memcmp a billion times spends a few percent in memcmp@plt) and is the
 * caller's cost of calling across modules, so it gets its own name.
 *
 * The stub a slot belongs to is read from the stub itself, as binutils'
 * synthetic symbols are made: every x86-64 stub jumps with
 * "jmp *disp32(%rip)" (ff 25, or f2 ff 25 with BND) to its GOT slot, and
 * the dynamic relocation that fills that slot (R_X86_64_JUMP_SLOT in
 * .rela.plt, R_X86_64_GLOB_DAT in .rela.dyn for .plt.got) names the
 * function.  The first .plt entry (PLT0, the lazy binder's trampoline)
 * jumps to a slot no relocation fills and stays unnamed.  Other machines:
 * no names (the address is shown as an offset, as before).
 *
 * Everything is read with libelf from the module's main file; a separate
 * debuginfo file opened in its place has no stub bytes (SHT_NOBITS) and
 * yields no names.
 */
#include "symint.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct plt_stub {
	uint64_t start, end;
	char *name; /* "function@plt" */
};

struct sym_plt {
	struct plt_stub *v;
	size_t n, cap;
};

/* GOT slot -> function name, from the relocations that fill GOT slots. */
struct slot {
	uint64_t got;
	const char *name; /* in the ELF's string table: lives with the Elf */
};

static int slot_cmp(const void *a, const void *b)
{
	const struct slot *x = a, *y = b;
	return x->got < y->got ? -1 : x->got > y->got;
}

static int stub_cmp(const void *a, const void *b)
{
	const struct plt_stub *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Slots of every SHT_RELA section whose relocations fill GOT entries
 * with a function's address, sorted by slot. */
static struct slot *read_slots(Elf *elf, size_t *count)
{
	struct slot *v = NULL;
	size_t n = 0, cap = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
			continue;
		Elf_Scn *symscn = elf_getscn(elf, sh.sh_link);
		GElf_Shdr symsh;
		Elf_Data *rel = elf_getdata(scn, NULL);
		Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
		if (!rel || !syms || !gelf_getshdr(symscn, &symsh))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			if (!gelf_getrela(rel, (int)i, &r))
				break;
			unsigned type = GELF_R_TYPE(r.r_info);
			if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) ||
			    GELF_ST_TYPE(sym.st_info) == STT_OBJECT)
				continue;
			const char *name = elf_strptr(elf, symsh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			if (n == cap) {
				cap = cap ? 2 * cap : 64;
				struct slot *w = realloc(v, cap * sizeof *v);
				if (!w)
					break;
				v = w;
			}
			v[n++] = (struct slot){r.r_offset, name};
		}
	}
	if (n)
		qsort(v, n, sizeof *v, slot_cmp);
	*count = n;
	return v;
}

static const char *slot_name(const struct slot *v, size_t n, uint64_t got)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].got < got)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].got == got ? v[lo].name : NULL;
}

/* The GOT slot the stub at bytes[0..size) (address addr) jumps through:
 * the target of its first "jmp *disp32(%rip)"; 0 when it has none. */
static uint64_t stub_slot(const unsigned char *bytes, size_t size, uint64_t addr)
{
	for (size_t i = 0; i + 6 <= size; i++)
		if (bytes[i] == 0xff && bytes[i + 1] == 0x25) {
			int32_t disp;
			memcpy(&disp, bytes + i + 2, sizeof disp);
			return addr + i + 6 + (uint64_t)(int64_t)disp;
		}
	return 0;
}

static void add_stub(struct sym_plt *p, uint64_t start, uint64_t size, const char *fn)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct plt_stub *w = realloc(p->v, cap * sizeof *w);
		if (!w)
			return;
		p->v = w;
		p->cap = cap;
	}
	size_t len = strlen(fn) + sizeof "@plt";
	char *name = malloc(len);
	if (!name)
		return;
	strcpy(name, fn);
	strcat(name, "@plt");
	p->v[p->n++] = (struct plt_stub){start, start + size, name};
}

static int is_stub_section(const char *name)
{
	return name && (strcmp(name, ".plt") == 0 || strcmp(name, ".plt.sec") == 0 ||
	                strcmp(name, ".plt.got") == 0);
}

/* Every named stub of every PLT section of elf. */
static void read_stubs(Elf *elf, struct sym_plt *p)
{
	GElf_Ehdr eh;
	size_t shstrndx, nslots;
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	struct slot *slots = read_slots(elf, &nslots);
	for (Elf_Scn *scn = NULL; nslots && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !is_stub_section(elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    !(d = elf_getdata(scn, NULL)) || !d->d_buf || d->d_size < sh.sh_size)
			continue;
		/* 16-byte stubs unless the section says otherwise (.plt.got
		 * without IBT: 8) */
		uint64_t step = sh.sh_entsize >= 8 ? sh.sh_entsize : 16;
		for (uint64_t off = 0; off + step <= sh.sh_size; off += step) {
			uint64_t got = stub_slot((const unsigned char *)d->d_buf + off, step,
			                         sh.sh_addr + off);
			const char *fn = got ? slot_name(slots, nslots, got) : NULL;
			if (fn)
				add_stub(p, sh.sh_addr + off, step, fn);
		}
	}
	free(slots);
	if (p->n)
		qsort(p->v, p->n, sizeof *p->v, stub_cmp);
}

const char *sym_plt_name(struct sym_plt **t, struct Dwfl_Module *mod, uint64_t vaddr)
{
	if (!*t) {
		*t = calloc(1, sizeof **t);
		if (!*t)
			return NULL;
		GElf_Addr bias;
		Elf *elf = dwfl_module_getelf(mod, &bias);
		if (elf)
			read_stubs(elf, *t);
	}
	const struct sym_plt *p = *t;
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->v[mid].end <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->n && p->v[lo].start <= vaddr ? p->v[lo].name : NULL;
}

void sym_plt_free(struct sym_plt *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
	free(t);
}
