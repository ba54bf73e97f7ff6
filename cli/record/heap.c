/*
 * heap.c - the record process's heap on transparent huge pages.
 *
 * Why: after the command exits, the record process symbolizes, and
 * libdw, the profile model and the symbolizer allocate a few megabytes
 * of small blocks (libdw alone a CU record and an abbreviation table for
 * every unit it passes on the way to the one asked for: 2,063 of them in
 * libc6-dbg's libc).  Each first touch of a fresh 4 KiB page of heap is a
 * page fault, and on a virtual machine whose faults are dear (10-14 us
 * each here, docs/benchmarks.md) the 2,000 faults of a recording of a
 * one-second Python program were about a fifth of the record process's
 * CPU.  A 2 MiB page takes one fault for 512 of them.
 *
 * How: glibc's own switch for this (GLIBC_TUNABLES=glibc.malloc.hugetlb=1)
 * is read from the environment at start, which a command cannot set for
 * itself, so the record process does what it does for the first
 * RESERVE bytes: it grows the heap by that much once (an allocation
 * just below the largest mmap threshold glibc allows, which is set, so
 * that it comes from the heap; freed at once, and kept, as the trim
 * threshold is set above it), and asks for huge pages over the whole
 * 2 MiB pages inside it (madvise MADV_HUGEPAGE).  Nothing is touched
 * until used; the kernel then backs each 2 MiB page in one fault.
 * Where transparent huge pages are off ("never") or absent, madvise
 * changes nothing.  Growth beyond RESERVE is a new mapping of ordinary
 * pages, as before.  The heap below the first whole huge page is taken
 * by a block held to the end, so that the next allocations go to huge
 * pages rather than fill it first.  What it costs: the record process's
 * resident memory grows by whole 2 MiB pages (30 MiB at most more), and
 * up to 2 MiB of address space is held unused.
 *
 * After the command is started, not before: when it was started by
 * fork(), a huge page the child shared at its fork was split by the
 * parent's first write to it before the child's exec, and each of its 512
 * pages then copied at its first write (467 copy-on-write faults where the
 * change meant to save 300, when the heap was set up first).  spawn.c now
 * uses vfork(), which shares nothing to copy; the order is kept, as
 * nothing before the start allocates much.
 *
 * When the allocation is not from the heap that sbrk() moves (an ASan
 * or valgrind build, whose malloc is another one, or a heap glibc had to
 * place elsewhere), nothing is asked: the block must end at the program
 * break it moved.
 */
#include "record_int.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define HUGE_PAGE ((uintptr_t)2 << 20)
#define MMAP_MAX (32 << 20)  /* glibc's largest M_MMAP_THRESHOLD on 64-bit */
#define RESERVE (30u << 20)

/* The heap below the first huge page, never freed (why: below); held
 * here so that it is reachable to the end. */
static void *volatile head_filler;

void record_heap_on_huge_pages(void)
{
	if (mallopt(M_MMAP_THRESHOLD, MMAP_MAX) != 1 ||
	    mallopt(M_TRIM_THRESHOLD, 2 * MMAP_MAX) != 1)
		return;
	uintptr_t before = (uintptr_t)sbrk(0);
	char *p = malloc(RESERVE);
	uintptr_t after = (uintptr_t)sbrk(0), start = (uintptr_t)p;
	free(p);
	if (!p || after <= before || start > after || after - start < RESERVE ||
	    after - start > RESERVE + HUGE_PAGE)
		return; /* not the program break's heap, just grown by RESERVE */
	uintptr_t lo = (start + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	uintptr_t hi = after & ~(HUGE_PAGE - 1);
	if (hi <= lo || madvise((void *)lo, hi - lo, MADV_HUGEPAGE) != 0)
		return;
	/* The heap up to lo is ordinary pages, and the next allocations would
	 * fill it first, a fault a page (330 on a Python recording): a block
	 * held until the exit takes it, untouched but for its header. */
	if (lo - start > 64)
		head_filler = malloc(lo - start - 32);
}
