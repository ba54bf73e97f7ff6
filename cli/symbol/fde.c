/*
 * fde.c - where the function holding an address starts, by its call
 * frame information: a stripped file with no symbol for an address still
 * has one FDE per function (.eh_frame, which unwinding needs and strip
 * keeps), so addresses nothing names are grouped by the function they
 * are in ("module+0x<start>") rather than reported one by one.
 *
 * libdw answers "which CFI row holds this address" (dwarf_cfi_addrframe,
 * dwarf_frame_info), not "which FDE": a function has one row per change
 * of its frame (push, sub, pop...), and naming by the row's start split
 * one function into many names.  The FDE's start is its initial_location,
 * which libdw keeps private; the linker's sorted copy of every one is the
 * search table in .eh_frame_hdr (PT_GNU_EH_FRAME), the table the unwinder
 * in libgcc searches.  Its layout (LSB "Linux Standard Base Core
 * Specification", .eh_frame_hdr):
 *
 *   u8 version (1), u8 eh_frame_ptr_enc, u8 fde_count_enc, u8 table_enc,
 *   eh_frame_ptr (eh_frame_ptr_enc), fde_count (fde_count_enc),
 *   fde_count x { initial_location, fde_address } (table_enc)
 *
 * Every linker writes table_enc as DW_EH_PE_datarel | DW_EH_PE_sdata4
 * (0x3b: 32-bit signed offsets from the section's start); that is the
 * one read here.  GNU ld types the section SHT_PROGBITS, LLVM's lld
 * SHT_X86_64_UNWIND (clang's and Rust's toolchains, Chromium): both are
 * read.
 *
 * An address between two entries of the table is in the first one's
 * function: the table alone answers, without libdw.  That also spares
 * lld's files a pass over all their CFI: lld places .eh_frame_hdr after
 * .eh_frame, and libdw (0.188) looks for the search table only among the
 * sections before .eh_frame, so without it each address libdw has not
 * seen yet made it read on through every FDE (libLLVM: 100,000 FDEs,
 * about 15 ms per recording).  Code without CFI between two functions
 * is grouped with the function before it.  Past the last entry, or with
 * no table (or another encoding), libdw's row says: its start, or the
 * table's start when the row lies inside that function.
 */
#include "symint.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct sym_fdes {
	const unsigned char *table; /* fde_count pairs of int32, in the Elf's data */
	size_t count;
	uint64_t base; /* .eh_frame_hdr's address: datarel's origin */
};

/* Bytes an encoded value of this DW_EH_PE format takes; 0 unsupported. */
static size_t encoded_size(unsigned enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_udata2: case DW_EH_PE_sdata2: return 2;
	case DW_EH_PE_udata4: case DW_EH_PE_sdata4: return 4;
	case DW_EH_PE_udata8: case DW_EH_PE_sdata8: return 8;
	default: return 0;
	}
}

static int host_byte_order(Elf *elf)
{
	const unsigned short one = 1;
	int little = *(const unsigned char *)&one == 1;
	const char *ident = elf_getident(elf, NULL);
	return ident && ident[EI_DATA] == (little ? ELFDATA2LSB : ELFDATA2MSB);
}

static void read_table(Elf *elf, struct sym_fdes *f)
{
	size_t shstrndx;
	if (!host_byte_order(elf) || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".eh_frame_hdr") != 0 || !(d = elf_getdata(scn, NULL)) ||
		    !d->d_buf || d->d_size < 4)
			continue;
		const unsigned char *h = d->d_buf;
		size_t ptr = encoded_size(h[1]), cnt = encoded_size(h[2]);
		if (h[0] != 1 || h[1] == DW_EH_PE_omit || ptr == 0 || cnt != 4 ||
		    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4) || d->d_size < 4 + ptr + cnt)
			return;
		uint32_t n;
		memcpy(&n, h + 4 + ptr, sizeof n);
		size_t at = 4 + ptr + cnt;
		if (n > (d->d_size - at) / 8)
			return;
		f->table = h + at;
		f->count = n;
		f->base = sh.sh_addr;
		return;
	}
}

/* Entry k's initial location. */
static uint64_t entry_start(const struct sym_fdes *f, size_t k)
{
	int32_t loc;
	memcpy(&loc, f->table + 8 * k, sizeof loc);
	return f->base + (uint64_t)(int64_t)loc;
}

/* The greatest FDE start at or below vaddr from the search table (0:
 * none); *last: it is the table's last entry. */
static int table_start(const struct sym_fdes *f, uint64_t vaddr, uint64_t *start, int *last)
{
	size_t lo = 0, hi = f->count;
	while (lo < hi) { /* first entry starting above vaddr */
		size_t mid = lo + (hi - lo) / 2;
		if (entry_start(f, mid) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	*start = entry_start(f, lo - 1);
	*last = lo == f->count;
	return 1;
}

/* The CFI row holding vaddr (.eh_frame, else .debug_frame): its range. */
static int row_at(Dwfl_Module *mod, uint64_t vaddr, uint64_t *lo, int *from_eh)
{
	Dwarf_Addr bias = 0, rlo, rhi;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	Dwarf_Frame *frame = NULL;
	*from_eh = 1;
	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr - bias, &frame) != 0) {
		*from_eh = 0;
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, vaddr - bias, &frame) != 0)
			return -1;
	}
	int rc = dwarf_frame_info(frame, &rlo, &rhi, NULL) < 0 ? -1 : 0;
	free(frame);
	if (rc == 0)
		*lo = rlo + bias;
	return rc;
}

/* Questions put to libdw, for the tests (one symbolizing thread). */
static unsigned long libdw_asks;

unsigned long sym_fde_libdw_asks(void)
{
	return libdw_asks;
}

int sym_image_fde_start(struct sym_image *im, uint64_t vaddr, uint64_t *start)
{
	Dwfl_Module *mod = sym_image_module(im);
	struct sym_fdes **f = sym_image_fdes(im);
	if (!*f && (*f = calloc(1, sizeof **f))) {
		GElf_Addr bias;
		Elf *elf = dwfl_module_getelf(mod, &bias);
		if (elf)
			read_table(elf, *f);
	}
	uint64_t fn = 0, row;
	int last = 0, from_eh;
	int in_table = *f && table_start(*f, vaddr, &fn, &last);
	if (in_table && !last) {
		*start = fn; /* the next entry starts above vaddr */
		return 0;
	}
	libdw_asks++;
	if (row_at(mod, vaddr, &row, &from_eh) != 0)
		return -1;
	/* the table indexes .eh_frame's FDEs; the row must lie inside the
	 * function it names */
	*start = from_eh && in_table && fn <= row ? fn : row;
	return 0;
}

void sym_fdes_free(struct sym_fdes *f)
{
	free(f);
}
