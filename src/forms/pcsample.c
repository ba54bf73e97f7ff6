/*
 * pcsample.c - Solaris pcsample(): raw program counters instead of a
 * histogram (docs/contract.md, "pcsample").
 *
 * The signal handler (sample.c, count_pc) claims slots with an atomic
 * fetch-add on pcnext and writes only slots below pccap, so a full buffer
 * stops the stores by itself; the timers keep running until the next call
 * so that the statistics still count CPU time.
 *
 * "The number of samples stored during the previous invocation" is read
 * by the engine when it retires a pcsample table, whichever call retires
 * it, and taken here under the same lock hold as the publish (see
 * gmon_publish_take()).  So:
 *   - pcsample(a, n); profil(...); pcsample(b, m) returns what a received
 *     until profil() replaced it: the previous pcsample() invocation;
 *   - a call that fails (EINVAL, EFAULT, ENOMEM) is not an invocation: the
 *     next call still reports the last successful one;
 *   - pcsample(x, 0) stores nothing, so the call after it returns 0.
 */
#include "base/base.h"
#include "gmon/gmon.h"

#include <errno.h>
#include <limits.h>

/* A table that stores raw pcs into samples[0..n-1]. */
static struct ptable *pcsample_table(uintptr_t *samples, size_t n)
{
	struct ptable *t = ptable_new(0);
	if (!t)
		return NULL;
	t->mode = PTABLE_PCSAMPLE;
	t->form = PFORM_PCSAMPLE;
	t->pcbuf = samples;
	t->pccap = n;
	atomic_init(&t->pcnext, 0);
	return t;
}

/* The caller's array must be writable now (4.4BSD's EFAULT rule), and
 * its byte length must not overflow. */
static int check_buffer(const uintptr_t *samples, long nsamples)
{
	if ((unsigned long)nsamples > SIZE_MAX / sizeof *samples ||
	    (uintptr_t)samples % _Alignof(uintptr_t) != 0) {
		errno = EFAULT;
		return -1;
	}
	return probe_writable(samples, (size_t)nsamples * sizeof *samples);
}

long pcsample(uintptr_t samples[], long nsamples)
{
	size_t stored = 0;
	if (nsamples < 0) {
		errno = EINVAL; /* changes nothing */
		return -1;
	}
	if (nsamples == 0) {
		if (gmon_publish_take(NULL, &stored) != 0)
			return -1;
		return (long)stored;
	}
	if (samples == NULL || check_buffer(samples, nsamples) != 0) {
		gmon_publish(NULL); /* a bad buffer turns profiling off */
		errno = EFAULT;
		return -1;
	}
	struct ptable *t = pcsample_table(samples, (size_t)nsamples);
	if (!t)
		return -1;
	if (gmon_publish_take(t, &stored) != 0)
		return -1;
	/* stored <= a previous nsamples, which was a long */
	return stored > LONG_MAX ? LONG_MAX : (long)stored;
}
