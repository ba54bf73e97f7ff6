/*
 * gmon.h - the pieces of profil_write_gmon(), which are internal:
 *
 *   gmon.c       finds the loaded objects, names one file per object,
 *                drives the rest
 *   gmon_bins.c  re-bins every range of a table onto one object's grid
 *   gmon_file.c  encodes gmon.out records and writes files atomically
 *   gmon_keep.c  copies the counts when profiling stops
 */
#ifndef PROFIL_GMON_H
#define PROFIL_GMON_H

#include "base/base.h"

/* One loaded object: pcs in [lo, hi) belong to it, and its file's
 * addresses are pc - base (dlpi_addr: 0 for a non-PIE executable). */
struct gobj {
	uintptr_t lo, hi;
	uintptr_t base;
	const char *name; /* dlpi_name; "" for the main program */
};

/*
 * A histogram on one object's grid: cells[k] counts samples whose
 * object-relative address lies in [(first + k) * 2 * width,
 * (first + k + 1) * 2 * width).  width is in gprof's UNITs (2 bytes) and
 * the same for every record of a file, as gprof requires.
 */
struct ghist {
	uint64_t first;
	size_t n;
	uint64_t width;
	uint64_t *cells;
	uint64_t total;
};

/*
 * gmon_keep.c.  Every public call publishes through gmon_publish() (or
 * _take), engine_publish() that also keeps a copy of the counters of a
 * live histogram it retires, for profil_write_gmon() after the stop.
 */
HIDDEN int gmon_publish(struct ptable *t);
HIDDEN int gmon_publish_take(struct ptable *t, size_t *pcsample_stored);
/* Whether a live histogram counts into memory overlapping [p, p+len). */
HIDDEN int gmon_live_overlaps(const void *p, size_t len);
/* 0 when every buffer of t is writable, by one read of /proc/self/maps;
 * -1 EFAULT otherwise. */
HIDDEN int gmon_check_buffers(const struct ptable *t);
/* Calls fn with the table to write: the live one (its buffers checked),
 * or the counts kept at the last stop.  -1 with errno ENOENT (never
 * profiled) or EFAULT (the last buffers were gone when profiling stopped,
 * or it stopped after a fault) without calling fn. */
HIDDEN int gmon_with_table(int (*fn)(const struct ptable *t, void *arg), void *arg);

/* gmon_bins.c: build h for the part of table t inside o.  Returns 0 (h->n
 * is 0 when no range of t overlaps o), or -1 with errno ENOMEM. */
HIDDEN int ghist_build(struct ghist *h, const struct ptable *t, const struct gobj *o);
HIDDEN void ghist_free(struct ghist *h);

/* gmon_file.c: one output file, written to a temporary name and renamed
 * over the target by gout_commit(); a target that exists and is not a
 * regular file (a device such as /dev/null) is written in place. */
struct gout;
/* Opens the temporary file for path; NULL with errno on failure. */
HIDDEN struct gout *gout_open(const char *path);
/* Writes the gmon.out header and h's records (rate samples per second). */
HIDDEN void gout_put_hist(struct gout *g, const struct ghist *h, unsigned int rate);
/* Flushes, fsyncs and closes; 0, or -1 with the first error's errno. */
HIDDEN int gout_finish(struct gout *g);
/* Renames the finished file over its target and frees g; 0 or -1 errno. */
HIDDEN int gout_commit(struct gout *g);
/* Closes and removes the temporary file, frees g; keeps errno. */
HIDDEN void gout_abort(struct gout *g);

#endif
