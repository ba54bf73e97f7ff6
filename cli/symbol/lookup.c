/*
 * lookup.c - one ELF address to its inline chain with libdw: the
 * innermost DW_TAG_subprogram or DW_TAG_inlined_subroutine covering the
 * address, then each concrete scope containing it out to the real
 * (out-of-line) function.  The innermost frame gets the line table's
 * line at the address; each caller the DW_AT_call_line of the inlined
 * instance it contains.  Without DWARF the symbol table names the
 * function (.symtab, else .dynsym: libdwfl picks); in a PLT stub, the
 * function it jumps to (plt.c).
 */
#include "symint.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *die_string(Dwarf_Die *die, int name)
{
	Dwarf_Attribute attr;
	return dwarf_formstring(dwarf_attr_integrate(die, name, &attr));
}

/* The symbol table's name for an address, looked up on first use: a
 * function DWARF names rarely needs it (symtab.c says what it costs). */
struct symname {
	struct sym_image *im;
	uint64_t vaddr;
	int done;
	const char *name;   /* NULL: no symbol */
	uint64_t span[2];   /* the addresses with the same answer (symtab.c) */
};

static const char *symname_get(struct symname *s)
{
	if (!s->done) {
		s->name = sym_symtab_name_span(sym_image_symtab(s->im), sym_image_module(s->im),
		                               s->vaddr, s->span);
		s->done = 1;
	}
	return s->name;
}

/* Whether the DIE's unit is written in C or assembler (glibc's clone3.S
 * and the like have subprogram DIEs): its functions' symbols are their
 * DW_AT_names, never mangled. */
static int in_unmangled_unit(Dwarf_Die *die)
{
	Dwarf_Die cu;
	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return 0;
	switch (dwarf_srclang(&cu)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
#ifdef DW_LANG_C17
	case DW_LANG_C17:
#endif
	case DW_LANG_Mips_Assembler:
		return 1;
	default:
		return 0;
	}
}

/* Names of a function DIE, through abstract_origin and specification:
 * the linkage name demangled (C++: "ns::Klass::method(int)"), else
 * DW_AT_name, else the symbol table's name (sym, NULL for none).  The
 * symbol's name is looked up only when it can change the result: no
 * linkage name, and no DW_AT_name or, outside C and assembler units, a table with C++
 * names in it.  (Asking the unit's language first spares C libraries the
 * table scan: libc's was a fifth of a short recording's symbolizing.) */
static void die_names(Dwarf_Die *die, struct symname *sym, struct sym_frame *f)
{
	const char *linkage = die_string(die, DW_AT_linkage_name);
	if (!linkage)
		linkage = die_string(die, DW_AT_MIPS_linkage_name);
	const char *name = die_string(die, DW_AT_name);
	const char *fallback = NULL;
	if (sym && !linkage &&
	    (!name || (!in_unmangled_unit(die) && sym_image_has_cxx_symbols(sym->im))))
		fallback = symname_get(sym);
	if (!linkage && fallback && strncmp(fallback, "_Z", 2) == 0)
		linkage = fallback; /* C++ without DW_AT_linkage_name here */
	if (linkage) {
		f->system_name = sym_strdup(linkage);
		f->name = sym_demangle(linkage);
	} else if (name || fallback) {
		f->system_name = sym_strdup(name ? name : fallback);
		f->name = sym_strdup(name ? name : fallback);
	}
}

/* Source file of a CU's file-table entry (DW_AT_call_file): from the
 * kept table (linecache.c) when there is one, since libdw decodes the
 * CU's whole line program to give its file table. */
static const char *cu_file(struct sym_image *im, Dwarf_Die *cu, Dwarf_Word idx)
{
	const struct sym_cu_lines *kept = sym_image_cu_lines(im, cu);
	if (kept)
		return sym_cu_lines_file(kept, idx);
	Dwarf_Files *files;
	size_t n;
	if (dwarf_getsrcfiles(cu, &files, &n) != 0 || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* dwarf_decl_file(die), from the kept table when die's DW_AT_decl_file
 * is in cu (through abstract_origin it may be in another CU). */
static const char *decl_file(struct sym_image *im, Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	if (dwarf_formudata(dwarf_attr_integrate(die, DW_AT_decl_file, &attr), &idx) != 0 ||
	    idx == 0)
		return NULL; /* 0: no file, as libdw says */
	const struct sym_cu_lines *kept = attr.cu == cu->cu ? sym_image_cu_lines(im, cu) : NULL;
	return kept ? sym_cu_lines_file(kept, idx) : dwarf_decl_file(die);
}

/* file as a path that names it wherever the report runs: DWARF keeps
 * names relative to the compilation directory (DW_AT_comp_dir). */
static char *source_path(Dwarf_Die *cu, const char *file)
{
	Dwarf_Attribute attr;
	const char *dir = cu ? dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)) : NULL;
	if (file[0] == '/' || !dir || !*dir)
		return sym_strdup(file);
	if (file[0] == '.' && file[1] == '/')
		file += 2;
	size_t n = strlen(dir) + strlen(file) + 2;
	char *p = malloc(n);
	if (!p)
		return sym_strdup(file);
	snprintf(p, n, "%s/%s", dir, file);
	return p;
}

static int is_function(Dwarf_Die *die)
{
	int tag = dwarf_tag(die);
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	       tag == DW_TAG_entry_point;
}

/* The innermost function (or inlined instance) containing pc, by libdw:
 * two walks of the CU per address (see scopes.c). */
static int innermost_function(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *out)
{
	Dwarf_Die *scopes;
	int n = dwarf_getscopes(cu, pc, &scopes);
	int found = 0;
	for (int i = 0; i < n && !found; i++)
		if (is_function(&scopes[i])) {
			*out = scopes[i];
			found = 1;
		}
	if (n > 0)
		free(scopes);
	return found;
}

/* The innermost function holding pc and the scopes it is in, innermost
 * first, into a malloc'd *out; their count, 0 when no function holds pc.
 * scopes.c answers (span cut to where its answer holds), or libdw itself
 * when scopes.c cannot (span: pc alone). */
static int function_scopes(struct sym_image *im, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **out,
                           uint64_t span[2])
{
	Dwarf_Die *path, fn;
	int n = sym_scopes_at(sym_image_scopes(im), sym_image_kept(im, cu), cu, pc, &path, span);
	if (n < 0) {
		span[0] = pc, span[1] = pc + 1;
		return innermost_function(cu, pc, &fn) ? dwarf_getscopes_die(&fn, out) : 0;
	}
	int last = n - 1;
	while (last >= 0 && !is_function(&path[last]))
		last--;
	if (last < 0) {
		free(path);
		return 0;
	}
	for (int i = 0, j = last; i < j; i++, j--) {
		fn = path[i];
		path[i] = path[j];
		path[j] = fn;
	}
	*out = path;
	return last + 1;
}

/* The chain at pc: from the innermost function (or inlined instance)
 * holding it out to the first out-of-line function. */
static size_t dwarf_chain(struct sym_image *im, Dwarf_Die *cu, Dwarf_Addr pc,
                          struct symname *symname, const char *src, int lineno,
                          struct sym_frame *out, size_t max, uint64_t span[2])
{
	Dwarf_Die *scopes;
	int ns = function_scopes(im, cu, pc, &scopes, span);
	size_t n = 0;
	int64_t line = lineno;
	for (int i = 0; i < ns && n < max; i++) {
		Dwarf_Die *die = &scopes[i];
		if (!is_function(die))
			continue;
		int inlined = dwarf_tag(die) == DW_TAG_inlined_subroutine;
		struct sym_frame *f = &out[n];
		memset(f, 0, sizeof *f);
		die_names(die, inlined ? NULL : symname, f);
		if (!f->name)
			f->name = sym_strdup("??"), f->system_name = sym_strdup("??");
		const char *decl = decl_file(im, cu, die);
		f->file = decl ? source_path(cu, decl) : src ? source_path(cu, src) : NULL;
		int dl = 0;
		f->decl_line = dwarf_decl_line(die, &dl) == 0 ? dl : 0;
		f->line = line;
		n++;
		if (!inlined)
			break; /* the out-of-line function: the chain ends */
		/* the caller is at the call site of this inlined instance */
		Dwarf_Attribute attr;
		Dwarf_Word w;
		line = dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &attr), &w) == 0
		       ? (int64_t)w : 0;
		src = dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &attr), &w) == 0
		      ? cu_file(im, cu, w) : NULL;
	}
	if (ns > 0)
		free(scopes);
	return n;
}

/* The line table's file and line at pc in cu: the kept answers
 * (linecache.c) when there are some, else libdw's; NULL and 0: none.
 * span cut to the line's addresses (pc alone by libdw's). */
static void line_at(struct sym_image *im, Dwarf_Die *cu, Dwarf_Addr pc, const char **src,
                    int *lineno, uint64_t span[2])
{
	const struct sym_cu_lines *kept = sym_image_cu_lines(im, cu);
	Dwarf_Line *l = kept ? NULL : dwarf_getsrc_die(cu, pc);
	if (!kept)
		span[0] = pc, span[1] = pc + 1;
	if (kept ? !sym_cu_lines_at(kept, pc, src, lineno, span)
	         : !l || !(*src = dwarf_linesrc(l, NULL, NULL)) || dwarf_lineno(l, lineno) != 0)
		*src = NULL, *lineno = 0;
}

/* The CU holding vaddr by the image's kept ranges (cuindex.c), into
 * *mem, with the DWARF bias: 1; 0 when no CU holds it (libdwfl, whose
 * lookups go through the same ranges, would find none either); -1 when
 * there are no kept ranges, and the caller asks libdwfl. */
static int cu_of(struct sym_image *im, uint64_t vaddr, Dwarf_Die *mem, Dwarf_Addr *bias,
                 uint64_t span[2])
{
	Dwarf *dbg = sym_module_dwarf(sym_image_module(im), bias);
	struct sym_cus *cus = dbg ? sym_image_cus(im, dbg) : NULL;
	uint64_t off;
	if (!cus)
		return -1;
	return sym_cus_find(cus, vaddr - *bias, &off, span) == 0 && dwarf_offdie(dbg, off, mem) ? 1
	                                                                                  : 0;
}

/* Whether nothing but the symbol table can name the module's addresses:
 * it has no DWARF (lines and functions would differ within a symbol's
 * span) and no Go table (which names what the symbol table does not). */
static int symtab_only(struct sym_image *im, Dwfl_Module *mod)
{
	Dwarf_Addr bias;
	return !sym_module_dwarf(mod, &bias) && sym_gopcln_present(sym_image_gopcln(im), mod) == 0;
}

/* The DWARF span pc (DWARF addresses) into span (the module's), cut to
 * the symbol table's stretch when its name was asked. */
static void dwarf_span(const uint64_t pcspan[2], Dwarf_Addr bias, const struct symname *sym,
                       uint64_t span[2])
{
	span[0] = pcspan[0] + bias;
	span[1] = pcspan[1] > UINT64_MAX - bias ? UINT64_MAX : pcspan[1] + bias;
	if (sym->done)
		span[0] = sym->span[0] > span[0] ? sym->span[0] : span[0],
		span[1] = sym->span[1] < span[1] ? sym->span[1] : span[1];
}

/*
 * The chain at vaddr into out[max], and into span the addresses around
 * vaddr that certainly have the same chain: vaddr alone, or
 *  - for a module only its symbol table names, the stretch symtab.c
 *    answers alike (a static function .dynsym does not name: most of
 *    cc1's samples);
 *  - with DWARF, where the same unit (cuindex.c), the same line-table
 *    line (linecache.c) and the same DIEs holding the address
 *    (scopes.c, kids.c) give the same chain, and, when the symbol table
 *    was asked, its stretch: a Python recording samples new addresses
 *    in lines it sampled before at every run.
 * Whatever answers by libdw's own lookups, or from a Go table, holds for
 * vaddr alone.  A PLT stub is in a section of its own, which bounds
 * symtab.c's stretches, and no unit holds one.
 */
static size_t lookup_fresh(struct sym_image *im, uint64_t vaddr, struct sym_frame *out,
                           size_t max, uint64_t span[2])
{
	Dwfl_Module *mod = sym_image_module(im);
	span[0] = vaddr, span[1] = vaddr + 1;
	const char *stub = max ? sym_plt_name(sym_image_plt(im), mod, vaddr) : NULL;
	if (stub) {
		/* no DWARF or symbol covers a PLT stub (plt.c) */
		memset(out, 0, sizeof *out);
		out->name = sym_strdup(stub);
		out->system_name = sym_strdup(stub);
		return 1;
	}
	struct symname sym = {im, vaddr, 0, NULL, {vaddr, vaddr + 1}};
	int lineno = 0;
	const char *src = NULL;
	Dwarf_Addr bias;
	Dwarf_Die cu_mem, *cu = NULL;
	/* no DWARF at all once libdw ran out of memory (dwoom.c) */
	uint64_t pcspan[2] = {0, UINT64_MAX};
	int lost = sym_dwarf_lost();
	int kept = lost ? 0 : cu_of(im, vaddr, &cu_mem, &bias, pcspan);
	if (kept == 1) { /* found by cuindex.c: the line from its CU */
		cu = &cu_mem;
		line_at(im, cu, vaddr - bias, &src, &lineno, pcspan);
	} else if (kept < 0) {
		Dwfl_Line *dl = dwfl_module_getsrc(mod, vaddr);
		src = dl ? dwfl_lineinfo(dl, NULL, &lineno, NULL, NULL, NULL) : NULL;
		cu = dwfl_module_addrdie(mod, vaddr, &bias);
	}
	size_t n = cu ? dwarf_chain(im, cu, vaddr - bias, &sym, src, lineno, out, max, pcspan) : 0;
	const char *symname = n > 0 || max == 0 ? NULL : symname_get(&sym);
	if (max > 0 && n == 0 && !cu && !src && symtab_only(im, mod))
		span[0] = sym.span[0], span[1] = sym.span[1];
	else if (max > 0 && !lost && kept >= 0 &&
	         (n > 0 || symname || sym_gopcln_present(sym_image_gopcln(im), mod) == 0))
		dwarf_span(pcspan, bias, &sym, span);
	if (n == 0 && max > 0 && !symname)
		/* a stripped Go program's code: its own table names it */
		return (size_t)sym_gopcln_lookup(sym_image_gopcln(im), mod, vaddr, out);
	if (n > 0 || !symname || max == 0)
		return n;
	/* no DWARF function here: the symbol table's, with the line table's
	 * line when there is one (assembly) */
	memset(out, 0, sizeof *out);
	out->system_name = sym_strdup(symname);
	out->name = sym_demangle(symname);
	out->file = src ? source_path(cu, src) : NULL;
	out->line = src ? lineno : 0;
	return 1;
}

/* lookup_fresh() under dwoom.c's guard: when an allocation fails in it
 * (libdw's, or ours), the address is named again without DWARF.  What
 * the first attempt had put in out is left to the exit. */
static size_t lookup_guarded(struct sym_image *im, uint64_t vaddr, struct sym_frame *out,
                             size_t max, uint64_t span[2])
{
	jmp_buf here;
	jmp_buf *const outer = sym_oom_guard(&here);
	if (setjmp(here) == 0) {
		size_t n = lookup_fresh(im, vaddr, out, max, span);
		sym_oom_unguard(outer);
		return n;
	}
	sym_oom_unguard(outer);
	sym_oom_say(sym_image_path(im));
	return lookup_fresh(im, vaddr, out, max, span);
}

/* The kept answer (addrkeep.c) when there is one, else libdw's, kept
 * for the next recording.  Only whole chains are kept, and none named
 * after DWARF was lost (they would stand in for better ones). */
size_t sym_image_lookup(struct sym_image *im, uint64_t vaddr, struct sym_frame *out, size_t max)
{
	struct sym_addrs *kept = max >= SYM_MAX_FRAMES ? sym_image_addrs(im) : NULL;
	size_t n;
	uint64_t span[2];
	if (kept && sym_addrs_get(kept, vaddr, out, max, &n) == 0)
		return n;
	n = lookup_guarded(im, vaddr, out, max, span);
	if (!sym_dwarf_lost())
		sym_addrs_put(kept, span, out, n);
	return n;
}

void sym_frames_free(struct sym_frame *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(f[i].name);
		free(f[i].system_name);
		free(f[i].file);
	}
}
