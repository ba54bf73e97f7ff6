/*
 * forms.h - what the multi-range forms (forms_tru64.c, forms_aix.c,
 * sprofil.c) share: copying a caller's array in without faulting, checking
 * many buffers against one snapshot of the address space, and the common
 * tail of every call (check the table, publish it).
 *
 * Every form follows one recipe, so that an invalid call changes nothing:
 *   1. copy the caller's array into memory we own (copyin_prefix): an
 *      unreadable array is EFAULT, never a crash, and another thread
 *      rewriting it cannot make us check one value and use another;
 *   2. validate every entry (EINVAL) and every buffer (EFAULT) before
 *      touching the engine;
 *   3. forms_publish(): sort, reject overlaps, publish.
 */
#ifndef PROFIL_FORMS_H
#define PROFIL_FORMS_H

#include "base/base.h"
#include "gmon/gmon.h"



/* The forms themselves, dispatched from profil() (profil.c). */
HIDDEN int forms_tru64(const struct profil_args *args, size_t n, unsigned int flags);
HIDDEN int forms_aix(const void *profs);

/* forms_common.c */

/*
 * Points r at a caller's buffer of bytes bytes holding counters of width
 * bytes (2 or 4): sets r->buf, r->nbins, r->width.  EINVAL for NULL,
 * misaligned, or too small for one counter.  Writability is checked later,
 * for all buffers at once, by forms_publish().
 */
HIDDEN int forms_set_buffer(struct prange *r, void *buf, size_t bytes, unsigned width);

/*
 * The tail of every form, in the order that keeps errors predictable:
 * a table with no range and no overflow counter stops profiling; then
 * sort and reject empty or overlapping ranges (EINVAL, nothing changed);
 * then every buffer must be writable (EFAULT, profiling off); then
 * publish.  Consumes t; returns the public call's return value.
 */
HIDDEN int forms_publish(struct ptable *t);

/* The error return of a form: a buffer or array that was not accessible
 * turns profiling off (4.4BSD: "profiling is terminated"), as in the
 * classic form; any other error leaves the configuration alone. */
HIDDEN int forms_fail(int err);

/*
 * Steps 2 and 3 for a form whose caller's array was copied into `copy`
 * (n entries; freed here): a table with room for cap ranges is filled by
 * fill(), which may use fewer and fails with -1 and errno, then marked as
 * a histogram of `form` and handed to forms_publish().  ctx is passed to
 * fill().
 */
typedef int forms_fill_fn(struct ptable *t, const void *copy, size_t n, const void *ctx);
HIDDEN int forms_build(void *copy, size_t n, size_t cap, enum ptable_form form,
                       forms_fill_fn *fill, const void *ctx);

/*
 * forms_overlap.c: sets t's ranges to the disjoint pieces of regions[n]
 * that may overlap, by glibc's sprofil() rule: decreasing lowpc claims
 * first, ties go to the earlier region (docs/contract.md, "sprofil").  t
 * must have room for 2n ranges.  -1 ENOMEM.
 */
HIDDEN int forms_claim(struct ptable *t, const struct prange *regions, size_t n);

/* A malloc'd copy of the caller's array of n entries of size bytes, or
 * NULL with errno EFAULT (not all readable), ENOMEM or EINVAL (n * size
 * overflows).  The caller frees it. */
HIDDEN void *forms_copy_array(const void *src, size_t n, size_t size);

#endif /* PROFIL_FORMS_H */
