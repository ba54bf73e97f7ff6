/*
 * procfd.c - the /proc files the sweeper reads every SWEEP_MS, held open
 * at high descriptor numbers instead of opened and closed each time.
 *
 * Why: a descriptor opened in the sweeper's thread takes the lowest free
 * number, and the program may be between closing one of its own (0, 1
 * or 2 included) and putting something back there with dup2(): CPython's
 * test_swap_std_fds_with_one_closed closes a standard descriptor, runs a
 * child, and dup2()s the saved one back.  When that dup2() landed while
 * our listing held the number, the kernel replaced our directory with the
 * program's file, and our closedir() then closed the program's standard
 * descriptor (EBADF in its next call).  Held open, moved above half of
 * RLIMIT_NOFILE at once, our descriptors are never a number the kernel
 * hands the program, and are opened once per process, not ten times a
 * second.
 *
 * The program may still close or replace one (closefrom(), dup2() onto
 * it).  Before each use the descriptor is checked to be the file opened
 * (device and inode): if it is not, the number is the program's now and
 * is left alone; a new one is opened.  A fork child inherits the parent's
 * descriptors, which name the parent's /proc/<pid>: the opener's pid is
 * kept, and a child closes its copy and opens its own.
 *
 * Called only by the sweeper, or with the engine lock held: one caller at
 * a time.  A stop closes them all (procfd_close_all(), after the sweeper
 * has been joined): a stopped library holds no descriptor.
 */
#include "engine/engine.h"

#include <fcntl.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* Lowest number we move a descriptor to: half the soft limit, at most
 * 16384 (a huge limit would make the kernel's table huge). */
static int high_floor(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > 32768)
		return 16384;
	return rl.rlim_cur / 2 > 3 ? (int)(rl.rlim_cur / 2) : 3;
}

/* Every procfd ever used, for procfd_close_all(); a handful of statics. */
static struct procfd *known[8];
static unsigned nknown;

static void remember(struct procfd *p)
{
	for (unsigned i = 0; i < nknown; i++)
		if (known[i] == p)
			return;
	if (nknown < sizeof known / sizeof *known)
		known[nknown++] = p;
}

/* Ours still: the file we opened, in this process. */
static int ours(const struct procfd *p)
{
	struct stat st;
	return p->fd >= 0 && p->pid == getpid() && fstat(p->fd, &st) == 0 &&
	       st.st_dev == p->dev && st.st_ino == p->ino;
}

void procfd_close_all(void)
{
	for (unsigned i = 0; i < nknown; i++) {
		if (ours(known[i]))
			close(known[i]->fd);
		known[i]->fd = -1;
	}
}

int procfd_get(struct procfd *p, const char *path, int flags)
{
	remember(p);
	pid_t pid = getpid();
	struct stat st;
	if (p->fd >= 0) {
		if (fstat(p->fd, &st) == 0 && st.st_dev == p->dev && st.st_ino == p->ino) {
			if (p->pid == pid)
				return p->fd;
			close(p->fd); /* our copy of the parent's, after fork */
		}
		p->fd = -1; /* else the number is the program's: not ours to close */
	}
	int fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int floor = high_floor();
	if (fd < floor) {
		int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
		if (high >= 0) {
			close(fd);
			fd = high;
		}
	}
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	*p = (struct procfd){fd, pid, st.st_dev, st.st_ino};
	return fd;
}

/* The kernel's record of getdents64 (no glibc declaration before 2.30). */
struct dirent64_raw {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

int procfd_each_name(struct procfd *dir, const char *path,
                     int (*fn)(const char *name, void *arg), void *arg)
{
	int fd = procfd_get(dir, path, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0)
		return -1;
	_Alignas(8) char buf[4096];
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		for (long off = 0; off < n;) {
			const struct dirent64_raw *d = (const void *)(buf + off);
			if (d->name[0] != '.' && fn(d->name, arg) != 0)
				return 1;
			off += d->reclen;
		}
	}
}
