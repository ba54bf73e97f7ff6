/*
 * elfhead.h - what a program file says of the loader it needs: its ELF
 * class, machine and PT_INTERP, read from a descriptor.
 *
 * Two places ask it of a program about to run: `profil record` of its
 * command (cli/record/elfcheck.c: refused up front when the agent cannot
 * go into it), and the agent of every program its process execs
 * (agent/loadercheck.c: the agent left out of a program whose loader
 * cannot take it).  The agent asks in the exec path, vfork children
 * included, so the reading is pread() into the caller's struct and
 * nothing else: async-signal-safe, no allocation.  Header-only, as the
 * command links nothing of src/.
 */
#ifndef PROFIL_BASE_ELFHEAD_H
#define PROFIL_BASE_ELFHEAD_H

#include <elf.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#define ELFHEAD_OUR_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define ELFHEAD_OUR_MACHINE EM_AARCH64
#else
#define ELFHEAD_OUR_MACHINE EM_NONE /* unknown: the class and the loader only */
#endif

/* Program headers read at most: real programs have about a dozen. */
#define ELFHEAD_MAX_PHDRS 4096

struct elf_head {
	unsigned char cls;  /* ELFCLASS32, ELFCLASS64 */
	unsigned machine;   /* e_machine, in the file's byte order */
	/* 1: interp holds the PT_INTERP; 0: there is none (static, or the
	 * loader itself); -1: not read (another class or byte order than
	 * ours, headers out of bounds, a path longer than interp) */
	int has_interp;
	char interp[256];
};

/* 1 with *h filled when fd is an ELF file; 0 when it is not one (a
 * script, a file too short): its own interpreter or exec judges it. */
static inline int elf_head_read(int fd, struct elf_head *h)
{
	Elf64_Ehdr eh;
	memset(&eh, 0, sizeof eh);
	memset(h, 0, sizeof *h);
	h->has_interp = -1;
	ssize_t got = pread(fd, &eh, sizeof eh, 0);
	if (got < EI_NIDENT + 4 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
		return 0;
	const unsigned char *m = (const unsigned char *)&eh.e_machine;
	int ours = eh.e_ident[EI_DATA] == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
	                                                                              : ELFDATA2MSB);
	h->cls = eh.e_ident[EI_CLASS];
	h->machine = eh.e_ident[EI_DATA] == ELFDATA2MSB ? (unsigned)m[0] << 8 | m[1]
	                                                : (unsigned)m[1] << 8 | m[0];
	if (got != (ssize_t)sizeof eh || !ours || h->cls != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_phnum > ELFHEAD_MAX_PHDRS)
		return 1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
			return 1;
		if (ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz == 0 || ph.p_filesz > sizeof h->interp ||
		    pread(fd, h->interp, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			return 1;
		h->interp[ph.p_filesz - 1] = '\0';
		h->has_interp = 1;
		return 1;
	}
	h->has_interp = 0;
	return 1;
}

/* The last part of a path, after its last '/'. */
static inline const char *elf_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

#endif /* PROFIL_BASE_ELFHEAD_H */
