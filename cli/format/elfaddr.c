/*
 * elfaddr.c - the load bias of a mapping (elfaddr.h): the segment header
 * of the PT_LOAD that maps the mapping's file offset says which file
 * address the mapping's start stands for.  Only the ELF and program
 * headers are read (symbols are the symbolizer's, cli/symbol/).
 */
#include "elfaddr.h"
#include "input.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

int elf_bias(const struct prof_mapping *m, uint64_t *bias)
{
	FILE *f = input_open_named(m->path); /* a FIFO must not hang us */
	if (!f)
		return -1;
	Elf64_Ehdr eh;
	int rc = -1;
	if (fread(&eh, sizeof eh, 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum > 4096)
		goto out;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (fseek(f, (long)(eh.e_phoff + i * sizeof ph), SEEK_SET) != 0 ||
		    fread(&ph, sizeof ph, 1, f) != 1)
			goto out;
		/* the segment whose page-aligned file range holds the offset */
		uint64_t align = ph.p_align > 1 ? ph.p_align : 1;
		uint64_t off0 = ph.p_offset & ~(align - 1);
		if (ph.p_type == PT_LOAD && m->file_offset >= off0 &&
		    m->file_offset < ph.p_offset + ph.p_filesz) {
			uint64_t vaddr_at = ph.p_vaddr - ph.p_offset + m->file_offset;
			*bias = m->start - vaddr_at;
			rc = 0;
			break;
		}
	}
out:
	fclose(f);
	return rc;
}
