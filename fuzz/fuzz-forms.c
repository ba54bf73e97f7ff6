/*
 * fuzz-forms.c - argument validation of every profil() form, sprofil()
 * and pcsample() (issue 15).
 *
 * The input chooses a form, its array of entries and every number in it;
 * pointers are drawn from an arena whose pages are alternately mapped
 * read-write, mapped PROT_NONE and unmapped, plus wild values (NULL, odd,
 * kernel space), with offsets that make buffers straddle the guards.
 *
 * The rule checked (docs/contract.md, forms.h, forms_fail()):
 *   - success, or -1 with errno EINVAL, EFAULT, ENOMEM or EAGAIN;
 *   - EINVAL changes nothing: the configuration in force before (a
 *     classic profil() on a buffer of ours, started before each call)
 *     is still in force;
 *   - EFAULT turns profiling off, as 4.4BSD's profil() did;
 *   - the caller's argument arrays are never written;
 *   - nothing crashes, whatever the pointers.
 * Profiling is stopped after each input.
 */
#include <profil.h>
#include <profil_aix.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

/* glibc's sprofil() entry; its header's struct prof clashes with AIX's. */
struct sprof {
	void *pr_base;
	size_t pr_size;
	size_t pr_off;
	unsigned long pr_scale;
};
int sprofil(struct sprof *profp, int profcnt, struct timeval *tvp, unsigned int flags);

#define PAGE 4096
#define NPAGES 16
#define MAXN 8

static unsigned char *arena;
static unsigned short *sentinel;

static void setup(void)
{
	arena = mmap(NULL, NPAGES * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	             -1, 0);
	sentinel = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena == MAP_FAILED || sentinel == MAP_FAILED)
		abort();
	/* pages 3, 7 and 11 are guards; page 15 is a hole */
	for (int g = 3; g < NPAGES - 1; g += 4)
		mprotect(arena + g * PAGE, PAGE, PROT_NONE);
	munmap(arena + (NPAGES - 1) * PAGE, PAGE);
}

struct in {
	const uint8_t *p;
	size_t n;
};

static uint64_t take(struct in *in, size_t bytes)
{
	uint64_t w = 0;
	size_t k = in->n < bytes ? in->n : bytes;
	memcpy(&w, in->p, k);
	in->p += k, in->n -= k;
	return w;
}

/* A pointer: into the arena near a page edge, or a wild one. */
static void *ptr(struct in *in)
{
	uint64_t c = take(in, 2);
	switch (c & 7) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)(c >> 3); /* low, mostly unmapped */
	case 2:
		return (void *)(uintptr_t)(0xffff800000000000ull + (c >> 3)); /* kernel */
	default: {
		size_t page = (c >> 3) % NPAGES;
		long delta = (long)((c >> 7) & 0x1ff) - 256; /* either side of the edge */
		return arena + page * PAGE + (delta < 0 ? PAGE + delta : delta);
	}
	}
}

/* A size: small, near a page, or huge. */
static size_t size(struct in *in)
{
	uint64_t c = take(in, 4);
	switch (c & 3) {
	case 0:
		return (size_t)(c >> 2) & 0xff;
	case 1:
		return (size_t)(c >> 2) % (4 * PAGE);
	case 2:
		return SIZE_MAX - ((c >> 2) & 0xff);
	default:
		return (size_t)take(in, 8);
	}
}

static unsigned scale(struct in *in)
{
	uint64_t c = take(in, 4);
	static const unsigned common[] = {0, 1, 2, 3, 0x8000, 0x10000, 0x20000, ~0u};
	return c & 1 ? common[(c >> 1) & 7] : (unsigned)(c >> 1);
}

/* An argument array: in the arena (so its own memory can be a guard) or
 * on the heap; filled from the input. */
static void *heap; /* array()'s allocation, freed after the call */

static void *array(struct in *in, const void *entries, size_t bytes)
{
	heap = NULL;
	if (take(in, 1) & 1) {
		unsigned char *p = ptr(in);
		if ((uintptr_t)p >= (uintptr_t)arena && (uintptr_t)p < (uintptr_t)arena + NPAGES * PAGE) {
			/* copy what fits in writable memory before the next guard */
			size_t off = (size_t)(p - arena) % PAGE, page = (size_t)(p - arena) / PAGE;
			size_t room = page % 4 == 3 || page == NPAGES - 1 ? 0 : PAGE - off;
			memcpy(p, entries, bytes < room ? bytes : room);
		}
		return p;
	}
	heap = malloc(bytes ? bytes : 1);
	memcpy(heap, entries, bytes);
	return heap;
}

static int on(void)
{
	struct profil_stats st;
	if (profil_get_stats(&st) != 0)
		abort();
	return st.engine != PROFIL_ENGINE_OFF;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	if (!arena)
		setup();
	struct in in = {data, len};
	int form = (int)(take(&in, 1) % 5);
	size_t n = (size_t)(take(&in, 1) % (MAXN + 1));
	/* a configuration that an EINVAL must leave in force */
	if (profil(sentinel, PAGE, 0, 2) != 0 || !on())
		abort();
	union {
		struct profil_args t[MAXN];
		struct prof a[MAXN + 1];
		struct sprof s[MAXN];
		uintptr_t pcs[MAXN];
	} e;
	memset(&e, 0, sizeof e);
	void *arg = NULL;
	size_t bytes = 0;
	long rc;
	errno = 0;
	switch (form) {
	case 0: /* classic */
		rc = profil(ptr(&in), size(&in), size(&in), scale(&in));
		break;
	case 1: /* Tru64 profil_args[n] */
		for (size_t i = 0; i < n; i++)
			e.t[i] = (struct profil_args){ptr(&in), ptr(&in), ptr(&in),
			                              (void *)size(&in), scale(&in)};
		bytes = n * sizeof e.t[0];
		arg = array(&in, &e, bytes);
		rc = profil(arg, take(&in, 1) & 1 ? size(&in) : n, (size_t)-1, 0);
		break;
	case 2: /* AIX struct prof[], p_high 0 ends it (or not: the limit does) */
		for (size_t i = 0; i < n; i++)
			e.a[i] = (struct prof){ptr(&in), ptr(&in), ptr(&in), (int)size(&in), scale(&in)};
		bytes = (n + (take(&in, 1) & 1)) * sizeof e.a[0];
		arg = array(&in, &e, bytes);
		rc = profil(arg, (size_t)-1, 0, 0);
		break;
	case 3: { /* sprofil */
		for (size_t i = 0; i < n; i++)
			e.s[i] = (struct sprof){ptr(&in), size(&in), size(&in), scale(&in)};
		bytes = n * sizeof e.s[0];
		arg = array(&in, &e, bytes);
		struct timeval *tv = take(&in, 1) & 1 ? ptr(&in) : NULL;
		int cnt = take(&in, 1) & 1 ? (int)take(&in, 4) : (int)n;
		rc = sprofil(arg, cnt, tv, (unsigned)take(&in, 1) % 5);
		break;
	}
	default: /* pcsample */
		rc = pcsample(ptr(&in), (long)size(&in));
		break;
	}
	int err = errno;
	if (rc == -1) {
		if (err != EINVAL && err != EFAULT && err != ENOMEM && err != EAGAIN)
			abort();
		if (err == EINVAL && !on())
			abort(); /* EINVAL must change nothing */
		if (err == EFAULT && on())
			abort(); /* a bad buffer or array turns profiling off */
	}
	unsigned short *volatile stop = NULL;
	if (profil(stop, 0, 0, 0) != 0 || on())
		abort();
	/* the caller's array is untouched (checked for heap copies only:
	 * a counter buffer may overlap an array in the arena, and count) */
	if (heap && memcmp(heap, &e, bytes) != 0)
		abort();
	free(heap);
	heap = NULL;
	return 0;
}
