/*
 * selfprof.c - libselfprof.so: makes any program profile itself with the
 * classic interface, the way issue 9 found CPython killed: preloaded
 * after libprofil.so (LD_PRELOAD="libprofil.so libselfprof.so"), its
 * constructor calls profil() over the executable's text.  Every process
 * the program starts (fork, vfork, exec) does the same, since the
 * preload is inherited.  tools/real-suites.sh runs real programs' own
 * test suites this way and requires the results of an unprofiled run.
 *
 * With SELFPROF_LOG set, each process appends "pid ticks counted" there
 * (samples taken anywhere, and those in the executable's bins) when
 * it exits normally (one write(2) with O_APPEND: lines never interleave),
 * so the run can show that profiling was on, not silently refused.
 */
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "profil.h"

/* 2 bytes of counter per 4 bytes of text (scale 0x8000), at most 64 MiB. */
#define SCALE 0x8000u
#define MAX_BUF ((size_t)64 << 20)

static unsigned short *bins;
static size_t nbins;

/* The first object dl_iterate_phdr lists is the executable. */
static int exec_text(struct dl_phdr_info *info, size_t size, void *out)
{
	(void)size;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		lo = a < lo ? a : lo;
		hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
	}
	((uintptr_t *)out)[0] = lo;
	((uintptr_t *)out)[1] = hi;
	return 1;
}

__attribute__((constructor)) static void selfprof_start(void)
{
	uintptr_t text[2] = {UINTPTR_MAX, 0};
	dl_iterate_phdr(exec_text, text);
	if (text[1] <= text[0])
		return;
	size_t size = (text[1] - text[0]) / 2;
	size = size > MAX_BUF ? MAX_BUF : size < 2 ? 2 : size;
	void *b = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		return;
	if (profil(b, size, text[0], SCALE) != 0) {
		munmap(b, size);
		return;
	}
	bins = b;
	nbins = size / sizeof *bins;
}

__attribute__((destructor)) static void selfprof_report(void)
{
	const char *log = getenv("SELFPROF_LOG");
	if (!bins || !log)
		return;
	unsigned long long n = 0;
	for (size_t i = 0; i < nbins; i++)
		n += bins[i];
	struct profil_stats st = {0};
	profil_get_stats(&st);
	char line[96];
	int len = snprintf(line, sizeof line, "%ld %llu %llu\n", (long)getpid(), st.ticks, n);
	int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (write(fd, line, (size_t)len) != len)
			(void)0; /* a lost line shows as a process without samples */
		close(fd);
	}
}
