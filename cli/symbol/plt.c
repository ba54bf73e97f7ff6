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

/* A PLT section's addresses; .plt.got's stubs jump through slots that
 * .rela.dyn fills, the others through .rela.plt's. */
struct stub_section {
	uint64_t lo, hi;
	int got;
};

#define MAX_STUB_SECTIONS 8

/* Stubs named one by one before the whole table is read: a recording
 * mostly samples a few stubs of a module, and reading them all took
 * libcrypto's 3,000 stubs and 12,000 relocations, 2.7 M instructions,
 * where one stub's name is a pass over .rela.plt (45,000). */
#define DIRECT_ASKS 16

struct sym_plt {
	struct stub_section sec[MAX_STUB_SECTIONS];
	size_t nsec;
	int read; /* the stubs below were read: after DIRECT_ASKS stubs */
	struct plt_stub *v;
	size_t n, cap;
	unsigned direct;        /* stubs named one by one so far */
	struct plt_stub *asked; /* those that have a name */
	size_t nasked, capasked;
};

/* GOT slot -> function name, from the relocations that fill GOT slots. */
struct slot {
	uint64_t got;
	const char *name; /* in the ELF's string table: lives with the Elf */
	int from_got;     /* a .plt.got stub's */
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

static struct slot *find_slot(struct slot *v, size_t n, uint64_t got)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].got < got)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].got == got ? &v[lo] : NULL;
}

/* Relocation i of rel into *r; 0 past the end.  A 64-bit file's are
 * read in place (libelf holds them in memory form, an array of
 * Elf64_Rela, which GElf_Rela is); gelf_getrela() converts one entry a
 * call, a cost on .rela.dyn's tens of thousands (libpython's 36,000,
 * all read when one of its .plt.got stubs is sampled). */
static int rela_at(Elf_Data *rel, int in_place, size_t i, GElf_Rela *r)
{
	if (!in_place)
		return gelf_getrela(rel, (int)i, r) != NULL;
	if (i >= rel->d_size / sizeof(Elf64_Rela))
		return 0;
	memcpy(r, (const char *)rel->d_buf + i * sizeof(Elf64_Rela), sizeof *r);
	return 1;
}

/* Names the slots (sorted) that the relocations of one SHT_RELA section
 * fill with a function's address; how many it named. */
static size_t name_slots(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct slot *v, size_t n)
{
	Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
	GElf_Shdr symsh;
	Elf_Data *rel = elf_getdata(scn, NULL);
	Elf_Data *syms = symscn ? elf_getdata(symscn, NULL) : NULL;
	size_t named = 0;
	if (!rel || !syms || !gelf_getshdr(symscn, &symsh))
		return 0;
	int in_place = gelf_getclass(elf) == ELFCLASS64 && rel->d_type == ELF_T_RELA && rel->d_buf;
	for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		if (!rela_at(rel, in_place, i, &r))
			break;
		unsigned type = GELF_R_TYPE(r.r_info);
		struct slot *slot;
		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
		    !(slot = find_slot(v, n, r.r_offset)) || slot->name ||
		    !gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) ||
		    GELF_ST_TYPE(sym.st_info) == STT_OBJECT)
			continue;
		const char *name = elf_strptr(elf, symsh.sh_link, sym.st_name);
		if (name && *name)
			slot->name = name, named++;
	}
	return named;
}

/*
 * Names the slots (sorted) from the relocations that fill them.  The
 * sections that say which section they relocate (SHF_INFO_LINK:
 * .rela.plt, a few hundred entries) first; the others (.rela.dyn: in
 * libLLVM 140,000, mostly R_X86_64_RELATIVE, 40% of a recording's
 * symbolizing when it was read whole for every module sampled) only
 * when a .plt.got stub's slot is left, or the first pass named none.
 */
static void read_slots(Elf *elf, struct slot *v, size_t n)
{
	size_t named = 0;
	for (int pass = 0; pass < 2; pass++) {
		int want = 0;
		for (size_t i = 0; i < n; i++)
			want |= !v[i].name && v[i].from_got;
		if (pass == 1 && named && !want)
			return;
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA && sh.sh_entsize &&
			    (sh.sh_flags & SHF_INFO_LINK ? 0 : 1) == pass)
				named += name_slots(elf, scn, &sh, v, n);
		}
	}
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

/* A stub named fn@plt appended to *v; its name, NULL without memory. */
static const char *add_to(struct plt_stub **v, size_t *n, size_t *capp, uint64_t start,
                          uint64_t size, const char *fn)
{
	if (*n == *capp) {
		size_t cap = *capp ? 2 * *capp : 64;
		struct plt_stub *w = realloc(*v, cap * sizeof *w);
		if (!w)
			return NULL;
		*v = w;
		*capp = cap;
	}
	size_t len = strlen(fn) + sizeof "@plt";
	char *name = malloc(len);
	if (!name)
		return NULL;
	strcpy(name, fn);
	strcat(name, "@plt");
	(*v)[(*n)++] = (struct plt_stub){start, start + size, name};
	return name;
}

static void add_stub(struct sym_plt *p, uint64_t start, uint64_t size, const char *fn)
{
	(void)add_to(&p->v, &p->n, &p->cap, start, size, fn);
}

static int is_stub_section(const char *name)
{
	return name && (strcmp(name, ".plt") == 0 || strcmp(name, ".plt.sec") == 0 ||
	                strcmp(name, ".plt.got") == 0);
}

/* The PLT sections of elf with their stubs' bytes, in p->sec; each
 * section's data into data[]. */
static void find_sections(Elf *elf, struct sym_plt *p, Elf_Data **data, GElf_Shdr *shdr)
{
	GElf_Ehdr eh;
	size_t shstrndx;
	if (!gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	for (Elf_Scn *scn = NULL; p->nsec < MAX_STUB_SECTIONS && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !is_stub_section(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (data) {
			Elf_Data *d = elf_getdata(scn, NULL);
			data[p->nsec] = d && d->d_buf && d->d_size >= sh.sh_size ? d : NULL;
			shdr[p->nsec] = sh;
		}
		p->sec[p->nsec++] = (struct stub_section){sh.sh_addr, sh.sh_addr + sh.sh_size,
		                                          strcmp(name, ".plt.got") == 0};
	}
}

/* 16-byte stubs unless the section says otherwise (.plt.got without
 * IBT: 8). */
static uint64_t stub_step(const GElf_Shdr *sh)
{
	return sh->sh_entsize >= 8 ? sh->sh_entsize : 16;
}

/* The GOT slot of every stub of the sections, sorted, without names. */
static struct slot *stub_slots(const struct sym_plt *p, Elf_Data **data, const GElf_Shdr *sh,
                               size_t *count)
{
	size_t n = 0, cap = 0;
	struct slot *v = NULL;
	for (size_t s = 0; s < p->nsec; s++)
		cap += data[s] ? sh[s].sh_size / stub_step(&sh[s]) : 0;
	if (cap && !(v = calloc(cap, sizeof *v)))
		cap = 0;
	for (size_t s = 0; s < p->nsec; s++) {
		uint64_t step = stub_step(&sh[s]);
		for (uint64_t off = 0; data[s] && off + step <= sh[s].sh_size && n < cap; off += step) {
			uint64_t got = stub_slot((const unsigned char *)data[s]->d_buf + off, step,
			                         sh[s].sh_addr + off);
			if (got)
				v[n++] = (struct slot){got, NULL, p->sec[s].got};
		}
	}
	if (n)
		qsort(v, n, sizeof *v, slot_cmp);
	*count = n;
	return v;
}

/* Every named stub of every PLT section of elf. */
static void read_stubs(Elf *elf, struct sym_plt *p)
{
	Elf_Data *data[MAX_STUB_SECTIONS];
	GElf_Shdr sh[MAX_STUB_SECTIONS];
	struct sym_plt found = {0};
	p->direct++;
	find_sections(elf, &found, data, sh);
	size_t nslots;
	struct slot *slots = stub_slots(&found, data, sh, &nslots);
	read_slots(elf, slots, nslots);
	for (size_t s = 0; nslots && s < found.nsec; s++) {
		uint64_t step = stub_step(&sh[s]);
		for (uint64_t off = 0; data[s] && off + step <= sh[s].sh_size; off += step) {
			uint64_t got = stub_slot((const unsigned char *)data[s]->d_buf + off, step,
			                         sh[s].sh_addr + off);
			const struct slot *slot = got ? find_slot(slots, nslots, got) : NULL;
			if (slot && slot->name)
				add_stub(p, sh[s].sh_addr + off, step, slot->name);
		}
	}
	free(slots);
	if (p->n)
		qsort(p->v, p->n, sizeof *p->v, stub_cmp);
}

static int in_sections(const struct sym_plt *p, uint64_t vaddr)
{
	for (size_t i = 0; i < p->nsec; i++)
		if (vaddr >= p->sec[i].lo && vaddr < p->sec[i].hi)
			return 1;
	return 0;
}

/* The stub at vaddr named alone: its slot from its bytes, the slot's
 * function by the relocations, as read_stubs() names every slot. */
static const char *name_one(struct sym_plt *p, Elf *elf, uint64_t vaddr)
{
	for (size_t i = 0; i < p->nasked; i++)
		if (vaddr >= p->asked[i].start && vaddr < p->asked[i].end)
			return p->asked[i].name;
	Elf_Data *data[MAX_STUB_SECTIONS];
	GElf_Shdr sh[MAX_STUB_SECTIONS];
	struct sym_plt found = {0};
	p->direct++;
	find_sections(elf, &found, data, sh);
	for (size_t s = 0; s < found.nsec; s++) {
		uint64_t step = stub_step(&sh[s]);
		if (!data[s] || vaddr < sh[s].sh_addr || vaddr - sh[s].sh_addr >= sh[s].sh_size)
			continue;
		uint64_t off = (vaddr - sh[s].sh_addr) / step * step;
		if (off + step > sh[s].sh_size)
			return NULL;
		uint64_t start = sh[s].sh_addr + off;
		struct slot one = {stub_slot((const unsigned char *)data[s]->d_buf + off, step, start),
		                   NULL, found.sec[s].got};
		if (one.got)
			read_slots(elf, &one, 1);
		return one.name ? add_to(&p->asked, &p->nasked, &p->capasked, start, step, one.name)
		                : NULL;
	}
	return NULL;
}

/* The sections are found at the first address that falls in one (most
 * modules sampled have none there); the first DIRECT_ASKS stubs asked
 * are named one by one, then all are read. */
const char *sym_plt_name(struct sym_plt **t, struct Dwfl_Module *mod, uint64_t vaddr)
{
	GElf_Addr bias;
	if (!*t) {
		*t = calloc(1, sizeof **t);
		Elf *elf = *t ? dwfl_module_getelf(mod, &bias) : NULL;
		if (elf)
			find_sections(elf, *t, NULL, NULL);
	}
	struct sym_plt *p = *t;
	if (!p || !in_sections(p, vaddr))
		return NULL;
	if (!p->read && p->direct < DIRECT_ASKS) {
		Elf *elf = dwfl_module_getelf(mod, &bias);
		return elf ? name_one(p, elf, vaddr) : NULL;
	}
	if (!p->read) {
		p->read = 1;
		Elf *elf = dwfl_module_getelf(mod, &bias);
		if (elf)
			read_stubs(elf, p);
	}
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
	for (size_t i = 0; i < t->nasked; i++)
		free(t->asked[i].name);
	free(t->v);
	free(t->asked);
	free(t);
}
