/*
 * probe.c - is a caller's buffer writable?  Answered from /proc/self/maps,
 * so the probe neither faults nor touches a byte of the buffer (4.4BSD's
 * EFAULT at the call, without the kernel's copyin).
 *
 * The answer can go stale the moment it is given (another thread may
 * unmap the buffer); the sampling path's fault recovery covers that.
 *
 * probe_writable() checks one buffer without allocating; the probe_map
 * functions take one snapshot for checking many (the multi-range forms
 * may carry up to PTABLE_MAX_RANGES buffers, and reading the maps file
 * once per buffer would take minutes).
 */
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/* Streaming parser state: we need only "start-end perms" of each line. */
struct maps_line {
	uintptr_t start, end;
	char perms[4];
	int field, nperm, skipping;
};

static void line_reset(struct maps_line *l)
{
	l->start = l->end = 0;
	l->field = l->nperm = l->skipping = 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Feeds one character; returns 1 when a line's fields are complete. */
static int line_feed(struct maps_line *l, char c)
{
	if (l->skipping)
		return 0;
	if (l->field == 0 && c == '-') {
		l->field = 1;
	} else if (l->field < 2 && c == ' ') {
		l->field = 2;
	} else if (l->field < 2 && hexval(c) >= 0) {
		uintptr_t *v = l->field == 0 ? &l->start : &l->end;
		*v = *v * 16 + (uintptr_t)hexval(c);
	} else if (l->field == 2 && l->nperm < 4) {
		l->perms[l->nperm++] = c;
		if (l->nperm == 4) {
			l->skipping = 1;
			return 1;
		}
	}
	return 0;
}

int probe_writable(const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi;
	if (len == 0)
		return 0;
	if (!p || __builtin_add_overflow(lo, len, &hi))
		goto fault;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* no /proc: trust the caller; faults are still caught */
	char buf[4096];
	struct maps_line l;
	line_reset(&l);
	uintptr_t covered = lo; /* [lo, covered) is known writable */
	ssize_t n;
	while (covered < hi && (n = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n && covered < hi; i++) {
			if (buf[i] == '\n') {
				line_reset(&l);
				continue;
			}
			if (!line_feed(&l, buf[i]))
				continue;
			/* Lines are in ascending address order. */
			if (l.start <= covered && covered < l.end) {
				if (l.perms[1] != 'w')
					break;
				covered = l.end;
			}
		}
	}
	close(fd);
	if (covered >= hi)
		return 0;
fault:
	errno = EFAULT;
	return -1;
}

/* Appends [lo, hi) to m, merging with the last span when they touch
 * (maps lines are ascending, so the spans stay sorted and disjoint). */
static int map_add(struct probe_map *m, uintptr_t lo, uintptr_t hi)
{
	if (m->n > 0 && m->spans[m->n - 1].hi == lo) {
		m->spans[m->n - 1].hi = hi;
		return 0;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 64;
		struct probe_span *s = mem_realloc(m->spans, cap * sizeof *s);
		if (!s)
			return -1;
		m->spans = s;
		m->cap = cap;
	}
	m->spans[m->n++] = (struct probe_span){lo, hi};
	return 0;
}

/* Permission letter positions in a maps line: "rwxp". */
static int perm_index(char perm)
{
	return perm == 'w' ? 1 : perm == 'x' ? 2 : 0;
}

int probe_map_load(struct probe_map *m, char perm)
{
	*m = (struct probe_map){0};
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		m->everything = 1;
		return 0;
	}
	int k = perm_index(perm), err = 0;
	char buf[4096];
	struct maps_line l;
	line_reset(&l);
	ssize_t n;
	while (!err && (n = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n && !err; i++) {
			if (buf[i] == '\n')
				line_reset(&l);
			else if (line_feed(&l, buf[i]) && l.perms[k] == perm)
				err = map_add(m, l.start, l.end);
		}
	}
	close(fd);
	if (err) {
		probe_map_free(m);
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

size_t probe_map_prefix(const struct probe_map *m, const void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi;
	if (m->everything)
		return len;
	if (__builtin_add_overflow(lo, len, &hi))
		hi = UINTPTR_MAX;
	/* The last span starting at or below lo. */
	size_t a = 0, b = m->n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (m->spans[mid].lo <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	if (a == 0 || m->spans[a - 1].hi <= lo)
		return 0;
	uintptr_t end = m->spans[a - 1].hi; /* merged: no span continues it */
	return end >= hi ? (size_t)(hi - lo) : (size_t)(end - lo);
}

void probe_map_free(struct probe_map *m)
{
	mem_free(m->spans);
	*m = (struct probe_map){0};
}
