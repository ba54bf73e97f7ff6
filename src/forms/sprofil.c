/*
 * sprofil.c - glibc's sprofil() (docs/contract.md, "sprofil"), on the
 * shared range table:
 *
 *   int sprofil(struct prof *profp, int profcnt, struct timeval *tvp,
 *               unsigned int flags);
 *
 * The ABI is glibc's <sys/profil.h>: struct prof { pr_base, pr_size,
 * pr_off, pr_scale }, flags PROF_USHORT (16-bit counters, 2 bytes of text
 * per counter at scale 0x10000), PROF_UINT (32-bit counters, 4 bytes per
 * counter, as glibc divides by sizeof(int)), PROF_FAST (accepted, no
 * effect, as in glibc).  A region covers pr_off up to the end of its
 * counters; regions may come in any order.  The entry with pr_off == 0 and
 * pr_scale == 2 is the overflow bin: its first counter receives every
 * sample outside all regions.  Entries with pr_scale 0 or 1 are ignored,
 * as glibc ignores them.  *tvp receives the sampling period.
 *
 * Where we differ from glibc 2.36 on purpose (sprofil(3), BUGS):
 *   - every call replaces the configuration; glibc's second call only
 *     stops, and a second stop frees its region table twice;
 *   - the region lookup is a plain binary search over an immutable
 *     table; glibc's "last region" cache credits the first sample after
 *     a change of region with the overflow region's offset and scale, and
 *     its search underflows for a pc below every region;
 *   - a second overflow entry, a pr_scale above UINT_MAX (glibc
 *     truncates it) and unknown flags are EINVAL.
 */
#include "forms/forms.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/profil.h>
#include <sys/time.h>

PROFIL_API int sprofil(struct prof *profp, int profcnt, struct timeval *tvp,
                       unsigned int flags);

/* Counter width and bin shift for the flags. */
struct layout {
	unsigned width, shift;
};

static int is_overflow_entry(const struct prof *p)
{
	return p->pr_off == 0 && p->pr_scale == 2;
}

static int set_overflow(struct ptable *t, const struct prof *p, struct layout l)
{
	if (t->overflow || p->pr_base == NULL || (uintptr_t)p->pr_base % l.width != 0 ||
	    p->pr_size < l.width) {
		errno = EINVAL;
		return -1;
	}
	t->overflow = p->pr_base;
	t->overflow_width = (uint8_t)l.width;
	return 0;
}

static int set_region(struct prange *r, const struct prof *p, struct layout l)
{
	if (p->pr_scale > UINT32_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (forms_set_buffer(r, p->pr_base, p->pr_size, l.width) != 0)
		return -1;
	r->kind = PRANGE_HIST;
	r->lowpc = r->offset = p->pr_off;
	r->scale = (uint32_t)p->pr_scale;
	r->shift = (uint8_t)l.shift;
	r->highpc = prange_end(r); /* the region ends where its counters do */
	return 0;
}

/* Every region of p[n] into regions[] (their count in *used), the
 * overflow entry into t; EINVAL for a malformed entry. */
static int parse(struct ptable *t, const struct prof *p, size_t n, struct layout l,
                 struct prange *regions, size_t *used)
{
	*used = 0;
	for (size_t i = 0; i < n; i++) {
		if (is_overflow_entry(&p[i])) {
			if (set_overflow(t, &p[i], l) != 0)
				return -1;
		} else if (p[i].pr_scale >= 2) {
			struct prange *r = &regions[(*used)++];
			if (set_region(r, &p[i], l) != 0)
				return -1;
			if (r->lowpc >= r->highpc) { /* ends past the address space */
				errno = EINVAL;
				return -1;
			}
		}
	}
	return 0;
}

/* t has room for 2n ranges: overlapping regions are split (forms_claim). */
static int fill(struct ptable *t, const void *copy, size_t n, const void *layout)
{
	struct prange *regions = calloc(n ? n : 1, sizeof *regions);
	size_t used;
	if (!regions) {
		errno = ENOMEM;
		return -1;
	}
	int rc = parse(t, copy, n, *(const struct layout *)layout, regions, &used);
	if (rc == 0)
		rc = forms_claim(t, regions, used);
	int e = errno;
	free(regions);
	errno = e;
	return rc;
}

/* The period the counts are in, to the nearest microsecond.  Stored with
 * memcpy: tvp is the caller's and may be misaligned (found by
 * fuzz/fuzz-forms.c; test sprofil_tvp_misaligned). */
static void write_period(struct timeval *tvp)
{
	unsigned int hz = profil_hz();
	unsigned long us = (1000000ul + hz / 2) / hz;
	struct timeval tv = {(time_t)(us / 1000000), (suseconds_t)(us % 1000000)};
	memcpy(tvp, &tv, sizeof tv);
}

static int start(const struct prof *profp, size_t n, unsigned int flags)
{
	struct layout l = flags & PROF_UINT ? (struct layout){4, 2} : (struct layout){2, 1};
	struct prof *p = forms_copy_array(profp, n, sizeof *p);
	if (!p)
		return forms_fail(errno);
	return forms_build(p, n, 2 * n, PFORM_SPROFIL, fill, &l);
}

int sprofil(struct prof *profp, int profcnt, struct timeval *tvp, unsigned int flags)
{
	if (profcnt < 0 || (unsigned int)profcnt > PTABLE_MAX_RANGES ||
	    (flags & ~(unsigned int)(PROF_UINT | PROF_FAST)) != 0)
		return forms_fail(EINVAL);
	if (tvp && probe_writable(tvp, sizeof *tvp) != 0)
		return forms_fail(EFAULT);
	/* profcnt 0 is glibc's way to stop (sprofil(NULL, 0, NULL, 0)) */
	int rc = profcnt == 0 ? gmon_publish(NULL) : start(profp, (size_t)profcnt, flags);
	if (rc == 0 && tvp)
		write_period(tvp);
	return rc;
}
