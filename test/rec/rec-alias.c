/*
 * rec-alias.c - runs code from a second mapping of its own executable, as
 * V8 runs its builtins from a copy of node's text mapped into its code
 * range ("short builtin calls"): the loader knows the executable once,
 * at its own address, and nothing tells it of the second.
 *
 *   rec-alias UNITS [LEAD]
 *                        maps its text again (mmap of /proc/self/exe at
 *                        the text's file offset) and runs alias_hot there
 *                        for UNITS of CPU time (rec.h); prints the two
 *                        addresses of alias_hot.  With LEAD, first burns
 *                        LEAD units in main's own code, where a sample
 *                        makes the agent's helper once 50 ms are used:
 *                        LEAD 12 and UNITS 12 end the process before that
 *                        helper's first sweep
 *
 * alias_hot is a plain loop: no call and no data outside the text, so
 * that its copy runs as the original does.
 */
#include "rec.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) static void alias_hot(unsigned long iterations)
{
	volatile unsigned long acc = 0x33;
	for (unsigned long i = 0; i < iterations; i++)
		acc += i ^ (acc >> 3);
}

struct text {
	uintptr_t start;
	size_t len;
	off_t offset;
};

/* The executable's text segment, page-aligned (the first object listed
 * is the executable). */
static int find_text(struct dl_phdr_info *info, size_t size, void *out)
{
	struct text *t = out;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t skew = ph->p_vaddr & (page - 1);
		t->start = info->dlpi_addr + ph->p_vaddr - skew;
		t->len = ph->p_memsz + skew;
		t->offset = (off_t)(ph->p_offset - skew);
		return 1;
	}
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long units = argc > 1 ? strtoul(argv[1], NULL, 10) : 40;
	unsigned long lead = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	REC_BURN(lead, 0x51);
	struct text t = {0, 0, 0};
	dl_iterate_phdr(find_text, &t);
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	void *copy = t.len && fd >= 0
	                     ? mmap(NULL, t.len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, t.offset)
	                     : MAP_FAILED;
	if (copy == MAP_FAILED) {
		perror("rec-alias: mapping the text again");
		return 1;
	}
	close(fd);
	void (*hot)(unsigned long) =
	        (void (*)(unsigned long))((char *)copy + ((uintptr_t)alias_hot - t.start));
	printf("alias_hot at %p and %p\n", (void *)alias_hot, (void *)hot);
	fflush(stdout);
	unsigned long long end = rec_thread_ns() + units * REC_UNIT_NS;
	while (rec_thread_ns() < end)
		hot(REC_CHECK);
	return 0;
}
