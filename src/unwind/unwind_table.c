/*
 * unwind_table.c - an object's .eh_frame, found through its
 * .eh_frame_hdr, as one sorted block of rows (struct uw_module).
 * Outside signal context; every read stays inside the PT_LOAD segment
 * that holds what is read.
 */
#include "unwind/unwind_dwarf.h"

#include <stdlib.h>
#include <string.h>

int uw_segment_of(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t *lo,
                  uintptr_t *hi)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && addr >= s && addr - s < ph->p_memsz) {
			*lo = s, *hi = s + ph->p_memsz;
			return 0;
		}
	}
	return -1;
}

/* A row and the order it was emitted in, to sort by. */
struct seqrow {
	struct uw_row r;
	uint32_t seq;
};

/* By pc; at one pc, end markers before rows. */
static int cmp_row(const struct uw_row *x, const struct uw_row *y)
{
	int rx = x->cfa != UW_CFA_NONE, ry = y->cfa != UW_CFA_NONE;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return rx - ry;
}

/* cmp_row, then in emission order: the last of a pc's group is the one
 * that holds. */
static int cmp_seqrow(const void *a, const void *b)
{
	const struct seqrow *x = a, *y = b;
	int c = cmp_row(&x->r, &y->r);
	return c ? c : (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/*
 * FDEs come in address order from .eh_frame_hdr's table, each one's rows
 * in address order; what comes after them does not: the rows of _init
 * and _fini (unwind_crt.c), which lie before and after .text, and the
 * FDEs of an object without a search table.  So only the rows from the
 * first one out of order on (sorted_upto) are sorted, through a copy that
 * carries each row's emission order, and merged back with the ordered
 * ones before them, from the end: O(n + m log m) for m such rows.  A
 * full sort of libLLVM's 1.46 million rows for its four rows of _init
 * and _fini cost clang's first start under the agent 0.1 s.  In a tie
 * the ordered part's row, emitted first, goes first.
 */
int uw_rows_order(struct trows *t)
{
	if (!t->sorted_upto)
		return 0;
	size_t p = t->sorted_upto, m = t->n - p;
	struct seqrow *s = mem_alloc(m * sizeof *s);
	if (!s)
		return -1;
	for (size_t i = 0; i < m; i++)
		s[i] = (struct seqrow){t->v[p + i], (uint32_t)(p + i)};
	sort_inplace(s, m, sizeof *s, cmp_seqrow);
	for (size_t i = p, j = m, k = t->n; j > 0;) {
		if (i > 0 && cmp_row(&t->v[i - 1], &s[j - 1].r) > 0)
			t->v[--k] = t->v[--i];
		else
			t->v[--k] = s[--j].r;
	}
	mem_free(s);
	t->sorted_upto = 0;
	return 0;
}

static int same_rule(const struct uw_row *a, const struct uw_row *b)
{
	return a->cfa == b->cfa && a->cfa_off == b->cfa_off && a->rbp == b->rbp &&
	       a->rbp_off == b->rbp_off && a->rbx == b->rbx;
}

/* One row per pc (the last of its group), repeats of the row before and
 * leading end markers dropped, in place; the number kept. */
static size_t merge_rows(struct uw_row *v, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (i + 1 < n && v[i + 1].pc == v[i].pc)
			continue;
		if (k == 0 ? v[i].cfa == UW_CFA_NONE : same_rule(&v[k - 1], &v[i]))
			continue;
		v[k++] = v[i];
	}
	return k;
}

/* index[i]: the last row at or before lo + (i << UW_INDEX_SHIFT), 0
 * before the first. */
static void fill_index(uint32_t *index, size_t nidx, const struct uw_row *rows, size_t k)
{
	for (size_t i = 0, r = 0; i < nidx; i++) {
		uint64_t at = (uint64_t)i << UW_INDEX_SHIFT;
		while (r + 1 < k && rows[r + 1].pc <= at)
			r++;
		index[i] = (uint32_t)r;
	}
}

/* The module over the rows: sorted, merged, its pcs made offsets from its
 * lo, the index after them in the rows' own block, which the module
 * takes from t.  [tlo, thi): the object's executable segments, covered
 * even without CFI. */
static struct uw_module *finish(struct trows *t, uintptr_t tlo, uintptr_t thi)
{
	if (uw_rows_order(t) != 0)
		return NULL;
	size_t k = merge_rows(t->v, t->n);
	uintptr_t first = k ? t->origin + t->v[0].pc : tlo;
	uintptr_t last = k ? t->origin + t->v[k - 1].pc : thi;
	uintptr_t lo = first < tlo ? first : tlo, hi = last > thi ? last : thi;
	if (hi <= lo || hi - lo > UINT32_MAX)
		return NULL;
	size_t nidx = ((hi - lo) >> UW_INDEX_SHIFT) + 2;
	struct uw_module *m = mem_calloc(1, sizeof *m);
	struct uw_row *rows = m ? mem_realloc(t->v, k * sizeof *rows + nidx * 4) : NULL;
	if (!rows) {
		mem_free(m);
		return NULL;
	}
	t->v = NULL; /* the module's now */
	uint32_t shift = (uint32_t)(lo - t->origin);
	for (size_t i = 0; i < k; i++)
		rows[i].pc -= shift;
	uint32_t *index = (uint32_t *)(rows + k);
	fill_index(index, nidx, rows, k);
	m->lo = lo, m->hi = hi, m->rows = rows, m->nrows = k, m->index = index;
	m->heap = rows;
	return m;
}

/* Every FDE of the .eh_frame that the header at hdr names. */
static void all_fdes(const struct dl_phdr_info *info, uintptr_t hdr, struct trows *t)
{
	uintptr_t hlo, hhi, elo, ehi;
	if (uw_segment_of(info, hdr, &hlo, &hhi) != 0)
		return;
	struct cur c = {(const uint8_t *)hdr, (const uint8_t *)hhi, 0};
	uint8_t version = (uint8_t)fixed(&c, 1), ptr_enc = (uint8_t)fixed(&c, 1);
	uint8_t cnt_enc = (uint8_t)fixed(&c, 1), tab_enc = (uint8_t)fixed(&c, 1);
	if (version != 1 || ptr_enc == 0xff)
		return;
	uintptr_t eh = encoded(&c, ptr_enc, hdr);
	if (c.bad || uw_segment_of(info, eh, &elo, &ehi) != 0)
		return;
	const uint8_t *limit = (const uint8_t *)ehi;
	t->eh_lo = (const uint8_t *)elo, t->eh_hi = limit;
	if (cnt_enc != 0xff && tab_enc == 0x3b) { /* datarel sdata4: the usual */
		uint64_t n = encoded(&c, cnt_enc, hdr);
		for (uint64_t i = 0; i < n && !c.bad; i++) {
			encoded(&c, tab_enc, hdr);
			uintptr_t fde = encoded(&c, tab_enc, hdr);
			if (!c.bad && fde >= elo && fde < ehi)
				uw_fde((const uint8_t *)fde, t);
		}
		return;
	}
	/* No search table: walk to the zero terminator. */
	for (const uint8_t *p = (const uint8_t *)eh; limit - p >= 4;) {
		struct cur w = {p, limit, 0};
		uint64_t len = fixed(&w, 4);
		if (len == 0xffffffffu)
			len = fixed(&w, 8);
		if (len == 0 || w.bad || len > (uint64_t)(limit - w.p))
			break;
		uw_fde(p, t);
		p = w.p + len;
	}
}

/* The lowest address of the object's PT_LOAD segments. */
static uintptr_t lowest_load(const struct dl_phdr_info *info)
{
	uintptr_t lo = UINTPTR_MAX;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
	}
	return lo;
}

struct uw_module *uw_module_build(const struct dl_phdr_info *info, uintptr_t hdr)
{
	uintptr_t tlo = UINTPTR_MAX, thi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			tlo = s < tlo ? s : tlo;
			thi = s + ph->p_memsz > thi ? s + ph->p_memsz : thi;
		}
	}
	if (thi == 0)
		return NULL;
	struct trows t = {0};
	t.text_lo = tlo, t.text_hi = thi, t.origin = lowest_load(info);
	if (hdr)
		all_fdes(info, hdr, &t);
	uw_go_rows(info, &t);
	uw_crt_rows(info, &t);
	struct uw_module *m = t.oom ? NULL : finish(&t, tlo, thi);
	mem_free(t.v);
	return m;
}
