/*
 * selfreach.c - the agent's own file, for a program exec'd where the path
 * it was loaded by names nothing (a chroot, a mount namespace that hides
 * it).
 *
 * A child is followed because LD_PRELOAD names this library (envfix.c).
 * After a chroot (`chroot /srv/root make`, a build's schroot) that path
 * is looked up in the new root: the loader found nothing there and
 * printed "ERROR: ld.so: object ... cannot be preloaded" on the standard
 * error of every program exec'd inside, which a configure script takes
 * for a compiler's complaint, and nothing inside was sampled.
 *
 * So a process about to change what it sees (chroot(), mount(), a
 * namespace change: nshold.c, where ringreach.c holds the recording's
 * directory) also holds this file by a descriptor (close-on-exec, kept
 * high), and an exec where the path no longer finds a file preloads the
 * agent as /proc/self/fd/N instead: the loader opens that through the
 * descriptor, whose flag the exec hook clears (selfreach_item()).  The
 * new image's agent, loaded by such a name, holds that descriptor in
 * turn (close-on-exec again) and passes it on the same way.  A child
 * that does not inherit it (posix_spawn(), or one that closed its
 * descriptors before the exec: Python's subprocess) is given its
 * parent's /proc/PID/fd/N, which its agent opens for its own at load.
 * Where neither the path nor /proc reaches the file (a bare chroot), the
 * agent is left out of LD_PRELOAD: the program runs unsampled and
 * unchanged, and `profil record`'s closing warning counts its CPU time.
 *
 * What is written here (held_fd, held_dev, held_ino) is written at load
 * and by nshold.c's hook, which may run in a vfork or raw clone child
 * sharing its parent's memory: a number there may name a descriptor the
 * reader does not have, so every use checks it (device and inode).  The
 * exec hook itself writes only into its caller's buffer.
 */
#include "agent.h"
#include "procfd.h"
#include "../src/base/base.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* The name the loader gave us, "" if unknown: kept (base_keep()), set
 * once by the constructor. */
static const char *loaded_as = "";
static int adopted;          /* loaded_as is a /proc name of a descriptor */
static int held_fd = -1;
static int creds_changed;    /* the path may not open for us any more */
static dev_t held_dev;
static ino_t held_ino;

/* Whether descriptor fd is the file dev:ino. */
static int is_file(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == dev &&
	       st.st_ino == ino;
}

/* Whether path is the file dev:ino. */
static int path_is(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == dev && st.st_ino == ino;
}

static void hold(int fd)
{
	struct stat st;
	if (fd < 0)
		return;
	int high = agent_keep_high(fd);
	if (fstat(high, &st) != 0 || (high == fd && fd < AGENT_KEEP_BELOW - 64)) {
		close(high);
		return;
	}
	fd = high;
	held_dev = st.st_dev, held_ino = st.st_ino;
	held_fd = fd;
}

/* At load: the name the loader gave us, and if it is a descriptor's, that
 * file held (ours, or the parent's opened for us). */
__attribute__((constructor(101))) static void selfreach_load(void)
{
	static int done;
	if (done++)
		return; /* a constructor, and asked for by another before it */
	Dl_info info;
	const char *kept;
	if (!dladdr((void *)selfreach_load, &info) || !info.dli_fname ||
	    !(kept = base_keep(info.dli_fname, PATH_MAX)))
		return;
	loaded_as = kept;
	long pid;
	int n;
	if (!procfd_parse(loaded_as, &pid, &n))
		return;
	adopted = 1;
	if (pid == 0 || pid == (long)getpid()) {
		/* passed by the exec: ours again, not the program's */
		if (fcntl(n, F_SETFD, FD_CLOEXEC) == 0)
			hold(n);
	} else {
		hold(open(loaded_as, O_RDONLY | O_CLOEXEC));
	}
}

const char *selfreach_loaded_as(void)
{
	selfreach_load();
	return loaded_as;
}

void selfreach_hold(void)
{
	if (held_fd >= 0 || adopted || !loaded_as[0])
		return;
	hold(open(loaded_as, O_RDONLY | O_CLOEXEC));
}

/* Whether any user may open path: each directory on the way searchable
 * by others, the file readable by them (group rights and ACLs are not
 * looked at: in doubt, no). */
static int open_to_all(const char *path)
{
	char prefix[PATH_MAX];
	struct stat st;
	size_t n = strlen(path);
	if (path[0] != '/' || n >= sizeof prefix)
		return 0;
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		if (stat(prefix, &st) != 0)
			return 0;
		if (!(st.st_mode & (path[i] ? S_IXOTH : S_IROTH)))
			return 0;
	}
	return 1;
}

void selfreach_creds_changing(void)
{
	/* most installs: the new user opens the path as well as we do, and
	 * the program is shown no descriptor of ours */
	if (adopted || creds_changed || !loaded_as[0] || open_to_all(loaded_as))
		return;
	selfreach_hold();
	creds_changed = 1;
}

/* The held file's name through /proc in buf: 1, or 0 if none reaches it
 * (nothing held, no /proc here: a bare chroot). */
static int held_name(char *buf, size_t size, int spawn)
{
	long pid = spawn ? (long)getpid() : 0;
	int fd = held_fd;
	if (!is_file(fd, held_dev, held_ino)) {
		if (fd < 0)
			return 0;
		pid = (long)getppid(); /* closed here before the exec: the parent's */
	}
	int n = pid ? base_fmt(buf, size, "/proc/%ld/fd/%d", pid, fd)
	            : base_fmt(buf, size, "/proc/self/fd/%d", fd);
	return n > 0 && (size_t)n < size && path_is(buf, held_dev, held_ino);
}

const char *selfreach_item(char *buf, size_t size, int spawn)
{
	/* nothing written: maybe a vfork child, and maybe an exec that is
	 * not made after all (the caller's buffer too small) */
	struct stat st;
	int by_path = !adopted && stat(loaded_as, &st) == 0;
	if (by_path && !creds_changed)
		return loaded_as; /* as always: the path reaches a file */
	/* After a change of credentials the path may stat as ours (the
	 * capabilities we still have) and not open after the exec. */
	if (held_name(buf, size, spawn))
		return buf;
	return by_path ? loaded_as : NULL;
}

int selfreach_pass(const char *item)
{
	char self[32];
	if (held_fd < 0 || base_fmt(self, sizeof self, "/proc/self/fd/%d", held_fd) <= 0 ||
	    strcmp(item, self) != 0)
		return 0; /* the path, or another process's descriptor: nothing to pass */
	return fcntl(held_fd, F_SETFD, 0);
}

void selfreach_exec_failed(void)
{
	if (is_file(held_fd, held_dev, held_ino))
		(void)fcntl(held_fd, F_SETFD, FD_CLOEXEC);
}
