/*
 * gmon_file.c - gmon.out encoding and atomic file output.
 *
 * The format (GNU gprof, binutils gmon_out.h; host byte order and pointer
 * size, as gprof reads them for an object of this architecture):
 *   header   "gmon", u32 version 1, 12 bytes zero
 *   record   u8 tag 0 (histogram), lowpc, highpc (pointer-sized,
 *            object-relative), u32 bins, u32 rate, char dimen[15]
 *            "seconds", char 's', then bins u16 counters
 * A record covers [lowpc, highpc) in bins of equal width.  gprof rejects
 * records that overlap without being identical and adds identical ones,
 * so a counter above 65535 is written as several identical records.
 *
 * Atomicity: the file is written under a temporary name in the target's
 * directory (symbolic links resolved, so the link survives), fsynced, and
 * renamed over the target only when everything succeeded; a failure
 * removes the temporary file, so a good old file is never replaced by a
 * partial one.  A target that exists and is not a regular file (a device
 * such as /dev/null or /dev/full, a FIFO) cannot be replaced and is
 * written in place; its errors are reported all the same.
 */
#include "gmon/gmon.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define GMON_HIST_TAG 0
#define COUNT_MAX 0xffffu
/* Zero cells a run bridges rather than starting a new record: a record
 * header costs about as much as this many counters. */
#define RUN_GAP 24

struct gout {
	int fd;
	int err;      /* first error's errno; 0 while all is well */
	int direct;   /* writing the target itself */
	char *target; /* final name, symbolic links resolved */
	char *tmp;    /* temporary name; NULL when direct */
	size_t len;
	unsigned char buf[1 << 16];
};

static void flush(struct gout *g)
{
	size_t done = 0;
	while (!g->err && done < g->len) {
		ssize_t n = write(g->fd, g->buf + done, g->len - done);
		if (n > 0)
			done += (size_t)n;
		else if (n == 0)
			g->err = EIO;
		else if (errno != EINTR)
			g->err = errno;
	}
	g->len = 0;
}

static void put(struct gout *g, const void *p, size_t n)
{
	const unsigned char *s = p;
	while (n > 0 && !g->err) {
		if (g->len == sizeof g->buf)
			flush(g);
		size_t k = sizeof g->buf - g->len < n ? sizeof g->buf - g->len : n;
		memcpy(g->buf + g->len, s, k);
		g->len += k, s += k, n -= k;
	}
}

static void put_u32(struct gout *g, uint32_t v)
{
	put(g, &v, sizeof v);
}

static void put_record_header(struct gout *g, uintptr_t lo, uintptr_t hi, uint32_t bins,
                              unsigned int rate)
{
	static const char dimen[15] = "seconds";
	unsigned char tag = GMON_HIST_TAG;
	char abbrev = 's';
	put(g, &tag, 1);
	put(g, &lo, sizeof lo);
	put(g, &hi, sizeof hi);
	put_u32(g, bins);
	put_u32(g, rate);
	put(g, dimen, sizeof dimen);
	put(g, &abbrev, 1);
}

/* Cells [k, end) as records; layer L holds what exceeds L * 65535. */
static void put_run(struct gout *g, const struct ghist *h, size_t k, size_t end,
                    unsigned int rate)
{
	uint64_t max = 0, bytes = 2 * h->width;
	for (size_t j = k; j < end; j++)
		max = h->cells[j] > max ? h->cells[j] : max;
	uint64_t layers = max > COUNT_MAX ? (max + COUNT_MAX - 1) / COUNT_MAX : 1;
	for (uint64_t L = 0; L < layers && !g->err; L++) {
		put_record_header(g, (uintptr_t)((h->first + k) * bytes),
		                  (uintptr_t)((h->first + end) * bytes), (uint32_t)(end - k), rate);
		for (size_t j = k; j < end; j++) {
			uint64_t c = h->cells[j], below = L * COUNT_MAX;
			uint16_t v = c <= below ? 0 : c - below > COUNT_MAX ? COUNT_MAX : (uint16_t)(c - below);
			put(g, &v, sizeof v);
		}
	}
}

/* End of the run starting at nonzero cell k: hot cells (over 65535) run
 * only with hot cells, so the repeated records stay short; cold runs
 * bridge short gaps of zeros. */
static size_t run_end(const struct ghist *h, size_t k)
{
	int hot = h->cells[k] > COUNT_MAX;
	size_t j = k + 1, last = k;
	for (; j < h->n; j++) {
		uint64_t c = h->cells[j];
		if ((c > COUNT_MAX) != hot || j - last > RUN_GAP)
			break;
		if (c)
			last = j;
	}
	return last + 1;
}

void gout_put_hist(struct gout *g, const struct ghist *h, unsigned int rate)
{
	static const char magic[4] = {'g', 'm', 'o', 'n'};
	static const char spare[12];
	put(g, magic, sizeof magic);
	put_u32(g, 1);
	put(g, spare, sizeof spare);
	if (h->n > 0 && h->total == 0) /* one zero bin: "no time accumulated" */
		put_run(g, h, 0, 1, rate);
	for (size_t k = 0; k < h->n && !g->err;) {
		if (h->cells[k] == 0) {
			k++;
			continue;
		}
		size_t end = run_end(h, k);
		put_run(g, h, k, end, rate);
		k = end;
	}
}

/* A temporary name next to target that nobody else holds. */
static int open_tmp(struct gout *g)
{
	static _Atomic unsigned int seq;
	size_t size = strlen(g->target) + 48;
	if (!(g->tmp = malloc(size)))
		return -1;
	for (int tries = 0; tries < 100; tries++) {
		snprintf(g->tmp, size, "%s.tmp-%ld-%u", g->target, (long)getpid(),
		         atomic_fetch_add(&seq, 1));
		g->fd = open(g->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (g->fd >= 0 || errno != EEXIST)
			return g->fd >= 0 ? 0 : -1;
	}
	return -1;
}

static int open_target(struct gout *g, const char *path)
{
	struct stat st;
	int rc = stat(path, &st);
	if (rc == 0 && !S_ISREG(st.st_mode)) {
		g->direct = 1; /* a device or FIFO: cannot be replaced */
		g->fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
		return g->fd >= 0 && (g->target = strdup(path)) ? 0 : -1;
	}
	if (rc != 0 && errno != ENOENT)
		return -1;
	g->target = realpath(path, NULL); /* the file a link points to */
	if (!g->target && errno == ENOENT) /* new file or dangling link */
		g->target = strdup(path);
	return g->target ? open_tmp(g) : -1;
}

struct gout *gout_open(const char *path)
{
	struct gout *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->fd = -1;
	if (open_target(g, path) != 0) {
		gout_abort(g);
		return NULL;
	}
	return g;
}

/* fsync that tolerates objects that cannot be synced (devices, pipes). */
static int sync_fd(int fd)
{
	return fsync(fd) == 0 || errno == EINVAL || errno == EROFS ? 0 : -1;
}

int gout_finish(struct gout *g)
{
	flush(g);
	if (!g->err && sync_fd(g->fd) != 0)
		g->err = errno;
	if (close(g->fd) != 0 && !g->err && errno != EINTR)
		g->err = errno;
	g->fd = -1;
	errno = g->err;
	return g->err ? -1 : 0;
}

/* Make the rename durable: fsync the directory that holds target. */
static int sync_dir(const char *target)
{
	char *dir = strdup(target);
	if (!dir)
		return -1;
	char *slash = strrchr(dir, '/');
	if (slash)
		slash[slash == dir] = '\0'; /* keep "/" for files at the root */
	int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int rc = fd >= 0 ? sync_fd(fd) : -1, e = errno;
	if (fd >= 0)
		close(fd);
	free(dir);
	errno = e;
	return rc;
}

int gout_commit(struct gout *g)
{
	int rc = 0;
	if (!g->direct) {
		rc = rename(g->tmp, g->target);
		if (rc == 0) {
			free(g->tmp);
			g->tmp = NULL; /* nothing left to remove */
			rc = sync_dir(g->target);
		}
	}
	int e = errno;
	gout_abort(g);
	errno = e;
	return rc;
}

void gout_abort(struct gout *g)
{
	int e = errno;
	if (g->fd >= 0)
		close(g->fd);
	if (g->tmp)
		unlink(g->tmp);
	free(g->tmp);
	free(g->target);
	free(g);
	errno = e;
}
