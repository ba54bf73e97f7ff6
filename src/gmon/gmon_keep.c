/*
 * gmon_keep.c - the counts profil_write_gmon() writes after a stop are
 * copied when profiling stops, never read later from the caller's
 * buffers (docs/contract.md, "gmon.out").
 *
 * Why: after the call that stops profiling returns, the buffers are the
 * caller's again, to free or unmap at once.  So every public call
 * publishes through gmon_publish(), which, when it retires a live
 * histogram table without replacing it by another, copies that table's
 * counters (final by then: engine_publish() has drained the handlers)
 * into memory of our own.  Buffers are checked against one snapshot of
 * /proc/self/maps, whatever the number of ranges.
 *
 * keep_lock serialises the public calls around engine_publish(), so the
 * table copied is the table retired.  It is taken before the engine lock,
 * never inside it, and held across fork (registered after fork.c's
 * handlers, so its prepare runs first and the order is the same).
 */
#include "gmon/gmon.h"
#include "engine/engine.h"
#include "process/process.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Every form publishes through this file: it takes the process part's
 * objects into a static link (process.h says why). */
static const void *const take_process[] __attribute__((used)) = {
	&process_fork_linked, &process_exec_linked, &process_threads_linked, &process_sigwrap_linked,
	&process_maskwrap_linked,
};

static pthread_mutex_t keep_lock = PTHREAD_MUTEX_INITIALIZER;
/* Under keep_lock: the last retired histogram, its ranges pointing into
 * kept_counts; or kept_err when its buffers were gone at the stop. */
static struct ptable *kept;
static void *kept_counts;
static int kept_err;

static void lock_keep(void)
{
	pthread_mutex_lock(&keep_lock);
}

static void unlock_keep(void)
{
	pthread_mutex_unlock(&keep_lock);
}

static void register_atfork(void)
{
	pthread_atfork(lock_keep, unlock_keep, unlock_keep);
}

static void lock(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, register_atfork); /* after the constructors */
	lock_keep();
}

static struct ptable *table_copy(const struct ptable *src)
{
	struct ptable *c = ptable_new(src->nranges);
	if (c) {
		c->mode = src->mode;
		c->form = src->form;
		c->overflow = src->overflow;
		c->overflow_width = src->overflow_width;
		memcpy(c->ranges, src->ranges, src->nranges * sizeof src->ranges[0]);
	}
	return c;
}

/* A copy of the published table if it is a live histogram, else NULL. */
static struct ptable *live_copy(void)
{
	engine_lock();
	struct ptable *p = atomic_load(&profil_published), *c = NULL;
	if (p && p->mode == PTABLE_HIST)
		c = table_copy(p);
	engine_unlock();
	return c;
}

static size_t range_bytes(const struct prange *r)
{
	return r->kind == PRANGE_HIST || r->kind == PRANGE_TICK ? r->nbins * r->width : 0;
}

int gmon_check_buffers(const struct ptable *t)
{
	struct probe_map m;
	if (probe_map_load(&m, 'w') != 0)
		return -1;
	int ok = 1;
	for (size_t i = 0; ok && i < t->nranges; i++) {
		size_t len = range_bytes(&t->ranges[i]);
		ok = probe_map_prefix(&m, t->ranges[i].buf, len) == len;
	}
	probe_map_free(&m);
	if (!ok)
		errno = EFAULT;
	return ok ? 0 : -1;
}

static void drop_kept(void)
{
	ptable_free(kept);
	free(kept_counts);
	kept = NULL, kept_counts = NULL, kept_err = 0;
}

/* One buffer to copy: the pieces of a split sprofil() region share
 * their region's buffer, and must share one copy of it too. */
struct src_buf {
	void *buf;
	size_t len, range;
};

static int by_buffer(const void *a, const void *b)
{
	const struct src_buf *x = a, *y = b;
	if (x->buf != y->buf)
		return (uintptr_t)x->buf < (uintptr_t)y->buf ? -1 : 1;
	return (x->len > y->len) - (x->len < y->len);
}

/* Copies t's counters into one block and repoints its ranges at it; -1
 * with errno ENOMEM, or EFAULT when a buffer was unmapped since
 * gmon_check_buffers() (another thread's munmap: the check reads
 * /proc/self/maps, a wide window; found by `make stress`, test
 * gmon_keep_buffer_unmapped_at_stop).  Buffers are copied once each,
 * however many ranges use them, with copyin_prefix(), which never faults. */
static int copy_counters(struct ptable *t, void **block)
{
	size_t n = t->nranges, total = 0;
	struct src_buf *v = malloc((n ? n : 1) * sizeof *v);
	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++)
		v[i] = (struct src_buf){t->ranges[i].buf, range_bytes(&t->ranges[i]), i};
	qsort(v, n, sizeof *v, by_buffer);
	for (size_t i = 0; i < n; i++)
		if (i == 0 || by_buffer(&v[i], &v[i - 1]) != 0)
			total += v[i].len;
	unsigned char *mem = malloc(total ? total : 1), *at = mem;
	for (size_t i = 0; mem && i < n; i++) {
		if (i > 0 && by_buffer(&v[i], &v[i - 1]) == 0) {
			t->ranges[v[i].range].buf = t->ranges[v[i - 1].range].buf;
			continue;
		}
		if (copyin_prefix(at, v[i].buf, v[i].len) != v[i].len) {
			free(v);
			free(mem);
			errno = EFAULT;
			return -1;
		}
		t->ranges[v[i].range].buf = at;
		at += v[i].len;
	}
	free(v);
	*block = mem;
	if (!mem)
		errno = ENOMEM;
	return mem ? 0 : -1;
}

static void keep(struct ptable *t)
{
	drop_kept();
	if (gmon_check_buffers(t) != 0) {
		kept_err = errno;
		ptable_free(t);
		return;
	}
	void *mem;
	if (copy_counters(t, &mem) != 0) {
		kept_err = errno;
		ptable_free(t);
		return;
	}
	t->overflow = NULL; /* not written to gmon.out */
	kept = t, kept_counts = mem;
}

int gmon_publish_take(struct ptable *t, size_t *pcsample_stored)
{
	int new_hist = t && t->mode == PTABLE_HIST;
	lock();
	struct ptable *live = new_hist ? NULL : live_copy();
	int rc = engine_publish_take(t, pcsample_stored);
	if (rc == 0 && new_hist)
		drop_kept(); /* the last histogram is now t */
	else if (rc == 0 && live)
		keep(live), live = NULL;
	ptable_free(live);
	unlock_keep();
	return rc;
}

int gmon_publish(struct ptable *t)
{
	return gmon_publish_take(t, NULL);
}

int gmon_live_overlaps(const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len;
	engine_lock();
	const struct ptable *t = atomic_load(&profil_published);
	int hit = 0;
	for (size_t i = 0; t && t->mode == PTABLE_HIST && !hit && i < t->nranges; i++) {
		uintptr_t b = (uintptr_t)t->ranges[i].buf;
		hit = b < hi && b + range_bytes(&t->ranges[i]) > lo;
	}
	engine_unlock();
	return hit;
}

int gmon_with_table(int (*fn)(const struct ptable *t, void *arg), void *arg)
{
	lock();
	struct ptable *t = live_copy();
	int rc = -1;
	if (t) {
		/* live: the caller's buffers, which stay in use while we hold
		 * keep_lock (no public call can retire them meanwhile) */
		rc = gmon_check_buffers(t) == 0 ? fn(t, arg) : -1;
	} else if (kept) {
		rc = fn(kept, arg);
	} else if (kept_err) {
		errno = kept_err;
	} else if ((t = engine_last_hist_copy()) != NULL) {
		errno = EFAULT; /* withdrawn after a fault: its counts were not kept */
	}
	int e = errno;
	ptable_free(t);
	unlock_keep();
	errno = e;
	return rc;
}
