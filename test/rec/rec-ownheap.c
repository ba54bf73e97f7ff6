/*
 * rec-ownheap - a single-threaded program with an allocator of its own,
 * as bash's, perl's "usemymalloc" or a game's are: no locks, because the
 * program has one thread.  Under `profil record` the agent runs a helper
 * thread in it; the helper must never call this allocator, and nothing of
 * the agent may call it from a signal handler that interrupted it.
 *
 *   rec-ownheap own UNITS      burns UNITS in own_hot, with a dlopen and
 *                              dlclose of librecplug.so and a forked child
 *                              between (the helper's sweeps, its module
 *                              log and its unwind tables all run meanwhile),
 *                              then says how many calls came from a thread
 *                              other than the process's main one
 *                              ("foreign") or while a call was in progress
 *                              ("reentered"); exit status 1 if any did
 *   rec-ownheap aslimit MIB    the C library's allocator behind the same
 *                              interposers: burns 60 units (the helper's
 *                              first sweeps), then mallocs MIB MiB and says
 *                              whether it got them; run under `ulimit -v`
 */
#include "rec.h"

#include <dlfcn.h>
#include <malloc.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static int use_libc;                 /* aslimit: forward to glibc */
static char heap[16 << 20] __attribute__((aligned(64)));
static size_t used;
static int busy;
static volatile int foreign, reentered;

/* Every entry checks who calls: the process's main thread only, and not
 * while another call is in progress (a signal handler's). */
static void enter(void)
{
	if (syscall(SYS_gettid) != getpid())
		__atomic_add_fetch(&foreign, 1, __ATOMIC_RELAXED);
	if (busy)
		reentered++;
	busy = 1;
}

static void *carve(size_t n, size_t align)
{
	size_t at = (used + 16 + align - 1) & ~(align - 1);
	if (at + n > sizeof heap) {
		errno = ENOMEM;
		return NULL;
	}
	((size_t *)(heap + at))[-1] = n;
	used = at + n;
	return heap + at;
}

static int ours(const void *p)
{
	return (const char *)p >= heap && (const char *)p < heap + sizeof heap;
}

void *malloc(size_t n)
{
	if (use_libc)
		return __libc_malloc(n);
	enter();
	void *p = carve(n, 16);
	busy = 0;
	return p;
}

void free(void *p)
{
	if (!p)
		return;
	if (!ours(p)) {
		if (use_libc)
			__libc_free(p);
		return;
	}
	if (!use_libc) {
		enter(); /* nothing is reused: the heap only grows */
		busy = 0;
	}
}

void *calloc(size_t a, size_t b)
{
	if (use_libc)
		return __libc_calloc(a, b);
	if (b && a > (size_t)-1 / b) {
		errno = ENOMEM;
		return NULL;
	}
	enter();
	void *p = carve(a * b, 16); /* zero: the heap is never reused */
	busy = 0;
	return p;
}

void *realloc(void *p, size_t n)
{
	if (p && !ours(p))
		return __libc_realloc(p, n); /* aslimit: the C library's */
	if (use_libc && !p)
		return __libc_malloc(n);
	if (!use_libc)
		enter();
	void *q = use_libc ? __libc_malloc(n) : carve(n, 16);
	if (q && p) {
		size_t old = ((size_t *)p)[-1];
		memcpy(q, p, old < n ? old : n);
	}
	if (!use_libc)
		busy = 0;
	return q;
}

void *memalign(size_t align, size_t n)
{
	if (use_libc)
		return __libc_memalign(align, n);
	enter();
	void *p = carve(n, align < 16 ? 16 : align);
	busy = 0;
	return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = memalign(align, n);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

size_t malloc_usable_size(void *p)
{
	return p && ours(p) ? ((size_t *)p)[-1] : 0;
}

static void own_hot(unsigned long units)
{
	REC_BURN(units, 41);
}

static void plug(const char *self)
{
	void *h = rec_open_plug(self);
	if (!h)
		exit(2);
	void (*hot)(unsigned long) = (void (*)(unsigned long))dlsym(h, "plug_hot");
	hot(2);
	dlclose(h);
}

static int own(const char *self, unsigned long units)
{
	own_hot(units / 2);
	plug(self);
	pid_t child = fork();
	if (child == 0) {
		own_hot(20);
		printf("child: foreign %d, reentered %d\n", foreign, reentered);
		fflush(stdout);
		_exit(foreign || reentered);
	}
	int status = 1;
	waitpid(child, &status, 0);
	own_hot(units - units / 2);
	printf("parent: foreign %d, reentered %d\n", foreign, reentered);
	return foreign || reentered || status != 0;
}

static int aslimit(unsigned long mib)
{
	own_hot(60);
	char *big = malloc(mib << 20);
	printf("%lu MiB: %s\n", mib, big ? "allocated" : strerror(errno));
	if (big)
		big[0] = 1;
	free(big);
	return big == NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "own") == 0)
		return own(argv[0], strtoul(argv[2], NULL, 10));
	if (argc == 3 && strcmp(argv[1], "aslimit") == 0) {
		use_libc = 1;
		return aslimit(strtoul(argv[2], NULL, 10));
	}
	fprintf(stderr, "usage: rec-ownheap own UNITS | aslimit MIB\n");
	return 2;
}
