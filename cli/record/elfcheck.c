/*
 * elfcheck.c - whether the command's file can load the agent at all.
 *
 * The agent is a shared object built for one machine, one ELF class and
 * one C library (glibc), and the dynamic loader is what loads it: a
 * program without a loader (statically linked), one of another class or
 * machine (a 32-bit i386 program: its loader prints "wrong ELF class" on
 * the program's stderr and runs it unprofiled), or one linked against
 * another C library (musl: its loader cannot relocate a glibc object and
 * stops the program with status 127, so it did not even run) is refused
 * before it runs, with one line saying why.  Only the ELF and program
 * headers are read; a file that is not ELF (a script) passes, its
 * interpreter being the program.
 */
#include "record_int.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#if defined(__x86_64__)
#define OUR_MACHINE EM_X86_64
#define OUR_MACHINE_NAME "x86-64"
#elif defined(__aarch64__)
#define OUR_MACHINE EM_AARCH64
#define OUR_MACHINE_NAME "AArch64"
#else
#define OUR_MACHINE_NAME "this machine's"
#endif

static const char *machine_name(unsigned m, char *buf, size_t cap)
{
	switch (m) {
	case EM_386: return "i386";
	case EM_X86_64: return "x86-64";
	case EM_ARM: return "ARM";
	case EM_AARCH64: return "AArch64";
	case EM_RISCV: return "RISC-V";
	case EM_PPC64: return "PowerPC 64";
	case EM_S390: return "s390";
	}
	snprintf(buf, cap, "ELF machine %u", m);
	return buf;
}

/* Another ELF class or machine than ours (an AArch64 program run by
 * qemu's binfmt handler too): why, into buf, or NULL. */
static const char *foreign(const unsigned char *h, char *buf, size_t cap)
{
#ifdef OUR_MACHINE
	unsigned machine = h[EI_NIDENT + 2] | (unsigned)h[EI_NIDENT + 3] << 8; /* e_machine */
	char mbuf[32];
	if (h[EI_CLASS] == ELFCLASS32)
		snprintf(buf, cap, "is a 32-bit %s program: the profiling agent is built for 64-bit "
		         OUR_MACHINE_NAME " programs, so it cannot be profiled",
		         machine_name(machine, mbuf, sizeof mbuf));
	else if (machine != OUR_MACHINE)
		snprintf(buf, cap, "is a program for %s: the profiling agent is built for 64-bit "
		         OUR_MACHINE_NAME " programs, so it cannot be profiled",
		         machine_name(machine, mbuf, sizeof mbuf));
	else
		return NULL;
	return buf;
#else
	(void)h, (void)buf, (void)cap;
	return NULL;
#endif
}

/* The PT_INTERP of a 64-bit ELF file of ours into buf: 1; 0 when it has
 * none (static); -1 when it is not such a file or cannot be read. */
static int read_interp(int fd, const Elf64_Ehdr *eh, char *buf, size_t cap)
{
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum >= 4096)
		return -1;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;
		off_t at = (off_t)(eh->e_phoff + i * sizeof ph);
		if (pread(fd, &ph, sizeof ph, at) != (ssize_t)sizeof ph)
			return -1;
		if (ph.p_type != PT_INTERP)
			continue;
		size_t n = ph.p_filesz < cap ? (size_t)ph.p_filesz : cap - 1;
		if (n == 0 || pread(fd, buf, n, (off_t)ph.p_offset) != (ssize_t)n)
			return -1;
		buf[n] = '\0';
		return 1;
	}
	return 0;
}

/* Our own PT_INTERP (the first object dl_iterate_phdr lists is us). */
static int own_interp(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_INTERP)
			*(const char **)arg = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	return 1;
}

static const char *our_interp(void)
{
	static const char *interp; /* in our image: never freed */
	if (!interp)
		dl_iterate_phdr(own_interp, &interp);
	return interp;
}

/* Whether file is the dynamic loader we run on, which has no interpreter
 * either but loads the program named after it, and the agent with it
 * (`profil record /lib64/ld-linux-x86-64.so.2 PROG`). */
static int is_our_loader(const struct stat *file)
{
	const char *interp = our_interp();
	struct stat st;
	return interp && stat(interp, &st) == 0 && st.st_dev == file->st_dev &&
	       st.st_ino == file->st_ino;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

/* Loaded by another C library's loader: glibc's is ld-linux-<arch>.so.N
 * wherever it lives (/lib64, /lib/x86_64-linux-gnu, a Nix store), the
 * name we were linked with; musl's is ld-musl-<arch>.so.1. */
static const char *other_loader(const char *interp, char *buf, size_t cap)
{
	const char *ours = our_interp();
	if (!ours || strcmp(base_name(interp), base_name(ours)) == 0)
		return NULL;
	snprintf(buf, cap, "runs on the dynamic loader %s, not the GNU C library's %s that the "
	         "profiling agent is built for, so it cannot be profiled", interp,
	         base_name(ours));
	return buf;
}

const char *elf_refusal(const char *file, const struct stat *st, char *buf, size_t cap)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	union {
		unsigned char ident[EI_NIDENT + 4];
		Elf64_Ehdr eh;
	} h;
	const char *why = NULL;
	char interp[PATH_MAX];
	if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
	    memcmp(h.ident, ELFMAG, SELFMAG) != 0 || h.ident[EI_DATA] != ELFDATA2LSB)
		why = NULL; /* not ELF, or too short for one: exec will say */
	else if ((why = foreign(h.ident, buf, cap)) != NULL)
		;
	else {
		int got = read_interp(fd, &h.eh, interp, sizeof interp);
		if (got == 0 && !is_our_loader(st))
			why = "is statically linked: it cannot load the profiling agent (LD_PRELOAD), "
			      "so it cannot be profiled";
		else if (got == 1)
			why = other_loader(interp, buf, cap);
	}
	close(fd);
	return why;
}
