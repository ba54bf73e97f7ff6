/*
 * probe.c - is a caller's buffer writable?  Answered from /proc/self/maps,
 * so the probe neither faults nor touches a byte of the buffer (4.4BSD's
 * EFAULT at the call, without the kernel's copyin).
 *
 * The answer can go stale the moment it is given (another thread may
 * unmap the buffer); the sampling path's fault recovery covers that.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
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
