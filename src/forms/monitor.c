/*
 * monitor.c - Solaris/Tru64 monitor(): profile a text range into a
 * caller-supplied buffer; monitor(NULL, ...) stops and writes gmon.out.
 *
 * The buffer keeps the traditional <mon.h> layout, so code written for
 * those systems finds what it expects:
 *
 *   struct hdr { char *lpc; char *hpc; size_t nfns; }   lowpc, highpc, nfunc
 *   struct cnt { char *fnpc; long mcnt; } [nfunc]       zeroed: call counts
 *                                                       need cc -p, which
 *                                                       Linux does not have
 *   WORD hist[]                                         the rest of buffer
 *
 * The histogram is a classic profil() histogram with offset lowpc and the
 * largest scale (at most 0x10000, one counter per 2 bytes) that maps all
 * of [lowpc, highpc) into hist[]; samples outside the range are not
 * counted.  monitor() returns nothing: a failure leaves profiling as it
 * was (or off, for a buffer that is not writable) and sets errno.
 */
#include "base/base.h"
#include "gmon/gmon.h"

#include <errno.h>
#include <string.h>

/* <mon.h>'s header and call-count cell, with their traditional names. */
struct mon_hdr {
	char *lpc;
	char *hpc;
	size_t nfns;
};

struct mon_cnt {
	char *fnpc;
	long mcnt;
};

typedef unsigned short WORD;

/* Largest scale <= 0x10000 with floor((units - 1) * scale / 65536) < nbins. */
static unsigned int fit_scale(uintptr_t lowpc, uintptr_t highpc, size_t nbins)
{
	uint64_t units = (highpc - lowpc + 1) / 2;
	if (nbins >= units)
		return 0x10000;
	return (unsigned int)((uint64_t)nbins * 65536u / units);
}

static struct ptable *monitor_table(uintptr_t lowpc, uintptr_t highpc, WORD *hist,
                                    size_t nbins, unsigned int scale)
{
	struct ptable *t = ptable_new(1);
	if (!t)
		return NULL;
	struct prange *r = &t->ranges[0];
	t->mode = PTABLE_HIST;
	t->form = PFORM_MONITOR;
	r->kind = PRANGE_HIST;
	r->buf = hist;
	r->nbins = nbins;
	r->scale = scale;
	r->shift = 1;
	r->width = sizeof(WORD);
	r->offset = lowpc;
	r->lowpc = lowpc;
	r->highpc = prange_end(r) < highpc ? prange_end(r) : highpc;
	return t;
}

/* Bytes before the histogram, or 0 when nfunc makes it overflow. */
static size_t prefix_bytes(size_t nfunc)
{
	if (nfunc > (SIZE_MAX - sizeof(struct mon_hdr)) / sizeof(struct mon_cnt))
		return 0;
	return sizeof(struct mon_hdr) + nfunc * sizeof(struct mon_cnt);
}

static int monitor_start(uintptr_t lowpc, uintptr_t highpc, WORD *buffer, size_t bufsize,
                         size_t nfunc)
{
	size_t prefix = prefix_bytes(nfunc);
	if (highpc <= lowpc || (uintptr_t)buffer % sizeof(WORD) != 0 || prefix == 0 ||
	    bufsize > SIZE_MAX / sizeof(WORD) || bufsize * sizeof(WORD) < prefix + sizeof(WORD)) {
		errno = EINVAL;
		return -1;
	}
	size_t nbins = (bufsize * sizeof(WORD) - prefix) / sizeof(WORD);
	unsigned int scale = fit_scale(lowpc, highpc, nbins);
	if (scale < 3) { /* 0 and 1 mean "off", 2 "count every tick" */
		errno = EINVAL;
		return -1;
	}
	if (probe_writable(buffer, bufsize * sizeof(WORD)) != 0) {
		gmon_publish(NULL);
		errno = EFAULT;
		return -1;
	}
	/* The buffer is zeroed before the table that counts into it is
	 * published; if the live table counts into it too, stop that first,
	 * or its samples in flight would land after the zeroing. */
	if (gmon_live_overlaps(buffer, bufsize * sizeof(WORD)) && gmon_publish(NULL) != 0)
		return -1;
	struct mon_hdr h = {(char *)lowpc, (char *)highpc, nfunc};
	memset(buffer, 0, bufsize * sizeof(WORD));
	memcpy(buffer, &h, sizeof h); /* buffer need only be WORD-aligned */
	struct ptable *t = monitor_table(lowpc, highpc, (WORD *)((char *)buffer + prefix), nbins,
	                                 scale);
	return t ? gmon_publish(t) : -1;
}

void monitor(int (*lowpc)(void), int (*highpc)(void), unsigned short *buffer, size_t bufsize,
             size_t nfunc)
{
	if (lowpc == NULL) {
		/* Stop first, so the file holds final counts. */
		if (gmon_publish(NULL) == 0)
			profil_write_gmon(NULL);
		return;
	}
	monitor_start((uintptr_t)lowpc, (uintptr_t)highpc, buffer, bufsize, nfunc);
}
