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
 *
 * A /proc mounted for another PID namespace (`unshare -p -f` without
 * --mount-proc; bwrap --unshare-pid without --proc) names this process
 * and its threads by the numbers that namespace gives them, not by
 * getpid() and gettid(): /proc/self/task/<gettid()> is no file there,
 * which read as "the thread has ended" (the main thread's entry dropped,
 * every event's thread taken for gone: the agent could not start).
 * proc_task_path() names the main thread by the number /proc gives the
 * process, and refuses other threads (their numbers there are unknown);
 * a listing gives /proc's numbers, which the engine's thread clocks
 * refuse as no thread of ours (clock_gettime() checks the thread group),
 * so only the threads our hooks see are sampled there.
 */
#include "base/base.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
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

/* getpid() << 32 | the number /proc gave it: a forked child asks anew. */
static _Atomic uint64_t self_named;

pid_t proc_self_pid(void)
{
	pid_t me = getpid();
	uint64_t c = atomic_load_explicit(&self_named, memory_order_relaxed);
	if (c && (pid_t)(c >> 32) == me)
		return (pid_t)(uint32_t)c;
	char buf[24];
	ssize_t n = readlink("/proc/self", buf, sizeof buf - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	pid_t named = tid_of(buf);
	if (named > 0)
		atomic_store_explicit(&self_named, (uint64_t)(uint32_t)me << 32 | (uint32_t)named,
		                      memory_order_relaxed);
	return named;
}

pid_t proc_task_number(pid_t tid)
{
	pid_t named = proc_self_pid();
	if (named > 0 && named != getpid()) /* /proc of another PID namespace */
		return tid == getpid() ? named : 0;
	return tid;
}

int proc_task_path(char *buf, size_t size, pid_t tid, const char *file)
{
	pid_t named = proc_task_number(tid);
	if (named <= 0) {
		errno = ENOTSUP;
		return -1;
	}
	int n = base_fmt(buf, size, "/proc/self/task/%d/%s", (int)named, file);
	if (n < 0 || (size_t)n >= size) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
