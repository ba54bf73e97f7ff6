/*
 * unwind_cfi.c - one object's .eh_frame as compact rows (unwind.h).
 *
 * Runs outside signal context, reading the object's own mapped image: with
 * pc-relative pointer encodings (what x86-64 toolchains emit) the values
 * read are runtime addresses, so no load bias is applied.  Every read is
 * bounded by the end of the PT_LOAD segment holding the data: a malformed
 * table gives a module with fewer rows, never a fault.
 *
 * Each FDE's CFA program runs from its CIE's initial state; the state in
 * force over each address interval becomes a row.  Only what the handler
 * needs is tracked: the CFA rule, rbp's and rbx's rules and the return
 * address's.
 */
#include "unwind/unwind_dwarf.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* DWARF register numbers (x86-64 psABI). */
enum { DWREG_RBX = 3, DWREG_RDI = 5, DWREG_RBP = 6, DWREG_RSP = 7, DWREG_RA = 16 };
enum { CFA_REG, CFA_PLT, CFA_DEREF, CFA_EXPR };

/* Parses the CIE at p (its length field); 0 on success. */
static int parse_cie(const uint8_t *p, const uint8_t *limit, struct cie *ci)
{
	struct cur c = {p, limit, 0};
	uint64_t len = fixed(&c, 4);
	if (len == 0xffffffffu)
		len = fixed(&c, 8);
	if (c.bad || len > (uint64_t)(limit - c.p))
		return -1;
	const uint8_t *end = c.p + len;
	c.end = end;
	if (fixed(&c, 4) != 0)
		return -1; /* not a CIE */
	uint64_t version = fixed(&c, 1);
	const char *aug = (const char *)c.p;
	size_t alen = strnlen(aug, (size_t)(end - c.p));
	c.p += alen + 1;
	memset(ci, 0, sizeof *ci);
	ci->fde_enc = 0; /* absptr */
	if (alen >= 2 && aug[0] == 'e' && aug[1] == 'h')
		fixed(&c, 8);
	ci->code_align = uleb(&c);
	ci->data_align = sleb(&c);
	if (version == 1)
		fixed(&c, 1);
	else
		uleb(&c);
	if (alen && aug[0] == 'z') {
		uint64_t zlen = uleb(&c);
		if (c.bad || zlen > (uint64_t)(end - c.p))
			return -1;
		const uint8_t *zend = c.p + zlen;
		ci->zaug = 1;
		for (size_t i = 1; i < alen && !c.bad; i++) {
			if (aug[i] == 'R')
				ci->fde_enc = (uint8_t)fixed(&c, 1);
			else if (aug[i] == 'P') /* skipped: its size is in the format */
				encoded(&c, (uint8_t)(fixed(&c, 1) & 0x0f), 0);
			else if (aug[i] == 'L')
				fixed(&c, 1);
			else if (aug[i] == 'S')
				ci->signal = 1;
			else
				break; /* unknown: zlen lets us skip the rest */
		}
		c.p = zend;
	} else if (alen && !(alen == 2 && aug[0] == 'e' && aug[1] == 'h')) {
		return -1; /* an augmentation we cannot skip */
	}
	if (c.bad || c.p > end)
		return -1;
	ci->insns = (struct cur){c.p, end, 0};
	return 0;
}

/* The rules in force, as far as the handler cares: the CFA, and where
 * rbp (slot 0), the return address (slot 1) and rbx (slot 2) were
 * saved.  A callee-saved register no rule names keeps its value (the
 * convention compilers and unwinders share), so rbx starts R_SAME. */
enum { R_SAME, R_OFF, R_UNDEF, R_OTHER, R_RDI };
struct state {
	uint8_t cfa;
	uint8_t rule[3];
	uint64_t cfa_reg;
	int64_t cfa_off, off[3];
};

/* The row's rbx rule for the state's (unwind.h: a slot 8 bytes apart
 * below the CFA, or same, or unknown). */
static uint8_t rbx_rule(const struct state *s)
{
	int64_t off = s->off[2];
	if (s->rule[2] == R_SAME)
		return UW_RBX_SAME;
	if (s->rule[2] != R_OFF || off >= 0 || off % 8 != 0 ||
	    -off / 8 > UW_RBX_SLOT_LAST - UW_RBX_SLOT_FIRST + 1)
		return UW_RBX_UNKNOWN;
	return (uint8_t)(UW_RBX_SLOT_FIRST - 1 - off / 8);
}

static struct uw_row row_of(const struct state *s)
{
	struct uw_row r = {0, 0, 0, UW_CFA_UNKNOWN, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN};
	if (s->rule[1] == R_UNDEF) {
		r.cfa = UW_CFA_END;
		return r;
	}
	int in_rdi = s->rule[1] == R_RDI; /* glibc's vfork, between its pop and push */
	if (!in_rdi && (s->rule[1] != R_OFF || s->off[1] != -8))
		return r;
	int by_reg = s->cfa == CFA_REG && s->cfa_off == (int32_t)s->cfa_off;
	if (in_rdi) {
		if (by_reg && s->cfa_reg == DWREG_RSP)
			r.cfa = UW_CFA_RA_RDI, r.cfa_off = (int32_t)s->cfa_off;
	} else if (s->cfa == CFA_PLT) {
		r.cfa = UW_CFA_PLT;
		r.cfa_off = (int32_t)s->cfa_off;
	} else if (by_reg && (s->cfa_reg == DWREG_RSP || s->cfa_reg == DWREG_RBP)) {
		r.cfa = s->cfa_reg == DWREG_RSP ? UW_CFA_RSP : UW_CFA_RBP;
		r.cfa_off = (int32_t)s->cfa_off;
	} else if (s->cfa == CFA_DEREF && s->cfa_off == (int32_t)s->cfa_off) {
		r.cfa = s->cfa_reg == DWREG_RSP ? UW_CFA_RSP_DEREF : UW_CFA_RBP_DEREF;
		r.cfa_off = (int32_t)s->cfa_off;
	} else if (by_reg && s->cfa_reg < 16) {
		r.cfa = (uint8_t)(UW_CFA_GPR + s->cfa_reg); /* rax, r11 ...: unwind.h */
		r.cfa_off = (int32_t)s->cfa_off;
	}
	if (s->rule[0] == R_OFF && s->off[0] == (int16_t)s->off[0]) {
		r.rbp = UW_RBP_SAVED;
		r.rbp_off = (int16_t)s->off[0];
	} else if (s->rule[0] == R_SAME) {
		r.rbp = UW_RBP_SAME;
	}
	r.rbx = rbx_rule(s) & 0x3f;
	return r;
}

/* Whether a row at rel (an end marker when !row) sorts before prev, so
 * that finish() must sort: by pc, at one pc end markers first, then the
 * order emitted. */
static int sorts_before(const struct uw_row *prev, uint32_t rel, int row)
{
	return rel < prev->pc || (rel == prev->pc && !row && prev->cfa != UW_CFA_NONE);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif
#define POPULATE_STEP ((size_t)1 << 20)

/*
 * The rows' pages are asked for a megabyte at a time, ahead of the rows
 * written (MADV_POPULATE_WRITE), rather than faulted one by one: where a
 * first touch is dear (a guest's page fault, about 10 us), the kernel
 * fills them in one call at half the cost.  Any failure (EINVAL before
 * Linux 5.14, ENOMEM) leaves them to fault as before.
 */
static void populate_ahead(struct trows *t)
{
	size_t have = t->cap * sizeof *t->v;
	size_t upto = t->ready + POPULATE_STEP < have ? t->ready + POPULATE_STEP : have;
	uintptr_t lo = ((uintptr_t)t->v + t->ready + 4095) & ~(uintptr_t)4095;
	uintptr_t hi = ((uintptr_t)t->v + upto) & ~(uintptr_t)4095;
	if (hi > lo)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
	t->ready = upto;
}

void uw_emit(struct trows *t, uintptr_t pc, struct uw_row r)
{
	if (pc < t->origin || pc - t->origin > UINT32_MAX)
		return;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 4096;
		struct uw_row *v = mem_realloc(t->v, cap * sizeof *v);
		if (!v) {
			t->oom = 1;
			return;
		}
		t->v = v, t->cap = cap;
	}
	if ((t->n + 1) * sizeof *t->v > t->ready)
		populate_ahead(t);
	r.pc = (uint32_t)(pc - t->origin);
	if (!t->sorted_upto && t->n && sorts_before(&t->v[t->n - 1], r.pc, r.cfa != UW_CFA_NONE))
		t->sorted_upto = t->n;
	t->v[t->n++] = r;
}

/* The linker's PLT rule: rsp+8 + ((rip & 15) >= N) << 3.  Returns N or -1. */
static int plt_expression(const uint8_t *e, uint64_t len)
{
	static const uint8_t pat[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0, 0x2a, 0x33, 0x24, 0x22};
	if (len != sizeof pat)
		return -1;
	for (size_t i = 0; i < sizeof pat; i++)
		if (i != 6 && e[i] != pat[i])
			return -1;
	return e[6] >= 0x30 && e[6] <= 0x4f ? e[6] - 0x30 : -1;
}

/* OpenSSL's rule for a frame whose stack pointer it realigned: the
 * caller's rsp, saved in the frame, + 8 (`.cfi_cfa_expression
 * %rsp+N,deref,+8`): DW_OP_breg7 N (or breg6, from rbp), DW_OP_deref,
 * DW_OP_plus_uconst 8, and nothing else.  The register's DWARF number
 * and N, or -1. */
static int deref_expression(const uint8_t *p, uint64_t len, uint64_t *reg, int64_t *off)
{
	struct cur e = {p, p + len, 0};
	uint64_t op = fixed(&e, 1);
	if (op != 0x70 + DWREG_RSP && op != 0x70 + DWREG_RBP)
		return -1;
	*reg = op - 0x70;
	*off = sleb(&e);
	int ok = fixed(&e, 1) == 0x06 && fixed(&e, 1) == 0x23 && uleb(&e) == 8;
	return ok && !e.bad && e.p == e.end ? 0 : -1;
}

/* The state's slot for DWARF register reg; -1 for one that does not
 * count (only rbp, the return address and rbx do). */
static int slot_of(uint64_t reg)
{
	return reg == DWREG_RBP ? 0 : reg == DWREG_RA ? 1 : reg == DWREG_RBX ? 2 : -1;
}

static void set_reg(struct state *s, uint64_t reg, uint8_t rule, int64_t off)
{
	int k = slot_of(reg);
	if (k >= 0)
		s->rule[k] = rule, s->off[k] = off;
}

static void restore_reg(struct state *s, const struct state *init, uint64_t reg)
{
	int k = slot_of(reg);
	if (k >= 0)
		s->rule[k] = init->rule[k], s->off[k] = init->off[k];
}

/* Skips a DWARF expression block; 0 if it fits. */
static int skip_block(struct cur *c, uint64_t len)
{
	if (len > (uint64_t)(c->end - c->p))
		return -1;
	c->p += len;
	return 0;
}

/*
 * Runs a CFA program, emitting into t (when set) the state in force before
 * each advance, for addresses below end.  init: the CIE's state (for
 * DW_CFA_restore).  Returns -1 on an opcode it does not know.
 */
static int run(struct cur *c, const struct cie *ci, struct state *s, const struct state *init,
               uintptr_t *loc, uintptr_t end, struct trows *t)
{
	struct state stack[16];
	unsigned depth = 0;
	int64_t da = ci->data_align;
	while (c->p < c->end && !c->bad) {
		uint8_t op = (uint8_t)fixed(c, 1), low = op & 0x3f;
		uint64_t reg, len, delta = 0;
		switch (op >> 6) {
		case 1: delta = low; goto advance;
		case 2: set_reg(s, low, R_OFF, (int64_t)uleb(c) * da); continue;
		case 3: restore_reg(s, init, low); continue;
		}
		switch (op) {
		case 0x00: break;                                    /* nop */
		case 0x01: *loc = encoded(c, ci->fde_enc, 0); break; /* set_loc */
		case 0x02: delta = fixed(c, 1); goto advance;
		case 0x03: delta = fixed(c, 2); goto advance;
		case 0x04: delta = fixed(c, 4); goto advance;
		case 0x05: reg = uleb(c); set_reg(s, reg, R_OFF, (int64_t)uleb(c) * da); break;
		case 0x11: reg = uleb(c); set_reg(s, reg, R_OFF, sleb(c) * da); break;
		case 0x2f: reg = uleb(c); set_reg(s, reg, R_OFF, -(int64_t)uleb(c) * da); break;
		case 0x06: restore_reg(s, init, uleb(c)); break;
		case 0x07: set_reg(s, uleb(c), R_UNDEF, 0); break;
		case 0x08: set_reg(s, uleb(c), R_SAME, 0); break;
		case 0x09: { /* register: the return address in rdi is followed */
			reg = uleb(c);
			uint64_t in = uleb(c);
			set_reg(s, reg, reg == DWREG_RA && in == DWREG_RDI ? R_RDI : R_OTHER, 0);
			break;
		}
		case 0x0a:                                           /* remember_state */
			if (depth == sizeof stack / sizeof stack[0])
				return -1;
			stack[depth++] = *s;
			break;
		case 0x0b:                                           /* restore_state */
			if (depth == 0)
				return -1;
			*s = stack[--depth]; /* the CFA rule too, as GCC expects */
			break;
		case 0x0c: s->cfa = CFA_REG; s->cfa_reg = uleb(c); s->cfa_off = (int64_t)uleb(c); break;
		case 0x12: s->cfa = CFA_REG; s->cfa_reg = uleb(c); s->cfa_off = sleb(c) * da; break;
		case 0x0d: s->cfa_reg = uleb(c); break;
		case 0x0e: s->cfa_off = (int64_t)uleb(c); break;
		case 0x13: s->cfa_off = sleb(c) * da; break;
		case 0x0f: {                                         /* def_cfa_expression */
			len = uleb(c);
			int fits = len <= (uint64_t)(c->end - c->p);
			int n = fits ? plt_expression(c->p, len) : -1;
			s->cfa = n >= 0 ? CFA_PLT : CFA_EXPR;
			s->cfa_off = n;
			if (n < 0 && fits && deref_expression(c->p, len, &s->cfa_reg, &s->cfa_off) == 0)
				s->cfa = CFA_DEREF;
			if (skip_block(c, len))
				return -1;
			break;
		}
		case 0x10: case 0x16:                                /* (val_)expression */
			reg = uleb(c);
			if (skip_block(c, uleb(c)))
				return -1;
			set_reg(s, reg, R_OTHER, 0);
			break;
		case 0x14: reg = uleb(c); uleb(c); set_reg(s, reg, R_OTHER, 0); break;
		case 0x15: reg = uleb(c); sleb(c); set_reg(s, reg, R_OTHER, 0); break;
		case 0x2e: uleb(c); break;                           /* GNU_args_size */
		default: return -1;
		}
		continue;
advance:
		if (t && *loc < end)
			uw_emit(t, *loc, row_of(s));
		*loc += delta * ci->code_align;
	}
	return c->bad ? -1 : 0;
}

/* glibc's __restore_rt: mov $15,%rax; syscall (rt_sigreturn). */
static int is_sigreturn(uintptr_t pc, uintptr_t end)
{
	static const uint8_t code[] = {0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05};
	for (uintptr_t at = pc; at <= pc + 1 && at + sizeof code <= end; at++)
		if (memcmp((const void *)at, code, sizeof code) == 0)
			return 1;
	return 0;
}
static const struct uw_row no_row = {0, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN};

void uw_fde(const uint8_t *p, struct trows *t)
{
	const uint8_t *limit = t->eh_hi;
	struct cur c = {p, limit, 0};
	uint64_t len = fixed(&c, 4);
	if (len == 0xffffffffu)
		len = fixed(&c, 8);
	if (c.bad || len < 4 || len > (uint64_t)(limit - c.p))
		return;
	c.end = c.p + len;
	const uint8_t *idp = c.p;
	uint32_t id = (uint32_t)fixed(&c, 4);
	struct cie ci;
	if (id == 0 || id > (uintptr_t)(idp - t->eh_lo))
		return;
	if (idp - id != t->cie_at) {
		t->cie_at = NULL;
		if (parse_cie(idp - id, limit, &t->cie) != 0)
			return;
		t->cie_at = idp - id;
	}
	ci = t->cie;
	uintptr_t begin = encoded(&c, ci.fde_enc, 0);
	uintptr_t range = encoded(&c, ci.fde_enc & 0x0f, 0);
	if (ci.zaug && skip_block(&c, uleb(&c)))
		return;
	if (c.bad || range == 0 || begin + range < begin)
		return;
	uintptr_t end = begin + range, loc = begin;
	if (ci.signal) {
		struct uw_row r = no_row;
		int code = begin >= t->text_lo && end <= t->text_hi; /* mapped */
		r.cfa = code && is_sigreturn(begin, end) ? UW_CFA_SIGNAL : UW_CFA_UNKNOWN;
		uw_emit(t, begin, r);
		uw_emit(t, end, no_row);
		return;
	}
	struct state init = {CFA_REG, {R_SAME, R_OFF, R_SAME}, DWREG_RSP, 8, {0, -8, 0}}, s;
	struct cur ic = ci.insns;
	uintptr_t iloc = begin;
	if (run(&ic, &ci, &init, &init, &iloc, begin, NULL) != 0)
		init.cfa = CFA_EXPR;
	s = init;
	if (run(&c, &ci, &s, &init, &loc, end, t) != 0)
		s.cfa = CFA_EXPR;
	if (loc < end)
		uw_emit(t, loc, row_of(&s));
	uw_emit(t, end, no_row);
}

