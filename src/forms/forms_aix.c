/*
 * forms_aix.c - AIX's multi-range profil() (docs/contract.md, "AIX struct
 * prof"; <profil_aix.h>):
 *
 *   profil((unsigned short *)profs, (size_t)-1, 0, 0)
 *
 * profs[] are struct prof { p_low, p_high, p_buff, p_bufsize, p_scale },
 * ended by an entry whose p_high is 0.  16-bit counters; a sample at pc in
 * [p_low, p_high) counts in p_buff[floor(floor((pc - p_low) / 2) *
 * p_scale / 65536)].  Entries are ordered by ascending p_high and must not
 * overlap.  p_scale (unsigned)-1 means "compute it"; 0 or 1 leaves the
 * entry out, as those scales stop the classic call.
 *
 * The array has no count, so the terminator is searched for, and only
 * among the first PTABLE_MAX_RANGES + 1 entries: an array without one is
 * EINVAL rather than a walk through the whole address space.
 */
#include "forms/forms.h"
#include "profil_aix.h"

#include <errno.h>
#include <stdlib.h>

_Static_assert(PROFIL_AIX_MAX_RANGES == PTABLE_MAX_RANGES, "documented limit");

#define AIX_SHIFT 1
#define AIX_WIDTH 2

/* Grows the copy a[0..*cap) so it can hold at least one more entry. */
static struct prof *grow(struct prof *a, size_t *cap)
{
	size_t limit = (size_t)PTABLE_MAX_RANGES + 1;
	size_t ncap = *cap ? 2 * *cap : 256;
	if (ncap > limit)
		ncap = limit;
	struct prof *b = realloc(a, ncap * sizeof *b);
	if (!b) {
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	*cap = ncap;
	return b;
}

/*
 * Copies the caller's entries up to the terminator into a malloc'd array
 * and stores their count (terminator excluded) in *n.  NULL with errno:
 * EFAULT when the array becomes unreadable before a terminator, EINVAL
 * when none is among the first PTABLE_MAX_RANGES + 1 entries.
 */
static struct prof *copy_profs(const void *src, size_t *n)
{
	struct prof *a = NULL;
	size_t have = 0, cap = 0;
	for (;;) {
		if (have == (size_t)PTABLE_MAX_RANGES + 1) {
			free(a);
			errno = EINVAL;
			return NULL;
		}
		if (!(a = grow(a, &cap)))
			return NULL;
		size_t want = cap - have;
		const void *from = (const void *)((uintptr_t)src + have * sizeof *a);
		size_t got = copyin_prefix(a + have, from, want * sizeof *a) / sizeof *a;
		for (size_t i = have; i < have + got; i++) {
			if (a[i].p_high == NULL) {
				*n = i;
				return a;
			}
		}
		have += got;
		if (got < want) {
			free(a);
			errno = EFAULT;
			return NULL;
		}
	}
}

/* Entry i alone, and against its predecessor. */
static int check_entry(const struct prof *p, size_t i)
{
	uintptr_t lo = (uintptr_t)p[i].p_low, hi = (uintptr_t)p[i].p_high;
	if (lo >= hi || p[i].p_bufsize <= 0)
		return -1;
	if (i > 0 && (hi <= (uintptr_t)p[i - 1].p_high || lo < (uintptr_t)p[i - 1].p_high))
		return -1;
	return 0;
}

/*
 * The scale AIX computes for p_scale == (unsigned)-1: the largest that
 * keeps every pc of [p_low, p_high) below the last counter.  With b the
 * buffer's whole counters in bytes and L the range's length, index <=
 * floor((L-1)/2) * scale / 65536 < b/2 when scale = floor(b * 65536 / L);
 * 0x10000 (a counter per 2 bytes) when the buffer is large enough.
 * 0 when the range is too long for any scale above 1.
 */
static uint32_t auto_scale(const struct prof *p)
{
	uint64_t len = (uintptr_t)p->p_high - (uintptr_t)p->p_low;
	uint64_t b = (uint64_t)p->p_bufsize / AIX_WIDTH * AIX_WIDTH;
	if (b >= len)
		return 0x10000;
	uint64_t s = b * 65536 / len; /* b < 2^31: no overflow */
	return s < 2 ? 0 : (uint32_t)s;
}

static int fill(struct ptable *t, const void *copy, size_t n, const void *unused)
{
	const struct prof *p = copy;
	(void)unused;
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		if (check_entry(p, i) != 0)
			goto invalid;
		uint32_t scale = p[i].p_scale == PROFIL_AIX_SCALE_AUTO ? auto_scale(&p[i])
		                                                       : p[i].p_scale;
		if (p[i].p_scale == PROFIL_AIX_SCALE_AUTO && scale == 0)
			goto invalid;
		if (scale < 2)
			continue;
		struct prange *r = &t->ranges[used++];
		if (forms_set_buffer(r, p[i].p_buff, (size_t)p[i].p_bufsize, AIX_WIDTH) != 0)
			goto invalid;
		r->kind = PRANGE_HIST;
		r->lowpc = r->offset = (uintptr_t)p[i].p_low;
		r->highpc = (uintptr_t)p[i].p_high;
		r->scale = scale;
		r->shift = AIX_SHIFT;
	}
	t->nranges = used;
	return 0;
invalid:
	errno = EINVAL;
	return -1;
}

int forms_aix(const void *profs)
{
	size_t n;
	struct prof *p = copy_profs(profs, &n);
	if (!p)
		return forms_fail(errno);
	return forms_build(p, n, n, PFORM_AIX, fill, NULL);
}
