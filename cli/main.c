/*
 * main.c - the profil command: dispatches to its subcommands.
 *
 *   profil record [options] CMD [ARGS...]   cli/record/
 *   profil report [options] [FILE]          cli/report/
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "record/record.h"
#include "report/report.h"

#ifndef PROFIL_VERSION
#define PROFIL_VERSION "unknown"
#endif

/* Until `profil record` is linked in, a weak stand-in says so. */
__attribute__((weak)) int cmd_record(int argc, char **argv)
{
	(void)argc, (void)argv;
	fputs("profil: record is not available in this build\n", stderr);
	return 1;
}

/*
 * The command's heap in 2 MiB pages where the kernel allows it
 * (transparent huge pages in "madvise" mode, Debian's default).  What a
 * recording allocates (the rings' samples, the model, the symbol tables,
 * the writer's buffers) is fresh memory, and each 4 KiB page of it was a
 * page fault: 2,000 of a 27-compile recording's 2,340 faults, a third of
 * the record process's CPU on a VM where one costs 11-13 us; there a
 * 2 MiB page is faulted in (zeroed whole) in 130-210 us, its 512 small
 * pages in 5.6 ms.  So the heap grows by HEAP_STEP at a time (address
 * space: pages are made as they are touched), blocks of any size come
 * from it rather than from mmap(), none is given back before the exit,
 * and that step, but for its first 2 MiB, is marked MADV_HUGEPAGE.  A
 * heap grown past it takes small pages again, as before.  Nothing
 * changes where THP is off, where malloc is not glibc's (the
 * sanitizers', valgrind's), or under a limit of address space or data
 * (ulimit -v, -d), which 64 MiB steps would reach sooner.  The cost: up
 * to 2 MiB more resident memory.
 */
#define HEAP_STEP (64ul << 20)
#define HUGE_PAGE (2ul << 20)
#define PAGE 4096ul

static int unlimited(int resource)
{
	struct rlimit rl;
	return getrlimit(resource, &rl) == 0 && rl.rlim_cur == RLIM_INFINITY;
}

static void heap_in_huge_pages(void)
{
	if (!unlimited(RLIMIT_AS) || !unlimited(RLIMIT_DATA))
		return;
	uintptr_t from = (uintptr_t)sbrk(0);
	uintptr_t start = (from + PAGE + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (from == (uintptr_t)-1 || !mallopt(M_TOP_PAD, (int)HEAP_STEP) ||
	    !mallopt(M_MMAP_THRESHOLD, 32 << 20) || !mallopt(M_TRIM_THRESHOLD, (int)HEAP_STEP))
		return;
	/* The heap's next block one page short of a 2 MiB boundary: the
	 * break moved past the rest (address space, never touched), which
	 * glibc's malloc takes for another's sbrk() and steps over.  malloc
	 * writes its first header as it grows the heap, before the madvise()
	 * below: in a 2 MiB page of its own, that write would leave the
	 * page's range in small pages for good. */
	if (start - PAGE > from && sbrk((intptr_t)(start - PAGE - from)) == (void *)-1)
		return;
	void *volatile first = malloc(1); /* the first step (volatile: not elided) */
	free(first);
	/* The first 2 MiB stay in small pages: a short command's recording
	 * touches some 60 pages of heap, fewer faults than one large page
	 * costs where the VM backs the guest's memory at its first touch
	 * (2-3 ms: /bin/true's recording took 9 ms instead of 6). */
	uintptr_t to = (uintptr_t)sbrk(0), huge = start + HUGE_PAGE;
	if (to != (uintptr_t)-1 && to > huge + HUGE_PAGE)
		madvise((void *)huge, (to - huge) & ~(HUGE_PAGE - 1), MADV_HUGEPAGE);
}

static void usage(FILE *f)
{
	fputs("usage: profil record [-F HZ] [-o FILE] [--no-children] [--] CMD [ARGS...]\n"
	      "       profil report [options] [FILE]\n"
	      "       profil --help | --version\n"
	      "Profiles an unmodified program (record) and prints reports from the\n"
	      "profile it wrote (report).  `profil report --help` lists report's\n"
	      "options; see profil(1).\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	heap_in_huge_pages();
	if (strcmp(cmd, "record") == 0)
		return cmd_record(argc - 1, argv + 1);
	if (strcmp(cmd, "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
		printf("profil %s\n", PROFIL_VERSION);
		return 0;
	}
	fprintf(stderr, "profil: unknown command '%s' (commands: record, report; see profil --help)\n",
	        cmd);
	return 2;
}
