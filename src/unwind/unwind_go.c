/*
 * unwind_go.c - rows for a Go program's code from the stack-pointer tables
 * Go keeps for its own runtime, as unwind_cfi.c makes them from FDEs.
 * Outside signal context.
 *
 * Why: Go's linker writes no .eh_frame for Go code, so the walk took a
 * frame-pointer step there.  That is right in a function that has saved
 * rbp, but Go gives leaf functions without locals no frame: rbp is still
 * the caller's, and the step returned to the caller's caller.  Every
 * sample in such a leaf lost its caller (`runtime.main;main.hotLoop`
 * where main.main called it).  Go's runtime unwinds by its pcsp tables:
 * for every pc of a function, how far rsp is below its value at entry.
 * So are the rows here:
 *
 *     CFA = rsp + delta + 8, the return address at CFA - 8,
 *     rbp saved at CFA - 16 where delta > 0, else unchanged.
 *
 * The rbp rule is Go's frame layout on amd64: a function with a frame
 * saves rbp just below its return address, by "push rbp" first (Go 1.21
 * on) or by "sub $n, rsp; mov rbp, n-8(rsp)" (before): in that form the
 * one instruction after the sub has not saved it yet and gets a row of
 * its own with rbp unchanged (recognised by its bytes, 48 89 6c 24 disp8
 * or 48 89 ac 24 disp32).  A function marked as writing rsp in ways the
 * table does not follow (SPWRITE: stack switches in the runtime's
 * assembly) gets no rows, and a walk there takes the frame-pointer step
 * as before; one marked as the top of a stack (TOPFRAME: runtime.goexit,
 * runtime.mstart, rt0_go) ends the walk, complete, and so do
 * runtime.mcall and runtime.morestack, which switch to the thread's own
 * stack and call a function that never returns there (as Go's own
 * profiles show them: at the root).  runtime.asmcgocall's call into C
 * and runtime.systemstack's call of runtime code on the thread's stack
 * get rows that lead back to the goroutine's stack (cgo_call_row(),
 * systemstack_row()), and runtime.cgocallback's call of Go on the
 * goroutine's stack one that leads back to the C code on the thread's
 * (callback_row()).  runtime.asyncPreempt's first instruction, where
 * a sample that waited out Go's preemption signal is delivered, gets a
 * row that puts the sample at the pc the preemption interrupted
 * (UW_CFA_GO_INJECTED): that instruction has not run.
 *
 * The table (.gopclntab; gopcln.c in the command reads the same for
 * names): pcHeader (magic 0xfffffff0 for Go 1.18-1.19, 0xfffffff1 from
 * 1.20; u8 0, 0, instruction quantum, pointer size 8; u64 nfunc, nfiles,
 * textStart and the offsets of its parts from the header), the function
 * table (nfunc + 1 pairs of u32: entry - textStart, offset of the _func),
 * each _func (u32 entry offset, i32 name, args, deferreturn, pcsp, ...;
 * its flags byte at 37, or 41 from 1.20) and pc-value tables (varint
 * pairs: zig-zagged value delta, pc delta in quanta, from -1 at the
 * entry).  It is found by the section headers of the object's file: the
 * section named .gopclntab, else in .data.rel.ro (where an external
 * linker puts it in a position-independent program) by its header, which
 * must check out.  Every read stays inside the PT_LOAD segment that holds
 * the table.  Only objects with Go's build-id note are looked at.
 */
#include "unwind/unwind_dwarf.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#define GO_NOTE_TYPE 4 /* "Go" note with the Go build ID */
#define FLAG_TOPFRAME 1
#define FLAG_SPWRITE 2
#define HEADER_SIZE 72
#define FUNC_SIZE 44 /* _func's fixed part, from 1.20 (40 before) */
#define MAX_SECTIONS 4096

struct gotab {
	const uint8_t *tab, *end; /* the header; the end of its segment */
	uintptr_t text;           /* textStart, in the process */
	uint64_t nfunc, names, pctab, functab;
	unsigned quantum, flag_at;
};

int uw_has_go_note(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t at = info->dlpi_addr + ph->p_vaddr, lo, hi;
		if (ph->p_type != PT_NOTE || uw_segment_of(info, at, &lo, &hi) != 0)
			continue;
		uintptr_t lim = ph->p_memsz < hi - at ? at + ph->p_memsz : hi;
		struct cur c = {(const uint8_t *)at, (const uint8_t *)lim, 0};
		while (!c.bad && c.p < c.end) {
			uint32_t namesz = (uint32_t)fixed(&c, 4), descsz = (uint32_t)fixed(&c, 4);
			uint32_t type = (uint32_t)fixed(&c, 4);
			const uint8_t *name = c.p;
			uint64_t skip = ((uint64_t)namesz + 3) / 4 * 4 + ((uint64_t)descsz + 3) / 4 * 4;
			if (c.bad || skip > (uint64_t)(c.end - c.p))
				break;
			if (type == GO_NOTE_TYPE && (namesz == 3 || namesz == 4) && namesz <= skip &&
			    memcmp(name, "Go", 3) == 0)
				return 1;
			c.p += skip;
		}
	}
	return 0;
}

/* Whether the bytes at p (up to end) are a header this file reads, whose
 * function table lies before end; fills g. */
static int header_ok(struct gotab *g, const uint8_t *p, const uint8_t *end)
{
	struct cur c = {p, end, 0};
	uint32_t magic = (uint32_t)fixed(&c, 4);
	uint32_t pads = (uint32_t)fixed(&c, 2), quantum = (uint32_t)fixed(&c, 1);
	uint32_t ptr = (uint32_t)fixed(&c, 1);
	uint64_t nfunc = fixed(&c, 8);
	fixed(&c, 8); /* nfiles */
	uint64_t text = fixed(&c, 8);
	uint64_t names = fixed(&c, 8);
	fixed(&c, 8); /* cutab */
	fixed(&c, 8); /* filetab */
	uint64_t pctab = fixed(&c, 8), functab = fixed(&c, 8);
	uint64_t size = (uint64_t)(end - p);
	if (c.bad || (magic != 0xfffffff0u && magic != 0xfffffff1u) || pads || ptr != 8 ||
	    (quantum != 1 && quantum != 2 && quantum != 4) || pctab < HEADER_SIZE ||
	    pctab >= size || functab < HEADER_SIZE || functab >= size || nfunc == 0 ||
	    nfunc >= (size - functab) / 8 || text == 0)
		return 0;
	/* textStart is a pointer, with a RELATIVE relocation in a
	 * position-independent program that the loader has applied: in
	 * memory it is the runtime address already */
	*g = (struct gotab){p, end, (uintptr_t)text, nfunc, names, pctab, functab, quantum,
	                    magic == 0xfffffff0u ? 37 : 41};
	return 1;
}

/* A header inside [lo, hi) (both in one segment), found by its magic. */
static int search(struct gotab *g, const uint8_t *lo, const uint8_t *hi, const uint8_t *seg_end)
{
	static const uint8_t tail[] = {0xff, 0xff, 0xff, 0, 0}; /* the magic's, the pads */
	for (const uint8_t *p = lo; p + HEADER_SIZE <= hi; p++) {
		p = memmem(p, (size_t)(hi - p), tail, sizeof tail);
		if (!p)
			return 0;
		if (p > lo && header_ok(g, p - 1, seg_end))
			return 1;
	}
	return 0;
}

/* The section named .gopclntab (or ending so), else the header searched
 * for in .data.rel.ro; 1 with g filled. */
static int find_in_sections(struct gotab *g, const struct dl_phdr_info *info, int fd)
{
	ElfW(Ehdr) eh;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh.e_shnum == 0 || eh.e_shnum > MAX_SECTIONS || eh.e_shstrndx >= eh.e_shnum)
		return 0;
	size_t bytes = eh.e_shnum * sizeof(ElfW(Shdr));
	ElfW(Shdr) *sh = mem_alloc(bytes);
	char *names = NULL;
	int found = 0;
	if (!sh || pread(fd, sh, bytes, (off_t)eh.e_shoff) != (ssize_t)bytes)
		goto out;
	const ElfW(Shdr) *strs = &sh[eh.e_shstrndx];
	if (strs->sh_size == 0 || strs->sh_size > (1 << 20) || !(names = mem_alloc(strs->sh_size + 1)) ||
	    pread(fd, names, strs->sh_size, (off_t)strs->sh_offset) != (ssize_t)strs->sh_size)
		goto out;
	names[strs->sh_size] = '\0';
	for (int pass = 0; pass < 2 && !found; pass++)
		for (size_t i = 0; i < eh.e_shnum && !found; i++) {
			const char *name = sh[i].sh_name < strs->sh_size ? names + sh[i].sh_name : "";
			size_t len = strlen(name);
			uintptr_t at = info->dlpi_addr + sh[i].sh_addr, lo, hi;
			int want = pass == 0 ? len >= 9 && strcmp(name + len - 9, "gopclntab") == 0
			                     : strcmp(name, ".data.rel.ro") == 0;
			if (!want || !(sh[i].sh_flags & SHF_ALLOC) || sh[i].sh_type != SHT_PROGBITS ||
			    uw_segment_of(info, at, &lo, &hi) != 0)
				continue;
			uintptr_t stop = sh[i].sh_size < hi - at ? at + sh[i].sh_size : hi;
			found = pass == 0 ? header_ok(g, (const uint8_t *)at, (const uint8_t *)hi)
			                  : search(g, (const uint8_t *)at, (const uint8_t *)stop,
			                           (const uint8_t *)hi);
		}
out:
	mem_free(names);
	mem_free(sh);
	return found;
}

static int find_table(struct gotab *g, const struct dl_phdr_info *info)
{
	char *path = mem_alloc(PATH_MAX); /* off the stack: this may run on a small thread's */
	int fd = path && uw_object_path(info, path, PATH_MAX) == 0
	             ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	mem_free(path);
	if (fd < 0)
		return 0;
	int found = find_in_sections(g, info, fd);
	close(fd);
	return found;
}

/* Unsigned LEB128 of at most 32 bits; 0 at the table's end. */
static int varint(struct cur *c, uint32_t *v)
{
	*v = 0;
	for (unsigned shift = 0; shift < 35; shift += 7) {
		uint8_t b = (uint8_t)fixed(c, 1);
		if (c->bad)
			return 0;
		*v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 1;
	}
	return 0;
}

/* Whether the instruction at pc saves rbp below rsp: "mov %rbp,
 * disp(%rsp)", the second instruction of a Go 1.20-and-earlier frame. */
static int saves_rbp(const struct trows *t, uintptr_t pc)
{
	if (pc < t->text_lo || t->text_hi - pc < 8)
		return 0;
	const uint8_t *b = (const uint8_t *)pc;
	return b[0] == 0x48 && b[1] == 0x89 && (b[2] == 0x6c || b[2] == 0xac) && b[3] == 0x24;
}

static void emit_delta(struct trows *t, uintptr_t pc, uintptr_t next, int32_t delta)
{
	struct uw_row r = {0, delta + 8, 0, UW_CFA_RSP, UW_RBP_SAME, UW_RBX_UNKNOWN};
	if (delta > 0 && saves_rbp(t, pc)) {
		uw_emit(t, pc, r);
		pc += t->text_hi - pc >= 8 && ((const uint8_t *)pc)[2] == 0xac ? 8 : 5;
		if (pc >= next)
			return;
	}
	if (delta > 0)
		r.rbp = UW_RBP_SAVED, r.rbp_off = -16;
	uw_emit(t, pc, r);
}

/* One function's rows, [entry, end), from its pcsp table at off. */
static void function_rows(const struct gotab *g, struct trows *t, uintptr_t entry, uintptr_t end,
                          uint32_t off)
{
	struct cur c = {g->tab + g->pctab + off, g->end, 0};
	if (off == 0 || g->pctab + off >= (uint64_t)(g->end - g->tab))
		return;
	uint32_t delta = UINT32_MAX; /* -1; summed as Go's int32 is, wrapping */
	uintptr_t pc = entry;
	for (int first = 1; pc < end; first = 0) {
		uint32_t uv, step;
		if (!varint(&c, &uv) || (uv == 0 && !first) || !varint(&c, &step))
			break;
		delta += uv & 1 ? ~(uv >> 1) : uv >> 1;
		uintptr_t next = pc + (uintptr_t)step * g->quantum;
		if (delta > (1u << 24) || next > end) /* negative, or no frame Go makes */
			break;
		if (next > pc)
			emit_delta(t, pc, next, (int32_t)delta);
		pc = next;
	}
	uw_emit(t, end, (struct uw_row){0, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN});
}

/* Whether the function at fn is named name. */
static int named(const struct gotab *g, const uint8_t *fn, const char *name)
{
	struct cur c = {fn + 4, g->end, 0};
	uint64_t at = g->names + (uint32_t)fixed(&c, 4), len = strlen(name) + 1;
	return !c.bad && at < (uint64_t)(g->end - g->tab) &&
	       len <= (uint64_t)(g->end - g->tab) - at && memcmp(g->tab + at, name, len) == 0;
}

/* Row r for the call instruction at pc, len bytes; no rule after it (the
 * runtime's stack-switching code has no rows of its own). */
static void call_row(struct trows *t, uintptr_t pc, unsigned len, struct uw_row r)
{
	uw_emit(t, pc, r);
	uw_emit(t, pc + len, (struct uw_row){0, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN});
}

/* Whether the function at entry begins "push %rbp; mov %rsp,%rbp".  From
 * Go 1.21 the runtime's assembly with a frame makes one (asmcgocall,
 * systemstack): the goroutine's saved rsp then points at the rbp pushed,
 * the return address 8 above (the row's rbp rule UW_RBP_SAVED says so). */
static int pushes_rbp(const struct trows *t, uintptr_t entry)
{
	if (entry < t->text_lo || t->text_hi - entry < 4)
		return 0;
	const uint8_t *b = (const uint8_t *)entry;
	return b[0] == 0x55 && b[1] == 0x48 && b[2] == 0x89 && b[3] == 0xe5;
}

/* The length of the call into C at c: "call *%rax" (2), or from Go 1.22
 * "call rel32" (5) to asmcgocall_landingpad, "mov %rbx,%rdi; jmp *%rax",
 * which leaves the call's return address to C; 0 if neither. */
static unsigned call_into_c(const struct trows *t, const uint8_t *c)
{
	if (c[0] == 0xff && c[1] == 0xd0)
		return 2;
	if (c[0] != 0xe8)
		return 0;
	int32_t rel;
	memcpy(&rel, c + 1, sizeof rel);
	uintptr_t to = (uintptr_t)c + 5 + (uintptr_t)(intptr_t)rel;
	static const uint8_t pad[] = {0x48, 0x89, 0xdf, 0xff, 0xe0};
	return to >= t->text_lo && to < t->text_hi && t->text_hi - to >= sizeof pad &&
	               memcmp((const void *)to, pad, sizeof pad) == 0
	           ? 5 : 0;
}

/*
 * asmcgocall's call into C on the thread's stack, after it saved the
 * goroutine and its depth in the goroutine's stack:
 *     mov %rdi,G(%rsp); mov 8(%rdi),%rdi; sub %rdx,%rdi; mov %rdi,D(%rsp)
 * (g, then g's stack top minus the goroutine's rsp; D may be 0, with no
 * displacement byte), then the call into C a few instructions on.  A row
 * of its own at the call (UW_CFA_GO_CGO), so that a walk from C goes back
 * to the goroutine's stack.  Matched byte for byte (Go 1.18-1.23's code):
 * anything else gets no row, and a walk there ends "[unknown]" as before.
 */
static void cgo_call_row(struct trows *t, uintptr_t entry, uintptr_t end)
{
	static const uint8_t depth[] = {0x48, 0x8b, 0x7f, 0x08, 0x48, 0x29, 0xd7};
	enum { SCAN = 16, LONGEST = 5 + sizeof depth + 5 + SCAN + 5 };
	if (entry < t->text_lo || end > t->text_hi)
		return;
	for (uintptr_t p = entry; p + LONGEST <= end; p++) {
		const uint8_t *b = (const uint8_t *)p, *d = b + 5 + sizeof depth, *after;
		int8_t depth_at;
		if (b[0] != 0x48 || b[1] != 0x89 || b[2] != 0x7c || b[3] != 0x24 ||
		    memcmp(b + 5, depth, sizeof depth) != 0)
			continue;
		if (d[0] == 0x48 && d[1] == 0x89 && d[2] == 0x7c && d[3] == 0x24)
			depth_at = (int8_t)d[4], after = d + 5;
		else if (d[0] == 0x48 && d[1] == 0x89 && d[2] == 0x3c && d[3] == 0x24)
			depth_at = 0, after = d + 4;
		else
			return;
		for (const uint8_t *c = after; c < after + SCAN; c++) {
			unsigned len = call_into_c(t, c);
			if (!len)
				continue;
			uint8_t rbp = pushes_rbp(t, entry) ? UW_RBP_SAVED : UW_RBP_SAME;
			call_row(t, (uintptr_t)c, len,
			         (struct uw_row){0, (int8_t)b[4], depth_at, UW_CFA_GO_CGO, rbp, UW_RBX_UNKNOWN});
			return;
		}
		return;
	}
}

/*
 * systemstack's call of the function it runs on the thread's stack, and
 * its way back to the goroutine's stack right after:
 *     call *%rdi; mov %fs:-8,%rax (g: g0); mov M(%rax),%rbx (m);
 *     mov C(%rbx),%rax (m.curg); mov %rax,%fs:-8; mov S(%rax),%rsp
 * A row at the call (UW_CFA_GO_SYSTEMSTACK) with C, M and S, which the
 * walk follows the same way.  Byte for byte (Go 1.18-1.23's code, the
 * runtime's g at %fs:-8), else no row.  From 1.21 the saved rsp points at
 * the rbp systemstack pushed (pushes_rbp()).
 */
static void systemstack_row(struct trows *t, uintptr_t entry, uintptr_t end)
{
	static const uint8_t tls_g[] = {0x64, 0x48, 0x8b, 0x04, 0x25, 0xf8, 0xff, 0xff, 0xff};
	static const uint8_t set_g[] = {0x64, 0x48, 0x89, 0x04, 0x25, 0xf8, 0xff, 0xff, 0xff};
	enum { LEN = 2 + 9 + 4 + 7 + 9 + 4 };
	if (entry < t->text_lo || end > t->text_hi)
		return;
	for (uintptr_t p = entry; p + LEN <= end; p++) {
		const uint8_t *b = (const uint8_t *)p, *m = b + 11, *c = m + 4, *sp = c + 16;
		int32_t curg;
		if (b[0] != 0xff || b[1] != 0xd7 || memcmp(b + 2, tls_g, sizeof tls_g) != 0 ||
		    memcmp(m, "\x48\x8b\x58", 3) != 0 || m[3] >= 0x80 ||
		    memcmp(c, "\x48\x8b\x83", 3) != 0 || memcmp(c + 7, set_g, sizeof set_g) != 0 ||
		    memcmp(sp, "\x48\x8b\x60", 3) != 0 || sp[3] >= 0x80)
			continue;
		memcpy(&curg, c + 3, sizeof curg);
		if (curg <= 0)
			return;
		uint8_t rbp = pushes_rbp(t, entry) ? UW_RBP_SAVED : UW_RBP_SAME;
		call_row(t, p, 2, (struct uw_row){0, curg, (int16_t)(m[3] | sp[3] << 8),
		                                  UW_CFA_GO_SYSTEMSTACK, rbp, UW_RBX_UNKNOWN});
		return;
	}
}

/*
 * cgocallback's call of cgocallbackg, C calling into Go: it made its
 * frame on the thread's stack (rbp pointing at it), then moved rsp to the
 * goroutine's stack and called Go there, whose first frame saved that
 * rbp.  Its code from the move, the same in Go 1.18-1.23:
 *     mov %rdi,%rsp; mov %rbx,(%rsp); mov %rcx,8(%rsp); mov %rdx,16(%rsp);
 *     lea cgocallbackg(%rip),%rax; call *%rax
 * A row at the call (UW_CFA_GO_CALLBACK): the walk takes a frame-pointer
 * step there, onto the thread's stack, to the C code that called Go.
 */
static void callback_row(struct trows *t, uintptr_t entry, uintptr_t end)
{
	static const uint8_t move[] = {0x48, 0x89, 0xfc, 0x48, 0x89, 0x1c, 0x24, 0x48, 0x89,
	                               0x4c, 0x24, 0x08, 0x48, 0x89, 0x54, 0x24, 0x10};
	enum { CALL_AT = sizeof move + 7, LEN = CALL_AT + 2 };
	if (entry < t->text_lo || end > t->text_hi)
		return;
	for (uintptr_t p = entry; p + LEN <= end; p++) {
		const uint8_t *b = (const uint8_t *)p;
		if (memcmp(b, move, sizeof move) != 0)
			continue;
		if (memcmp(b + sizeof move, "\x48\x8d\x05", 3) != 0 || b[CALL_AT] != 0xff ||
		    b[CALL_AT + 1] != 0xd0)
			return;
		call_row(t, p + CALL_AT, 2, (struct uw_row){0, 0, 0, UW_CFA_GO_CALLBACK, UW_RBP_SAME, UW_RBX_UNKNOWN});
		return;
	}
}

/* The rows of the function at fn, [entry, end). */
static void one_function(const struct gotab *g, struct trows *t, const uint8_t *fn,
                         uintptr_t entry, uintptr_t end)
{
	static const struct uw_row outermost = {0, 0, 0, UW_CFA_END, UW_RBP_SAME, UW_RBX_UNKNOWN};
	static const struct uw_row none = {0, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN};
	struct cur f = {fn + 16, g->end, 0};
	uint32_t pcsp = (uint32_t)fixed(&f, 4);
	uint8_t flag = fn[g->flag_at];
	int spwrite = flag & FLAG_SPWRITE;
	if ((flag & FLAG_TOPFRAME) || (spwrite && (named(g, fn, "runtime.mcall") ||
	                                           named(g, fn, "runtime.morestack")))) {
		uw_emit(t, entry, outermost);
		uw_emit(t, end, none);
	} else if (!spwrite) {
		function_rows(g, t, entry, end, pcsp);
		if (named(g, fn, "runtime.asyncPreempt")) /* after its first row: it holds */
			uw_emit(t, entry, (struct uw_row){0, 8, 0, UW_CFA_GO_INJECTED, UW_RBP_SAME, UW_RBX_UNKNOWN});
	} else if (named(g, fn, "runtime.asmcgocall")) {
		cgo_call_row(t, entry, end);
	} else if (named(g, fn, "runtime.systemstack")) {
		systemstack_row(t, entry, end);
	} else if (named(g, fn, "runtime.cgocallback")) {
		callback_row(t, entry, end);
	}
}

void uw_go_rows(const struct dl_phdr_info *info, struct trows *t)
{
	struct gotab g;
	if (!uw_has_go_note(info) || !find_table(&g, info))
		return;
	uint64_t avail = (uint64_t)(g.end - (g.tab + g.functab));
	struct cur fc = {g.tab + g.functab, g.end, 0};
	uint32_t entry_off = (uint32_t)fixed(&fc, 4), func_off = (uint32_t)fixed(&fc, 4);
	for (uint64_t i = 0; i < g.nfunc && !fc.bad && !t->oom; i++) {
		uint32_t next_off = (uint32_t)fixed(&fc, 4), next_func = (uint32_t)fixed(&fc, 4);
		uintptr_t entry = g.text + entry_off, end = g.text + next_off;
		if (!fc.bad && (uint64_t)func_off + FUNC_SIZE <= avail && end > entry &&
		    entry >= t->text_lo && end <= t->text_hi)
			one_function(&g, t, g.tab + g.functab + func_off, entry, end);
		entry_off = next_off, func_off = next_func;
	}
}
