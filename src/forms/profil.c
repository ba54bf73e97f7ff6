/*
 * profil.c - the classic call, and the dispatch to the extended forms that
 * share its symbol (docs/contract.md, "The classic call" and "One symbol,
 * several forms").
 *
 * This file must not see glibc's <unistd.h> declaration of profil(): it
 * carries __nonnull((1)), which would let the optimiser delete the
 * buf == NULL test below.  The build also passes
 * -fno-delete-null-pointer-checks as a second guard.
 */
#include "base/base.h"
#include "gmon/gmon.h"

#include <errno.h>

/* forms_tru64.c, forms_aix.c */
HIDDEN int forms_tru64(const struct profil_args *args, size_t n, unsigned int flags);
HIDDEN int forms_aix(const void *profs);

/* Builds the one-range table of the classic form.  scale 2 is Tru64's
 * "every sample in buf[0]": a tick counter over the whole address space. */
static struct ptable *classic_table(unsigned short *buf, size_t bufsiz,
                                    size_t offset, unsigned int scale)
{
	struct ptable *t = ptable_new(1);
	if (!t)
		return NULL;
	struct prange *r = &t->ranges[0];
	t->mode = PTABLE_HIST;
	t->form = PFORM_CLASSIC;
	r->buf = buf;
	r->nbins = bufsiz / sizeof *buf;
	r->scale = scale;
	r->shift = 1;
	r->width = sizeof *buf;
	r->offset = offset;
	if (scale == 2) {
		r->kind = PRANGE_TICK;
		r->lowpc = 0;
		r->highpc = UINTPTR_MAX;
	} else {
		r->kind = PRANGE_HIST;
		r->lowpc = offset;
		r->highpc = prange_end(r);
	}
	return t;
}

int profil(unsigned short *buf, size_t bufsiz, size_t offset, unsigned int scale)
{
	if (offset == (size_t)-1)
		return forms_tru64((const struct profil_args *)(void *)buf, bufsiz, scale);
	if (bufsiz == (size_t)-1)
		return forms_aix(buf);
	if (buf == NULL || bufsiz == 0 || scale == 0 || scale == 1)
		return gmon_publish(NULL);
	if ((uintptr_t)buf % sizeof *buf != 0 || bufsiz < sizeof *buf) {
		errno = EINVAL; /* counters must be whole and aligned for atomics */
		return -1;
	}
	if (probe_writable(buf, bufsiz) != 0) {
		gmon_publish(NULL); /* 4.4BSD: "profiling is terminated" */
		errno = EFAULT;
		return -1;
	}
	struct ptable *t = classic_table(buf, bufsiz, offset, scale);
	if (!t)
		return -1;
	return gmon_publish(t);
}
