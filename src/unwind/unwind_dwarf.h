/*
 * unwind_dwarf.h - what the two halves of the CFI reader share:
 * unwind_cfi.c runs CIE/FDE programs, unwind_table.c walks .eh_frame and
 * sorts the rows.  Outside signal context only.
 */
#ifndef PROFIL_UNWIND_DWARF_H
#define PROFIL_UNWIND_DWARF_H

#include "unwind/unwind.h"

#include <link.h>

/* A bounded cursor: reading past end sets bad and yields zeros. */
struct cur {
	const uint8_t *p, *end;
	int bad;
};

static inline uint64_t fixed(struct cur *c, size_t n)
{
	uint64_t v = 0;
	if ((size_t)(c->end - c->p) < n) {
		c->bad = 1;
		c->p = c->end;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static inline uint64_t uleb(struct cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		uint64_t b = fixed(c, 1);
		if (shift < 64)
			v |= (b & 0x7f) << shift;
		if (!(b & 0x80) || c->bad)
			return v;
	}
}

static inline int64_t sleb(struct cur *c)
{
	uint64_t v = 0, b;
	unsigned shift = 0;
	do {
		b = fixed(c, 1);
		if (shift < 64)
			v |= (b & 0x7f) << shift;
		shift += 7;
	} while ((b & 0x80) && !c->bad);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A DW_EH_PE_* encoded pointer.  datarel: base for DW_EH_PE_datarel.
 * DW_EH_PE_indirect is not followed (only personality pointers, which
 * are skipped, use it). */
static inline uintptr_t encoded(struct cur *c, uint8_t enc, uintptr_t datarel)
{
	uintptr_t at = (uintptr_t)c->p;
	uint64_t v;
	switch (enc & 0x0f) {
	case 0x00: case 0x04: case 0x0c: v = fixed(c, 8); break;
	case 0x01: v = uleb(c); break;
	case 0x02: v = fixed(c, 2); break;
	case 0x03: v = fixed(c, 4); break;
	case 0x09: v = (uint64_t)sleb(c); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)fixed(c, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)fixed(c, 4); break;
	default: c->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: return (uintptr_t)v;
	case 0x10: return (uintptr_t)v + at;
	case 0x30: return (uintptr_t)v + datarel;
	default: c->bad = 1; return 0; /* textrel, funcrel, aligned: unused here */
	}
}

/* A CIE, as far as its FDEs need it. */
struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	uint8_t zaug, signal;
	struct cur insns;
};

/*
 * The rows of the whole object as they are emitted, and the bounds every
 * read of its .eh_frame ([eh_lo, eh_hi)) and of its code ([text_lo,
 * text_hi), the signal trampoline's bytes) stays inside.  A row's pc is
 * its offset from origin, the object's lowest PT_LOAD address (rows
 * outside [origin, origin + 4 GiB) are dropped: no object's code lies
 * there), so the rows are already in the form the handler reads and
 * finish() (unwind_table.c) orders and merges them where they lie.  On
 * this kind of machine memory first touched is dear (about 10 us a
 * page): libLLVM's 1.46 million rows took 64 MB of fresh pages when each
 * one was 32 bytes and the table a copy, 18 MB now.
 */
struct trows {
	const uint8_t *eh_lo, *eh_hi;
	uintptr_t text_lo, text_hi, origin;
	struct uw_row *v;
	size_t n, cap;
	size_t ready;          /* bytes of v whose pages were asked for */
	int oom;
	size_t sorted_upto;    /* v[0, sorted_upto) is in order and v[sorted_upto]
	                          sorts before the row emitted before it; 0: all
	                          in order (the first row is never out of it) */
	const uint8_t *cie_at; /* the CIE last parsed (FDEs share a few), */
	struct cie cie;        /* and what it said */
};

HIDDEN void uw_emit(struct trows *t, uintptr_t pc, struct uw_row r);
/* unwind_table.c: puts t's rows in order when they were emitted out of
 * it (by pc; at one pc end markers first, then the order emitted); 0, or
 * -1 when out of memory (rows unchanged).  Exposed for its test. */
HIDDEN int uw_rows_order(struct trows *t);
/* One FDE at p (its length field) into rows; CIEs are skipped. */
HIDDEN void uw_fde(const uint8_t *p, struct trows *t);
/* unwind_go.c: rows for a Go program's code, which has no FDEs, from the
 * stack-pointer tables Go keeps for its runtime (nothing for other
 * objects). */
HIDDEN void uw_go_rows(const struct dl_phdr_info *info, struct trows *t);
/* unwind_crt.c: rows for the object's _init and _fini (crti/crtn code,
 * which has no FDE), when their code has that shape. */
HIDDEN void uw_crt_rows(const struct dl_phdr_info *info, struct trows *t);

#endif /* PROFIL_UNWIND_DWARF_H */
