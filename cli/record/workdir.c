/*
 * workdir.c - the directory a recording's rings live in while the command
 * runs, and the leftovers of recorders that died.
 *
 * The rings are files in a directory of their own under /dev/shm (memory,
 * not disk), else $TMPDIR, else /tmp (the first that takes it), removed
 * when the recording is written.
 * A recorder killed by SIGKILL cannot remove it, and its rings hold
 * memory until someone does (one of an earlier session's was still in
 * /dev/shm days later).  So each recorder holds an exclusive flock(2) on
 * ".lock" in its directory for its whole life (close-on-exec: the command
 * does not inherit it), and a new recorder removes every directory of
 * ours, of the same user, whose lock it can take: its owner has gone.
 * The lock file is locked before it gets its name (".lock.new" renamed),
 * so a directory being set up is never taken for an abandoned one.
 * What a command still running from a dead recorder writes next fails
 * there and is not recorded: there is no recorder to read it.
 *
 * A descendant the command left running can make a ring file in the
 * directory while its recorder removes it (a process it forks or
 * execs): the removal is repeated while new files appear, the lock
 * last, but one made after the last pass outlives it, with no lock to
 * tell whose it is (one such directory held 9 MB of /dev/shm).  So a
 * directory of ours with neither ".lock" nor ".lock.new" is abandoned
 * too once nothing has changed in it for an hour.
 */
#include "record_int.h"
#include "../model/profile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#define PREFIX "profil-record."

static int lock_fd = -1; /* held until we exit */

#define REMOVE_PASSES 3
#define LOCKLESS_AGE_S 3600

/* Unlinks what dir holds, ".lock" after the rest. */
static void empty_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int lock = 0;
	while (d && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (strcmp(de->d_name, ".lock") == 0)
			lock = 1;
		else
			unlinkat(dirfd(d), de->d_name, 0);
	}
	if (d && lock)
		unlinkat(dirfd(d), ".lock", 0);
	if (d)
		closedir(d);
}

void record_workdir_remove(const char *dir)
{
	for (int pass = 0; pass < REMOVE_PASSES; pass++) {
		empty_dir(dir);
		if (rmdir(dir) == 0 || errno != ENOTEMPTY)
			return;
	}
}

/* A directory with no lock file at all, unchanged for LOCKLESS_AGE_S. */
static int lockless_and_old(int basefd, const char *name, const struct stat *st)
{
	char lock[NAME_MAX + 16];
	struct stat ls;
	snprintf(lock, sizeof lock, "%s/.lock.new", name);
	return fstatat(basefd, lock, &ls, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT &&
	       st->st_mtime + LOCKLESS_AGE_S < time(NULL);
}

/* Whether base/name is a recorder's directory whose owner has gone. */
static int abandoned(int basefd, const char *name)
{
	struct stat st;
	if (fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) ||
	    st.st_uid != geteuid())
		return 0;
	char lock[NAME_MAX + 8];
	snprintf(lock, sizeof lock, "%s/.lock", name);
	int fd = openat(basefd, lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT && lockless_and_old(basefd, name, &st);
	int gone = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd);
	return gone;
}

static void sweep_abandoned(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *de;
	while (d && (de = readdir(d)) != NULL) {
		if (strncmp(de->d_name, PREFIX, strlen(PREFIX)) != 0 ||
		    !abandoned(dirfd(d), de->d_name))
			continue;
		char path[PATH_MAX];
		if (snprintf(path, sizeof path, "%s/%s", base, de->d_name) < (int)sizeof path)
			record_workdir_remove(path);
	}
	if (d)
		closedir(d);
}

/* dir/.lock, locked before it has its name.  Readable by all: agents
 * that run as another user (ringserve.c) test it too, to stop sampling
 * once we are gone; it holds nothing. */
static int take_lock(const char *dir)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -1;
	int fd = openat(dfd, ".lock.new", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0 && (fchmod(fd, 0644) != 0 || flock(fd, LOCK_EX) != 0 ||
	                renameat(dfd, ".lock.new", dfd, ".lock") != 0)) {
		int e = errno;
		close(fd);
		errno = e;
		fd = -1;
	}
	int e = errno;
	close(dfd);
	errno = e;
	return fd;
}

/* base/PREFIXXXXXXX, made and locked; NULL (errno set) if base will not
 * take it. */
static char *make_in(const char *base)
{
	char tmpl[PATH_MAX];
	if (snprintf(tmpl, sizeof tmpl, "%s/" PREFIX "XXXXXX", base) >= (int)sizeof tmpl) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	if (!mkdtemp(tmpl))
		return NULL;
	lock_fd = take_lock(tmpl);
	if (lock_fd < 0) {
		int e = errno;
		record_workdir_remove(tmpl);
		errno = e;
		return NULL;
	}
	sweep_abandoned(base);
	return prof_xstrdup(tmpl);
}

/* In /dev/shm (memory), else $TMPDIR, else /tmp: the first that takes
 * it, as a read-only or full /dev/shm (a container's) or a TMPDIR that
 * names nothing must not stop a recording /tmp can hold.  All refused:
 * NULL, and why, naming each, in err. */
char *record_workdir_make(char *err, size_t cap)
{
	const char *tmpdir = getenv("TMPDIR");
	const char *bases[] = {"/dev/shm", tmpdir && *tmpdir ? tmpdir : NULL, "/tmp"};
	size_t used = 0;
	err[0] = '\0';
	for (size_t i = 0; i < sizeof bases / sizeof bases[0]; i++) {
		if (!bases[i] || (i == 2 && tmpdir && strcmp(tmpdir, "/tmp") == 0))
			continue;
		char *dir = make_in(bases[i]);
		if (dir)
			return dir;
		int n = snprintf(err + used, cap - used, "%s%s: %s", used ? "; " : "", bases[i],
		                 strerror(errno));
		used = n > 0 && (size_t)n < cap - used ? used + (size_t)n : cap - 1;
	}
	return NULL;
}

ssize_t record_read_small(const char *path, int flags, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | flags);
	if (fd < 0 || size == 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}
