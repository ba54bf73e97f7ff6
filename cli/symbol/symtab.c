/*
 * symtab.c - the symbol table's name for an address, libdwfl's answer
 * (dwfl_module_addrinfo) without its cost per address.
 *
 * Why: dwfl_module_addrinfo reads every symbol of the module for each
 * address.  Most modules need it rarely (DWARF names their functions),
 * but a stripped program that exports its symbols has only .dynsym to go
 * by: gcc's cc1 exports some 40,000 for its plugins, and symbolizing one
 * compile's samples took the record process 0.6 s, 60% of the compile.
 *
 * How.  The symbols are indexed once per module (reach.c), and the
 * common answers are computed from the index by libdwfl's own rules
 * (elfutils' dwfl_module_addrsym.c, __libdwfl_addrsym):
 *  - symbols whose size covers the address, from its first (global) pass
 *    over the table, folded in table order with its comparison (the
 *    closer start wins, then the stronger binding, then the smaller size;
 *    ties to the first); failing those, when that pass cannot have
 *    stopped the second (no global sizeless symbol starts exactly at the
 *    address), the same over the local symbols;
 *  - "no symbol" when no sized symbol covers the address and no sizeless
 *    one lies between it and the highest end of the global pass's symbols
 *    below it (a lower bound of the min_label a sizeless answer must
 *    reach): in cc1 most samples fall in static functions .dynsym does not
 *    name.
 * Anything else (a sizeless label, function descriptors where a symbol's
 * address is not its st_value) is libdwfl's to answer, once per slot:
 * between two consecutive boundaries (a start or an end of any candidate
 * symbol, or of an allocated section) nothing its answer depends on
 * changes, so each boundary and each open interval after one is asked
 * once.  test/sym's sym_symtab_matches_libdwfl compares every path with
 * libdwfl on real modules.
 */
#include "symtab_int.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <sys/mman.h>

/* A module's first lookups are libdwfl's (one pass over its symbols
 * each): the index costs about fifteen such passes to build (libpython:
 * 13 M instructions), and a module DWARF describes is asked once or
 * twice a recording, for the few addresses no function covers.  A
 * module without DWARF is asked for every address it has, so when the
 * recording has at least DIRECT_ASKS of them (sym_symtab_expect) the
 * index is built at once: eight passes over librustc_driver's and
 * libLLVM's tables were 40-56 ms of a first recording of rustc.  An
 * index kept by an earlier recording (symkeep.c) is used from the
 * first. */
#define DIRECT_ASKS 8

int sym_symtab_binding(const GElf_Sym *sym)
{
	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

/* Whether libdwfl's answer for addr is certainly "no symbol". */
static int certainly_none(const struct sym_symtab *t, GElf_Addr addr)
{
	if (sym_reach_upto(&t->reach[REACH_SIZED], addr) > addr)
		return 0; /* a sized symbol covers it */
	GElf_Addr min_label = sym_reach_upto(&t->reach[REACH_LABELS], addr);
	const struct sym_reach *sizeless = &t->reach[REACH_SIZELESS];
	size_t below = sym_reach_count(sizeless, addr); /* sizeless ones <= addr */
	return below == 0 || sizeless->v[below - 1].start < min_label;
}

static int by_index(const void *a, const void *b)
{
	int x = (*(const struct sym_span *const *)a)->idx, y = (*(const struct sym_span *const *)b)->idx;
	return (x > y) - (x < y);
}

/* One pass's fold over the sized symbols covering addr; -1: none, -2: too
 * many to fold here (or a kept file's index out of the table). */
#define FOLD_MAX 32
static int fold_covering(const struct sym_symtab *t, const struct sym_reach *r, GElf_Addr addr)
{
	const struct sym_span *c[FOLD_MAX];
	int k = sym_reach_covering(r, addr, c, FOLD_MAX);
	if (k < 0)
		return -2;
	for (int i = 0; i < k; i++)
		if (c[i]->idx < 0 || (size_t)c[i]->idx >= t->nsyms)
			return -2;
	qsort(c, (size_t)k, sizeof *c, by_index);
	const struct sym_rec *best = NULL;
	int besti = -1;
	for (int i = 0; i < k; i++) {
		const struct sym_rec *s = &t->recs[c[i]->idx];
		if (!best || best->value < s->value || best->bind < s->bind ||
		    (best->value == s->value &&
		     ((best->size > s->size && best->bind <= s->bind) ||
		      (best->size >= s->size && best->bind < s->bind))))
			best = s, besti = c[i]->idx;
	}
	return besti;
}

/* Keys of t's maps (symtab_int.h): never NULL. */
static const void *key_of(size_t i)
{
	return (const void *)(uintptr_t)(i + 1);
}

/* Symbol i's name: libdwfl's string, taken from it on first use (an
 * index keeps no names). */
static const char *name_of(struct sym_symtab *t, Dwfl_Module *mod, int i)
{
	const char *name = sym_map_get(&t->names, key_of((size_t)i));
	if (!name) {
		GElf_Sym sym;
		GElf_Addr addr;
		name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (name)
			sym_map_put(&t->names, key_of((size_t)i), (void *)name);
	}
	return name;
}

/* The answer by the rules above: 1 and *name, or 0 (libdwfl's to give). */
static int own_answer(struct sym_symtab *t, Dwfl_Module *mod, GElf_Addr addr, const char **name)
{
	if (certainly_none(t, addr)) {
		*name = NULL;
		return 1;
	}
	if (!t->plain)
		return 0;
	int i = fold_covering(t, &t->reach[REACH_GSIZED], addr);
	if (i == -1 && t->two_passes &&
	    sym_reach_upto(&t->reach[REACH_GSIZELESS_AT], addr) <= addr)
		i = fold_covering(t, &t->reach[REACH_LSIZED], addr);
	if (i < 0 || !(*name = name_of(t, mod, i)))
		return 0;
	return 1;
}

/* A symbol libdwfl could answer with (its filter in search_table). */
int sym_symtab_candidate(const char *name, const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);
	return name && name[0] && sym->st_shndx != SHN_UNDEF && type != STT_SECTION &&
	       type != STT_FILE && type != STT_TLS;
}

static int add_bound(struct sym_symtab *t, GElf_Addr b);

/* The allocated sections' starts and ends, added to t->bounds. */
static int add_sections(Dwfl_Module *mod, struct sym_symtab *t)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	if (!elf)
		return 0; /* no sections: the sizeless fallback cannot use them either */
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn)) != NULL;) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		if (sh && (sh->sh_flags & SHF_ALLOC) &&
		    (add_bound(t, sh->sh_addr + bias) || add_bound(t, sh->sh_addr + bias + sh->sh_size)))
			return -1;
	}
	return 0;
}

static int add_bound(struct sym_symtab *t, GElf_Addr b)
{
	return sym_reach_add(&t->reach[REACH_BOUNDS], b, b, 0);
}

/* Indexes candidate i (global: in libdwfl's first pass). */
static int note_symbol(struct sym_symtab *t, int i, const GElf_Sym *sym, GElf_Addr addr,
                       int global)
{
	GElf_Addr size = sym->st_size;
	struct sym_reach *r = t->reach;
	t->recs[i] = (struct sym_rec){addr, size, sym_symtab_binding(sym), 1};
	if (addr != sym->st_value)
		t->plain = 0;
	if (global && sym_reach_add(&r[REACH_LABELS], addr, addr + size, i) != 0)
		return -1;
	GElf_Addr v = sym->st_value; /* libdwfl tries it too when it differs */
	if (!size)
		return sym_reach_add(&r[REACH_SIZELESS], addr, addr, i) ||
		       (v != addr && sym_reach_add(&r[REACH_SIZELESS], v, v, i)) ||
		       (global && sym_reach_add(&r[REACH_GSIZELESS_AT], addr, addr + 1, i));
	return sym_reach_add(&r[global ? REACH_GSIZED : REACH_LSIZED], addr, addr + size, i) ||
	       sym_reach_add(&r[REACH_SIZED], addr, addr + size, i) ||
	       (v != addr && sym_reach_add(&r[REACH_SIZED], v, v + size, i));
}

static void clear_index(struct sym_symtab *t);

/* The index into t, which has none yet: 0, or -1 (t without one). */
static int build(struct sym_symtab *t, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	if (n < 0)
		goto fail;
	t->nsyms = (size_t)n;
	t->recs = calloc((size_t)n + 1, sizeof *t->recs);
	if (!t->recs)
		goto fail;
	int first_global = dwfl_module_getsymtab_first_global(mod);
	t->plain = 1;
	t->two_passes = first_global > 1;
	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (!sym_symtab_candidate(name, &sym))
			continue;
		if (note_symbol(t, i, &sym, addr, i >= first_global) != 0)
			goto fail;
		/* libdwfl tries the resolved address and st_value (they differ
		 * only for function descriptors): both bound the slots. */
		if (add_bound(t, addr) || add_bound(t, addr + sym.st_size) ||
		    (sym.st_value != addr &&
		     (add_bound(t, sym.st_value) || add_bound(t, sym.st_value + sym.st_size))))
			goto fail;
	}
	if (add_sections(mod, t) != 0)
		goto fail;
	for (int r = 0; r < REACHES; r++)
		if (sym_reach_finish(&t->reach[r]) != 0)
			goto fail;
	struct sym_reach *bounds = &t->reach[REACH_BOUNDS];
	size_t u = 0;
	for (size_t i = 0; i < bounds->n; i++)
		if (u == 0 || bounds->v[u - 1].start != bounds->v[i].start) {
			bounds->maxend[u] = bounds->v[i].start; /* [b, b): its own end */
			bounds->v[u++] = bounds->v[i];
		}
	bounds->n = u;
	return 0;
fail:
	clear_index(t);
	return -1;
}

/* Slot 0: below every boundary; 2k+1: boundary k itself; 2k+2: the open
 * interval after it. */
static size_t slot_of(const struct sym_symtab *t, GElf_Addr vaddr)
{
	const struct sym_reach *bounds = &t->reach[REACH_BOUNDS];
	size_t lo = sym_reach_count(bounds, vaddr); /* boundaries <= vaddr */
	if (lo == 0)
		return 0;
	return 2 * (lo - 1) + 1 + (vaddr > bounds->v[lo - 1].start);
}

/* Questions put to libdwfl, for the tests (one symbolizing thread). */
static unsigned long libdwfl_asks;

unsigned long sym_symtab_libdwfl_asks(void)
{
	return libdwfl_asks;
}

/* A slot's answer when libdwfl had none (a map's values are not NULL). */
static const char no_name[1];

static const char *ask_libdwfl(Dwfl_Module *mod, uint64_t vaddr)
{
	GElf_Off off;
	GElf_Sym sym;
	libdwfl_asks++;
	return dwfl_module_addrinfo(mod, vaddr, &off, &sym, NULL, NULL, NULL);
}

static int has_dwarf(Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	return sym_module_dwarf(mod, &bias) != NULL;
}

/* Index t, empty: kept by an earlier recording, else (after the direct
 * asks) built here and kept for the next; 1 done, -1 failed, 0 not yet. */
static int make_index(struct sym_symtab *t, Dwfl_Module *mod)
{
	if (t->direct == 0 && sym_symtab_load(t, mod) == 0)
		return 1;
	if (t->direct < DIRECT_ASKS && !(t->expected >= DIRECT_ASKS && !has_dwarf(mod)))
		return 0;
	if (build(t, mod) != 0)
		return -1;
	sym_symtab_keep(t, mod);
	return 1;
}

void sym_symtab_expect(struct sym_symtab **tp, size_t n)
{
	if (*tp || (*tp = calloc(1, sizeof **tp)))
		(*tp)->expected += n;
}

/* The addresses of slot s (slot_of()), [span[0], span[1]): the answer is
 * the same for each of them. */
static void slot_span(const struct sym_symtab *t, size_t s, uint64_t span[2])
{
	const struct sym_reach *bounds = &t->reach[REACH_BOUNDS];
	size_t k = s ? (s - 1) / 2 : 0; /* its boundary, or the first */
	uint64_t b = bounds->n ? bounds->v[k].start : UINT64_MAX;
	uint64_t next = k + 1 < bounds->n ? bounds->v[k + 1].start : UINT64_MAX;
	if (s == 0)
		span[0] = 0, span[1] = b;
	else if (s % 2)
		span[0] = b, span[1] = b + 1;
	else
		span[0] = b + 1, span[1] = next;
}

const char *sym_symtab_name(struct sym_symtab **tp, Dwfl_Module *mod, uint64_t vaddr)
{
	return sym_symtab_name_span(tp, mod, vaddr, NULL);
}

const char *sym_symtab_name_span(struct sym_symtab **tp, Dwfl_Module *mod, uint64_t vaddr,
                                 uint64_t span[2])
{
	if (span)
		span[0] = vaddr, span[1] = vaddr + 1; /* until the index says more */
	if (!*tp && !(*tp = calloc(1, sizeof **tp)))
		return ask_libdwfl(mod, vaddr);
	struct sym_symtab *t = *tp;
	if (t->state == 0)
		t->state = make_index(t, mod);
	if (t->state == 0) {
		t->direct++;
		return ask_libdwfl(mod, vaddr);
	}
	if (t->state < 0)
		return ask_libdwfl(mod, vaddr);
	size_t s = slot_of(t, vaddr);
	if (span)
		slot_span(t, s, span);
	const char *name;
	if (own_answer(t, mod, vaddr, &name))
		return name;
	name = sym_map_get(&t->slots, key_of(s));
	if (!name) {
		name = ask_libdwfl(mod, vaddr);
		sym_map_put(&t->slots, key_of(s), (void *)(name ? name : no_name));
	}
	return name == no_name ? NULL : name;
}

static void clear_index(struct sym_symtab *t)
{
	for (int r = 0; r < REACHES; r++)
		if (t->map)
			t->reach[r] = (struct sym_reach){0}; /* the mapping's */
		else
			sym_reach_free(&t->reach[r]);
	if (t->map)
		munmap(t->map, t->map_size);
	else
		free(t->recs);
	sym_map_free(&t->slots, NULL);
	sym_map_free(&t->names, NULL);
	t->map = NULL;
	t->recs = NULL;
	t->nsyms = 0;
}

void sym_symtab_free(struct sym_symtab *t)
{
	if (t) {
		clear_index(t);
		free(t);
	}
}
