/*
 * alloc.c - the library's own memory: it never calls the program's
 * allocator.
 *
 * Why not malloc.  The profil agent runs a helper thread in every process
 * it profiles (engine/sweeper.c), a thread the program did not make.
 *   - A single-threaded program may bring an allocator of its own with no
 *     locks (bash's own malloc, perl built with usemymalloc, a game's or
 *     an interpreter's arena): it need not be safe against a second
 *     thread, and a helper that called it while the program's thread was
 *     inside it would corrupt the program's heap.
 *   - glibc gives a thread's first malloc an arena of its own, 64 MiB of
 *     address space reserved: a program under `ulimit -v` lost that much
 *     of its limit to a thread that needed a few kilobytes.
 * So base/, unwind/, engine/, process/ and the agent allocate here, and
 * `make check-alloc` (tools/check-alloc.sh) fails if one of their objects
 * references malloc or a libc call that allocates with it.  forms/ and
 * gmon/ run only inside the program's own calls (profil(), monitor(), its
 * exit), and use its allocator as the interfaces they follow did.
 *
 * Blocks.  Each block starts with a 16-byte header (so every block is
 * aligned to 16 bytes, as malloc's are): the block's class, or for a
 * large block the length of the mapping that holds it.  Classes are the
 * powers of two from 32 to 4096 bytes, header included, carved from
 * 64 KiB chunks of anonymous memory and, once freed, kept on their
 * class's free list for the next block of that class: the small blocks'
 * memory is bounded by their peak use, and never returned.  A block that
 * does not fit 4096 bytes is a mapping of its own, unmapped when freed
 * and moved by mremap() when it grows.  Chunk pages are touched only when
 * a block is carved from them.
 *
 * Locking.  One mutex, a leaf: nothing is called while it is held but
 * mmap, mremap, munmap and memcpy.  Not async-signal-safe: nothing calls
 * it in signal context (lazy_helper.c's proof keeps this library's frames
 * off any stack it calls pthread_create() from).  Held across fork()
 * (alloc_atfork_*, from process/fork.c), so that a child never inherits
 * a chunk half carved by the helper; when the forking thread holds it
 * itself (a fork from a signal handler that interrupted it here), it is
 * left as it is: parent and child both return into the interrupted call,
 * which completes and unlocks.
 *
 * Under AddressSanitizer (the library's `make sanitize` build) every call
 * goes to the C library's allocator instead, so that ASan checks our
 * blocks' bounds and leaks; the shipped build never does.
 */
#include "base/base.h"

#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define ALLOC_FROM_LIBC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOC_FROM_LIBC 1
#endif
#endif

#ifdef ALLOC_FROM_LIBC
/* The same contract as below: ENOMEM, not ASan's report, for a size no
 * allocator could give */
static int too_big(size_t n, size_t size)
{
	if ((size && n > SIZE_MAX / size) || n * size > PTRDIFF_MAX) {
		errno = ENOMEM;
		return 1;
	}
	return 0;
}
void *mem_alloc(size_t n) { return too_big(n, 1) ? NULL : malloc(n ? n : 1); }
void *mem_calloc(size_t n, size_t size) { return too_big(n, size) ? NULL : calloc(n ? n : 1, size ? size : 1); }
void *mem_realloc(void *p, size_t n) { return too_big(n, 1) ? NULL : realloc(p, n ? n : 1); }
void mem_free(void *p) { free(p); }
void alloc_atfork_prepare(void) {}
void alloc_atfork_parent(void) {}
void alloc_atfork_child(void) {}
#else

#define HEADER 16u
#define MIN_SHIFT 5u  /* smallest class: 32 bytes */
#define NCLASSES 8u   /* 32, 64, ..., 4096 */
#define CHUNK ((size_t)64 << 10)

/* What precedes every block.  kind < NCLASSES: a small block's class;
 * otherwise the length in bytes of the large block's own mapping. */
struct header {
	size_t kind;
	size_t unused; /* pads the header to 16 bytes */
};

struct free_block {
	struct free_block *next;
};

/* Under alloc_mu, but alloc_owner: atomic, the holder's id or 0 (set by
 * the holder after locking, cleared before unlocking: never another's). */
static pthread_mutex_t alloc_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(pthread_t) alloc_owner;
static int fork_skipped; /* the fork's prepare left alloc_mu to its holder */
static struct free_block *free_lists[NCLASSES];
static unsigned char *chunk_next, *chunk_end;

static void alloc_lock(void)
{
	pthread_mutex_lock(&alloc_mu);
	atomic_store(&alloc_owner, pthread_self());
}

static void alloc_unlock(void)
{
	atomic_store(&alloc_owner, (pthread_t)0);
	pthread_mutex_unlock(&alloc_mu);
}

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static size_t page_round(size_t n)
{
	size_t page = 4096;
	return (n + page - 1) & ~(page - 1);
}

/* The class whose blocks hold n bytes after the header; NCLASSES if none. */
static unsigned class_of(size_t n)
{
	unsigned c = 0;
	while (c < NCLASSES && ((size_t)1 << (MIN_SHIFT + c)) - HEADER < n)
		c++;
	return c;
}

/* A block of class c, from its free list or the current chunk; alloc_mu held. */
static struct header *take_small(unsigned c)
{
	size_t size = (size_t)1 << (MIN_SHIFT + c);
	if (free_lists[c]) {
		struct free_block *b = free_lists[c];
		free_lists[c] = b->next;
		return (struct header *)b;
	}
	if ((size_t)(chunk_end - chunk_next) < size) {
		/* the rest of the old chunk (under 4 KiB) is left unused */
		unsigned char *fresh = map_anon(CHUNK);
		if (!fresh)
			return NULL;
		chunk_next = fresh;
		chunk_end = fresh + CHUNK;
	}
	struct header *h = (struct header *)chunk_next;
	chunk_next += size;
	return h;
}

void *mem_alloc(size_t n)
{
	unsigned c = class_of(n);
	struct header *h;
	if (c < NCLASSES) {
		alloc_lock();
		h = take_small(c);
		alloc_unlock();
		if (!h)
			goto nomem;
		h->kind = c;
	} else {
		if (n > SIZE_MAX - HEADER - 4096)
			goto nomem;
		size_t len = page_round(n + HEADER);
		if (!(h = map_anon(len)))
			goto nomem;
		h->kind = len;
	}
	return h + 1;
nomem:
	errno = ENOMEM;
	return NULL;
}

void *mem_calloc(size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return NULL;
	}
	void *p = mem_alloc(n * size);
	if (p && ((struct header *)p - 1)->kind < NCLASSES)
		memset(p, 0, n * size); /* a reused block; new mappings are zero */
	return p;
}

/* The bytes a block can hold after its header. */
static size_t capacity(const struct header *h)
{
	return h->kind < NCLASSES ? ((size_t)1 << (MIN_SHIFT + h->kind)) - HEADER
	                          : h->kind - HEADER;
}

void mem_free(void *p)
{
	if (!p)
		return;
	struct header *h = (struct header *)p - 1;
	if (h->kind >= NCLASSES) {
		munmap(h, h->kind);
		return;
	}
	size_t c = h->kind;
	struct free_block *b = (struct free_block *)h; /* over the header */
	alloc_lock();
	b->next = free_lists[c];
	free_lists[c] = b;
	alloc_unlock();
}

void *mem_realloc(void *p, size_t n)
{
	if (!p)
		return mem_alloc(n);
	struct header *h = (struct header *)p - 1;
	size_t cap = capacity(h);
	if (h->kind >= NCLASSES) {
		if (n <= cap)
			return p;
		if (n > SIZE_MAX - HEADER - 4096) {
			errno = ENOMEM;
			return NULL;
		}
		size_t len = page_round(n + HEADER);
		void *moved = mremap(h, h->kind, len, MREMAP_MAYMOVE);
		if (moved == MAP_FAILED) {
			errno = ENOMEM;
			return NULL;
		}
		h = moved;
		h->kind = len;
		return h + 1;
	}
	size_t smaller = h->kind ? ((size_t)1 << (MIN_SHIFT + h->kind - 1)) - HEADER : 0;
	if (n <= cap && n > smaller)
		return p; /* fits, and no smaller class would */
	void *q = mem_alloc(n);
	if (!q)
		return NULL;
	memcpy(q, p, n < cap ? n : cap);
	mem_free(p);
	return q;
}

void alloc_atfork_prepare(void)
{
	fork_skipped = pthread_equal(atomic_load(&alloc_owner), pthread_self());
	if (!fork_skipped)
		alloc_lock();
}

void alloc_atfork_parent(void)
{
	if (!fork_skipped)
		alloc_unlock();
}

void alloc_atfork_child(void)
{
	if (!fork_skipped)
		alloc_unlock();
}
#endif /* ALLOC_FROM_LIBC */

char *mem_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *copy = mem_alloc(n);
	return copy ? memcpy(copy, s, n) : NULL;
}
