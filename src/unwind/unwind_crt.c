/*
 * unwind_crt.c - rows for an object's _init and _fini, which carry no
 * CFI.  Outside signal context.
 *
 * The C library's crti.o and crtn.o make the prologue and epilogue of the
 * functions DT_INIT and DT_FINI name ("sub $8,%rsp" ... "add $8,%rsp;
 * ret"), with whatever .init code other objects put between them (the
 * __gmon_start__ check; OpenSSL's libcrypto calls its CPU probe there),
 * and on x86-64 glibc gives them no FDE.  A sample in them (the loader
 * runs a library's _init at dlopen, the first code of a fresh mapping,
 * so the page fault's time lands there), or in a function called from
 * them, ended "[unknown];_init": the walk fell back to a frame-pointer
 * step, and the loader that called _init keeps no frame pointer.
 *
 * The rows are made only for code of exactly that shape, decoded
 * instruction by instruction: an optional endbr64, the sub, then moves,
 * tests, conditional jumps and calls, none of which moves the stack
 * pointer across the instruction, then the add and the ret.  Anything
 * else, or an FDE of its own, and nothing is added: a wrong rule would
 * make a wrong stack, where no rule makes a short one.
 */
#include "unwind/unwind_dwarf.h"

#include <string.h>

#define CRT_MAX_LEN 96 /* bytes from the entry to the ret, at most */

/* The length of an instruction of the body of _init or _fini at p (n
 * bytes readable), 0 if it is not one of the kinds that may be there. */
static size_t body_insn(const uint8_t *p, size_t n)
{
	if (n >= 7 && p[0] == 0x48 && p[1] == 0x8b && (p[2] & 0xc7) == 0x05)
		return 7; /* mov disp32(%rip),%r64 */
	if (n >= 3 && p[0] == 0x48 && p[1] == 0x85 && p[2] >= 0xc0)
		return 3; /* test %r64,%r64 */
	if (n >= 2 && (p[0] & 0xf0) == 0x70)
		return 2; /* jcc rel8 */
	if (n >= 2 && p[0] == 0xff && (p[1] & 0xf8) == 0xd0)
		return 2; /* call *%r64 (rax..rdi) */
	if (n >= 5 && p[0] == 0xe8)
		return 5; /* call rel32 */
	return 0;
}

/* The offset of the ret of the crt-shaped function at entry (n bytes
 * readable), after its prologue at *body; 0 if it has another shape. */
static size_t crt_shape(const uint8_t *entry, size_t n, size_t *body)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	static const uint8_t sub8[4] = {0x48, 0x83, 0xec, 0x08};
	static const uint8_t add8[4] = {0x48, 0x83, 0xc4, 0x08};
	size_t at = n >= 4 && !memcmp(entry, endbr64, 4) ? 4 : 0;
	if (n - at < 4 || memcmp(entry + at, sub8, 4) != 0)
		return 0;
	*body = at += 4;
	while (at < n) {
		if (n - at >= 5 && !memcmp(entry + at, add8, 4) && entry[at + 4] == 0xc3)
			return at + 4;
		size_t len = body_insn(entry + at, n - at);
		if (len == 0)
			return 0;
		at += len;
	}
	return 0;
}

/* Whether a row was emitted for a pc in [lo, hi] (an FDE covers it). */
static int has_rows(const struct trows *t, uintptr_t lo, uintptr_t hi)
{
	for (size_t i = 0; i < t->n; i++) {
		uintptr_t pc = t->origin + t->v[i].pc;
		if (pc >= lo && pc <= hi)
			return 1;
	}
	return 0;
}

/* The rows of the function at entry, when it has crti's shape. */
static void crt_rows(struct trows *t, uintptr_t entry)
{
	if (entry < t->text_lo || entry >= t->text_hi)
		return;
	size_t n = t->text_hi - entry < CRT_MAX_LEN ? t->text_hi - entry : CRT_MAX_LEN, body;
	size_t ret = crt_shape((const uint8_t *)entry, n, &body);
	if (ret == 0 || has_rows(t, entry, entry + ret + 1))
		return;
	uw_emit(t, entry, (struct uw_row){0, 8, 0, UW_CFA_RSP, UW_RBP_SAME, UW_RBX_UNKNOWN});
	uw_emit(t, entry + body, (struct uw_row){0, 16, 0, UW_CFA_RSP, UW_RBP_SAME, UW_RBX_UNKNOWN});
	uw_emit(t, entry + ret, (struct uw_row){0, 8, 0, UW_CFA_RSP, UW_RBP_SAME, UW_RBX_UNKNOWN});
	uw_emit(t, entry + ret + 1, (struct uw_row){0, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN});
}

/* DT_INIT's and DT_FINI's addresses from the object's dynamic section.
 * The loader adds the load bias to some of its entries in place and not
 * to these (it adds it when it calls them), but either form is taken: an
 * offset in the object's code, or an address there. */
static void init_fini(const struct dl_phdr_info *info, const struct trows *t, uintptr_t out[2])
{
	out[0] = out[1] = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t at = info->dlpi_addr + ph->p_vaddr, lo, hi;
		if (ph->p_type != PT_DYNAMIC || uw_segment_of(info, at, &lo, &hi) != 0)
			continue;
		size_t room = hi - at < ph->p_memsz ? hi - at : ph->p_memsz;
		const ElfW(Dyn) *d = (const ElfW(Dyn) *)at;
		for (size_t k = 0; k < room / sizeof *d && d[k].d_tag != DT_NULL; k++) {
			int which = d[k].d_tag == DT_INIT ? 0 : d[k].d_tag == DT_FINI ? 1 : -1;
			uintptr_t v = (uintptr_t)d[k].d_un.d_ptr;
			if (which < 0)
				continue;
			if (v >= t->text_lo && v < t->text_hi)
				out[which] = v;
			else if (v < t->text_hi - info->dlpi_addr)
				out[which] = info->dlpi_addr + v;
		}
		return;
	}
}

void uw_crt_rows(const struct dl_phdr_info *info, struct trows *t)
{
	uintptr_t fn[2];
	init_fini(info, t, fn);
	for (int i = 0; i < 2; i++)
		if (fn[i])
			crt_rows(t, fn[i]);
}
