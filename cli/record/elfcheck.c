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
#include "../../src/base/elfhead.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#if defined(__x86_64__)
#define OUR_MACHINE_NAME "x86-64"
#elif defined(__aarch64__)
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
static const char *foreign(const struct elf_head *h, char *buf, size_t cap)
{
	char mbuf[32];
	if (ELFHEAD_OUR_MACHINE == EM_NONE)
		return NULL;
	if (h->cls == ELFCLASS32)
		snprintf(buf, cap, "is a 32-bit %s program: the profiling agent is built for 64-bit "
		         OUR_MACHINE_NAME " programs, so it cannot be profiled",
		         machine_name(h->machine, mbuf, sizeof mbuf));
	else if (h->machine != ELFHEAD_OUR_MACHINE)
		snprintf(buf, cap, "is a program for %s: the profiling agent is built for 64-bit "
		         OUR_MACHINE_NAME " programs, so it cannot be profiled",
		         machine_name(h->machine, mbuf, sizeof mbuf));
	else
		return NULL;
	return buf;
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

/* Loaded by another C library's loader: glibc's is ld-linux-<arch>.so.N
 * wherever it lives (/lib64, /lib/x86_64-linux-gnu, a Nix store), the
 * name we were linked with; musl's is ld-musl-<arch>.so.1. */
static const char *other_loader(const char *interp, char *buf, size_t cap)
{
	const char *ours = our_interp();
	if (!ours || strcmp(elf_base_name(interp), elf_base_name(ours)) == 0)
		return NULL;
	snprintf(buf, cap, "runs on the dynamic loader %s, not the GNU C library's %s that the "
	         "profiling agent is built for, so it cannot be profiled", interp,
	         elf_base_name(ours));
	return buf;
}

const char *elf_refusal(const char *file, const struct stat *st, char *buf, size_t cap)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct elf_head h;
	const char *why = NULL;
	if (!elf_head_read(fd, &h))
		why = NULL; /* not ELF, or too short for one: exec will say */
	else if ((why = foreign(&h, buf, cap)) != NULL)
		;
	else if (h.has_interp == 0 && !is_our_loader(st))
		why = "is statically linked: it cannot load the profiling agent (LD_PRELOAD), "
		      "so it cannot be profiled";
	else if (h.has_interp == 1)
		why = other_loader(h.interp, buf, cap);
	close(fd);
	return why;
}
