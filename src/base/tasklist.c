/*
 * tasklist.c - the threads of this process, from /proc/self/task.
 *
 * Three parts list them: the sweeper on the helper thread (a thread no
 * hook saw, whether the program's threads have all ended), the timer
 * registry's cover-all, and the choice of a free signal.  opendir()
 * mallocs its DIR and its buffer, and the helper must never call the
 * program's allocator (alloc.c), so the listing is read here with
 * getdents64 into a buffer on the stack.  The descriptor is open only for
 * the call (O_CLOEXEC: an exec on another thread meanwhile does not
 * inherit it), in whatever table the calling thread has (sweeper.c gives
 * the helper one of its own where it can).
 */
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

/* What getdents64 writes, one after another (linux_dirent64). */
struct dirent64_head {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

/* The thread id a name spells, or 0 if it is not a positive number. */
static pid_t tid_of(const char *name)
{
	long v = 0;
	if (!*name)
		return 0;
	for (; *name; name++) {
		if (*name < '0' || *name > '9' || v > (INT32_MAX - 9) / 10)
			return 0;
		v = v * 10 + (*name - '0');
	}
	return (pid_t)v;
}

/* Calls fn for each thread named in buf[0, len); its first non-zero. */
static int each_in(const char *buf, long len, int (*fn)(pid_t, void *), void *arg)
{
	for (long at = 0; at < len;) {
		const struct dirent64_head *d = (const void *)(buf + at);
		if (d->reclen == 0)
			break;
		at += d->reclen;
		pid_t tid = tid_of(d->name);
		int rc = tid > 0 ? fn(tid, arg) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

int tasklist_each(int (*fn)(pid_t tid, void *arg), void *arg)
{
	int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	_Alignas(8) char buf[2048];
	int rc = 0;
	for (;;) {
		long len = syscall(SYS_getdents64, fd, buf, sizeof buf);
		if (len < 0) {
			rc = -1;
			break;
		}
		if (len == 0 || (rc = each_in(buf, len, fn, arg)) != 0)
			break;
	}
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}
