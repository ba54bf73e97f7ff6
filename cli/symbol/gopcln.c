/*
 * gopcln.c - names, files and lines of a Go program's functions from its
 * own table, .gopclntab, for Go binaries without symbols or DWARF.
 *
 * Why: Go programs keep their function table for the runtime (stack
 * traces, runtime.Callers, its own profiler), and stripping leaves it:
 * Debian's Go programs and any `go build -ldflags=-s -w` have no .symtab
 * and no DWARF, so every sample in Go code was "prog+0x<one address>"
 * (the Go text has no FDEs either, so fde.c grouped all of it under the
 * C function before it).  libdwfl does not read the table.
 *
 * The layout is the runtime's (src/runtime/symtab.go, pcHeader and
 * _func; src/debug/gosym reads the same), little-endian, 64-bit:
 *
 *   pcHeader: u32 magic (0xfffffff0: Go 1.18-1.19, 0xfffffff1: 1.20+),
 *     u8 0, u8 0, u8 minLC (instruction size quantum), u8 ptrSize (8),
 *     u64 nfunc, nfiles, textStart, and the offsets from the header of
 *     funcnametab, cutab, filetab, pctab and the function table;
 *   function table: nfunc + 1 pairs of u32 (entry pc - textStart, offset
 *     of the _func from the table's start), by pc; the last pair's pc is
 *     the end of the text;
 *   _func: u32 entryOff, i32 nameOff (into funcnametab), args,
 *     deferreturn, pcsp, pcfile, pcln (offsets into pctab), npcdata,
 *     cuOffset, and from 1.20 i32 startLine;
 *   a pc-value table: pairs of varints (value delta zig-zagged, pc delta
 *     in quanta) from value -1 at the entry; the value at pc is the one in
 *     force at the first step that passes it.  pcln gives the line,
 *     pcfile an index that cutab (u32, from the function's cuOffset)
 *     turns into a NUL-terminated path's offset in filetab.
 * Go 1.16-1.17 (0xfffffffa) had absolute 8-byte entries and is not read
 * (out of support; addresses keep their module+offset names).
 *
 * Where: section .gopclntab in programs Go's linker or an external
 * linker laid out as executables; in position-independent ones an
 * external linker merges it into .data.rel.ro, where the header is found
 * by its magic and checked as a whole.  textStart is a link-time address,
 * written in place (ld keeps the value of a RELATIVE relocation there
 * too), so it needs no relocation to read.
 *
 * The file may be hostile: every offset is checked against the table's
 * bytes before it is read, a name or path must end inside them, and a
 * pc-value walk stops at the table's end (each step consumes bytes).
 * The inline tree (FUNCDATA_InlTree, relative to go:func.*, which only
 * the runtime's moduledata locates) is not read: a pc in inlined code is
 * named after the function it was inlined into, with the line the table
 * gives, the inlined code's own.
 */
#include "symint.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#define GO118_MAGIC 0xfffffff0u
#define GO120_MAGIC 0xfffffff1u
#define HEADER_SIZE (8 + 8 * 8)
#define FUNC_MIN 36 /* _func's bytes read before startLine */

struct sym_gopcln {
	const unsigned char *tab; /* the pcHeader, in the Elf's data; NULL: none */
	size_t size;              /* bytes from tab to its section's end */
	uint64_t text, nfunc;
	unsigned quantum;
	int start_line; /* _func has startLine (1.20+) */
	uint64_t names, cutab, filetab, pctab, functab; /* offsets from tab */
};

static int u32_at(const struct sym_gopcln *g, uint64_t off, uint32_t *v)
{
	if (off > g->size || g->size - off < 4)
		return 0;
	const unsigned char *p = g->tab + off;
	*v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
	return 1;
}

static uint64_t u64_of(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* The NUL-terminated string at off, NULL when it would run past the end. */
static const char *string_at(const struct sym_gopcln *g, uint64_t off)
{
	if (off >= g->size)
		return NULL;
	const char *s = (const char *)g->tab + off;
	return memchr(s, '\0', g->size - off) ? s : NULL;
}

/* Whether bytes [0, size) start with a header this file can read, whose
 * tables lie inside them; fills g. */
static int header_ok(struct sym_gopcln *g, const unsigned char *p, size_t size)
{
	if (size < HEADER_SIZE)
		return 0;
	uint32_t magic = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	                 (uint32_t)p[3] << 24;
	if ((magic != GO118_MAGIC && magic != GO120_MAGIC) || p[4] || p[5] ||
	    (p[6] != 1 && p[6] != 2 && p[6] != 4) || p[7] != 8)
		return 0;
	*g = (struct sym_gopcln){.tab = p, .size = size, .quantum = p[6],
	                         .start_line = magic == GO120_MAGIC};
	g->nfunc = u64_of(p + 8);
	g->text = u64_of(p + 24);
	uint64_t *offs[] = {&g->names, &g->cutab, &g->filetab, &g->pctab, &g->functab};
	for (int i = 0; i < 5; i++)
		if ((*offs[i] = u64_of(p + 32 + 8 * i)) < HEADER_SIZE || *offs[i] >= size)
			return 0;
	/* nfunc + 1 pairs of u32 */
	return g->nfunc && g->text && g->nfunc < (size - g->functab) / 8;
}

/* The Elf's data of a section, or NULL. */
static Elf_Data *section_data(Elf_Scn *scn, const GElf_Shdr *sh)
{
	if (sh->sh_type != SHT_PROGBITS || sh->sh_size < HEADER_SIZE)
		return NULL;
	Elf_Data *d = elf_getdata(scn, NULL);
	return d && d->d_buf && d->d_size >= HEADER_SIZE ? d : NULL;
}

/* A header found by its magic in d: the first whose tables check out. */
static int search(struct sym_gopcln *g, Elf_Data *d)
{
	/* the magic's last three bytes and the two zero pads after them */
	static const unsigned char want[] = {0xff, 0xff, 0xff, 0, 0};
	const unsigned char *p = d->d_buf, *end = p + d->d_size;
	while (p < end) {
		const unsigned char *hit = memmem(p, (size_t)(end - p), want, sizeof want);
		if (!hit)
			return 0;
		if (hit > (const unsigned char *)d->d_buf &&
		    header_ok(g, hit - 1, (size_t)(end - hit + 1)))
			return 1;
		p = hit + 1;
	}
	return 0;
}

/* The table of elf: .gopclntab (or a section named so at its end), else
 * in .data.rel.ro of a Go program (one with Go's build-id note or build
 * information). */
static int find(struct sym_gopcln *g, Elf *elf)
{
	size_t shstrndx;
	int is_go = 0;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	for (int pass = 0; pass < 2; pass++)
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;
			const char *name;
			Elf_Data *d;
			if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
				continue;
			if (pass == 0) {
				is_go |= !strcmp(name, ".note.go.buildid") || !strcmp(name, ".go.buildinfo");
				size_t len = strlen(name);
				if (len >= 9 && !strcmp(name + len - 9, "gopclntab") &&
				    (d = section_data(scn, &sh)))
					return header_ok(g, d->d_buf, d->d_size);
			} else if (is_go && !strcmp(name, ".data.rel.ro") &&
			           (d = section_data(scn, &sh)) && search(g, d)) {
				return 1;
			}
		}
	return 0;
}

static struct sym_gopcln *load(Dwfl_Module *mod)
{
	struct sym_gopcln *g = calloc(1, sizeof *g);
	GElf_Addr bias;
	Elf *elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	if (g && (!elf || !find(g, elf)))
		g->tab = NULL;
	return g;
}

/* Unsigned LEB128 of at most 32 bits at *off; 0 at the table's end. */
static int varint(const struct sym_gopcln *g, uint64_t *off, uint32_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (*off >= g->size)
			return 0;
		unsigned char b = g->tab[(*off)++];
		*v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 1;
	}
	return 0;
}

/* The value pc-value table off (from pctab) has at pc, for a function
 * entered at entry; -1 when it has none there. */
static int64_t pc_value(const struct sym_gopcln *g, uint32_t off, uint64_t entry, uint64_t pc)
{
	if (off == 0)
		return -1;
	uint64_t at = g->pctab + off, cur = entry;
	uint32_t val = UINT32_MAX; /* -1; summed as Go's int32 is, wrapping */
	for (int first = 1;; first = 0) {
		uint32_t uv, pcdelta;
		if (!varint(g, &at, &uv) || (uv == 0 && !first) || !varint(g, &at, &pcdelta))
			return -1;
		val += uv & 1 ? ~(uv >> 1) : uv >> 1;
		cur += (uint64_t)pcdelta * g->quantum;
		if (pc < cur)
			return (int32_t)val;
	}
}

/* The index of the function whose code holds text offset off, or -1. */
static int64_t func_index(const struct sym_gopcln *g, uint64_t off)
{
	uint64_t lo = 0, hi = g->nfunc; /* entry(lo) <= off < entry(hi) once found */
	uint32_t e;
	if (!u32_at(g, g->functab, &e) || off < e || !u32_at(g, g->functab + 8 * hi, &e) ||
	    off >= e)
		return -1;
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (!u32_at(g, g->functab + 8 * mid, &e))
			return -1;
		if (e <= off)
			lo = mid;
		else
			hi = mid;
	}
	return (int64_t)lo;
}

static void frame_source(const struct sym_gopcln *g, uint64_t fn, uint64_t entry,
                         uint64_t vaddr, struct sym_frame *out)
{
	uint32_t pcfile, pcln, cu, idx, start;
	if (!u32_at(g, fn + 20, &pcfile) || !u32_at(g, fn + 24, &pcln) || !u32_at(g, fn + 32, &cu))
		return;
	int64_t line = pc_value(g, pcln, entry, vaddr);
	int64_t fno = pc_value(g, pcfile, entry, vaddr);
	const char *file = NULL;
	if (fno >= 0 && u32_at(g, g->cutab + 4 * ((uint64_t)cu + (uint64_t)fno), &idx) &&
	    idx != UINT32_MAX)
		file = string_at(g, g->filetab + idx);
	if (!file || !*file)
		return;
	out->file = sym_strdup(file);
	out->line = line > 0 ? line : 0;
	if (g->start_line && u32_at(g, fn + FUNC_MIN, &start) && (int32_t)start > 0)
		out->decl_line = (int32_t)start;
}

struct sym_gopcln *sym_gopcln_parse(const void *bytes, size_t size)
{
	struct sym_gopcln *g = calloc(1, sizeof *g);
	if (g && !header_ok(g, bytes, size)) {
		free(g);
		g = NULL;
	}
	return g;
}

int sym_gopcln_lookup(struct sym_gopcln **slot, Dwfl_Module *mod, uint64_t vaddr,
                      struct sym_frame *out)
{
	if (!*slot && !(*slot = load(mod)))
		return 0;
	return sym_gopcln_at(*slot, vaddr, out);
}

int sym_gopcln_present(struct sym_gopcln **slot, Dwfl_Module *mod)
{
	if (!*slot && !(*slot = load(mod)))
		return -1;
	return (*slot)->tab != NULL;
}

int sym_gopcln_at(const struct sym_gopcln *g, uint64_t vaddr, struct sym_frame *out)
{
	int64_t i;
	uint32_t entry_off, func_off, name_off;
	if (!g->tab || vaddr < g->text || vaddr - g->text > UINT32_MAX ||
	    (i = func_index(g, vaddr - g->text)) < 0 ||
	    !u32_at(g, g->functab + 8 * (uint64_t)i, &entry_off) ||
	    !u32_at(g, g->functab + 8 * (uint64_t)i + 4, &func_off))
		return 0;
	uint64_t fn = g->functab + func_off;
	const char *name = u32_at(g, fn + 4, &name_off) ? string_at(g, g->names + name_off) : NULL;
	if (!name || !*name)
		return 0;
	memset(out, 0, sizeof *out);
	out->name = sym_strdup(name);
	out->system_name = sym_strdup(name);
	frame_source(g, fn, g->text + entry_off, vaddr, out);
	return 1;
}

void sym_gopcln_free(struct sym_gopcln *g)
{
	free(g);
}
