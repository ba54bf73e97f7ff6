/*
 * ringreach.c - the recording's directory, from a process that cannot see
 * it by its path.
 *
 * A process in a mount namespace or root of its own (bwrap's and
 * Flatpak's private /dev, whose /dev/shm is a new tmpfs; `unshare -m` with
 * its own /dev/shm; a chroot) finds no directory at PROFIL_RECORD_DIR, and
 * took the recording for over: a sandboxed program ran unprofiled.  Its
 * agent now asks the recorder for the directory (ringask_dir(), on the
 * recorder's abstract socket) and names it by the descriptor it is sent:
 * "/proc/self/task/<tid>/fd/<n>", the table of the thread that holds it
 * (the helper thread has a table of its own: sweeper.c), which every
 * thread of the process can open through.  Everything the agent does in
 * the directory (ring files, the recorder's lock, notes) goes through
 * that name.
 *
 * The descriptor is the program's to close: a daemon that closes every
 * descriptor at its start (close_range, closefrom) took it, and its next
 * look at the recorder's lock found nothing and stopped sampling.  And a
 * forked child, or a process whose holding thread ended, has no such
 * task.  So before each use the name is checked against the directory
 * (device and inode); failing that, the same number through the caller's
 * own tables is tried, then the recorder is asked again.
 */
#include "agent.h"
#include "../src/base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* Set at the start, and again by a check that asks again: the helper
 * thread's (agent_recorder_alive()) or a forked child's, each alone in
 * its process then but for a program thread's rare note in the directory
 * (agent_note_left()), whose one open a torn name would fail. */
static char reached_as[4096]; /* PROFIL_RECORD_DIR; "" while not reached */
static dev_t reached_dev;
static ino_t reached_ino;
static int reached_fd = -1;

/* Out of the program's way: high among the descriptors it may open, where
 * no dup2() onto a low number or shell redirection lands on it; below
 * 1024 all the same, as the kernel sizes a process's descriptor table by
 * its highest number (at a limit of 1,048,576, as containers set, the top
 * would cost the process 8 MiB of table). */
#define KEEP_BELOW 1024

static int keep_high(int fd)
{
	struct rlimit rl;
	long top = KEEP_BELOW;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)top)
		top = (long)rl.rlim_cur;
	int high = top > 64 ? fcntl(fd, F_DUPFD_CLOEXEC, (int)(top - 64)) : -1;
	if (high < 0)
		return fd;
	close(fd);
	return high;
}

/* Descriptor fd of the calling thread's table, named so that any thread
 * of the process can open through it: 0, or -1 if the name is too long. */
static int name_of(int fd, char *buf, size_t size)
{
	pid_t task = proc_task_number((pid_t)syscall(SYS_gettid));
	int n = task > 0 ? snprintf(buf, size, "/proc/self/task/%d/fd/%d", (int)task, fd)
	                 : snprintf(buf, size, "/proc/self/fd/%d", fd);
	return n > 0 && (size_t)n < size ? 0 : -1;
}

/* Whether path reaches the directory reached. */
static int is_reached(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_dev == reached_dev &&
	       st.st_ino == reached_ino;
}

/* The directory asked for and named in dir: 1, or -1 with errno. */
static int ask(char *dir, size_t size)
{
	int fd = ringask_dir(reached_as);
	if (fd < 0)
		return -1;
	fd = keep_high(fd);
	struct stat st;
	char path[64];
	if (fstat(fd, &st) != 0 || name_of(fd, path, sizeof path) != 0 ||
	    strlen(path) >= size) {
		close(fd);
		errno = ENAMETOOLONG;
		return -1;
	}
	reached_dev = st.st_dev, reached_ino = st.st_ino, reached_fd = fd;
	if (!is_reached(path)) {
		close(fd); /* no /proc here (a bare chroot) */
		reached_fd = -1;
		errno = ENOENT;
		return -1;
	}
	strcpy(dir, path);
	return 1;
}

int ringreach_start(char *dir, size_t size)
{
	struct stat st;
	if (reached_as[0]) /* reached before: ringreach_check() asks again */
		return 0;
	if (stat(dir, &st) == 0 || errno != ENOENT || strlen(dir) >= sizeof reached_as)
		return 0; /* seen here, or not for want of a name */
	strcpy(reached_as, dir);
	if (ask(dir, size) == 1)
		return 1;
	int e = errno;
	reached_as[0] = '\0'; /* checks have nothing to do */
	errno = e;
	/* no recorder bound (an abstract name gives no ENOENT): the
	 * recording is over, as before; no token: none of ours to ask */
	return e == ECONNREFUSED || e == EACCES ? 0 : -1;
}

void ringreach_check(char *dir, size_t size)
{
	if (!reached_as[0] || is_reached(dir))
		return;
	char path[64];
	if (reached_fd >= 0 && name_of(reached_fd, path, sizeof path) == 0 &&
	    strlen(path) < size && is_reached(path)) {
		strcpy(dir, path); /* a forked child's own copy, or another thread's */
		return;
	}
	(void)ask(dir, size); /* the program closed it: the recorder again */
}
