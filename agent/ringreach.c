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
 *
 * A sandbox with a network namespace of its own too (`unshare -mn`,
 * bwrap --unshare-all, firejail --net=none) cannot reach the abstract
 * socket, which belongs to the network namespace.  So a process about to
 * change namespaces through the C library (unshare(), setns(), clone()
 * with a namespace flag: the hook in process/credwrap.c, clonewrap.c),
 * or to mount() or chroot() (bubblewrap's child, made by a raw clone
 * system call, mounts before its pivot_root: nshold.c), first holds the
 * directory by a descriptor (O_PATH, close-on-exec, kept high), and a
 * process that holds one passes it on at each exec (the flag cleared;
 * its number, device and inode in PROFIL_RECORD_DIRFD: envfix.c), which
 * the new image's agent checks and holds in turn: every
 * descendant of a namespace change has it, and reaches the directory
 * through it where the path no longer does.  A child made by
 * posix_spawn(), which inherits none, or one that closed it before its
 * exec (Python's subprocess does), opens it again through its parent's
 * /proc directory.  Only there: a descriptor of ours is one more the
 * program sees, and test suites that list their own descriptors fail
 * (CPython's test_pass_fds_redirected did, when every process held one).
 */
#include "agent.h"
#include "../src/base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* PROFIL_RECORD_DIR, "" while not reached: set at the start, kept
 * (base_keep(): never changed once published, so no reader sees a torn
 * name), and reset to "" if the start fails. */
static const char *_Atomic reached_as = "";
static dev_t reached_dev;
static ino_t reached_ino;
static int reached_fd = -1;

/* The directory held by its path (before a namespace change), or as the
 * image before us passed it: for execs to pass on.  Set by the program's
 * thread that changes namespaces, or at the start; read by exec hooks,
 * vfork children's too (which change only their own descriptor table). */
static dev_t held_dev;
static ino_t held_ino;
static int held_fd = -1;

int agent_keep_high(int fd)
{
	struct rlimit rl;
	long top = AGENT_KEEP_BELOW;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)top)
		top = (long)rl.rlim_cur;
	int high = top > 64 ? fcntl(fd, F_DUPFD_CLOEXEC, (int)(top - 64)) : -1;
	if (high < 0)
		return fd;
	close(fd);
	return high;
}

/* Descriptor fd named so that any thread of the process can open through
 * it: in the main thread's table (the process's, which outlives the
 * helper thread's own: sweeper.c empties that one at its first sweep),
 * or with own, in the calling thread's (a descriptor the helper got after
 * that).  0, or -1 if the name is too long. */
static int name_of(int fd, int own, char *buf, size_t size)
{
	pid_t task = proc_task_number(own ? (pid_t)syscall(SYS_gettid) : getpid());
	int n = task > 0 ? base_fmt(buf, size, "/proc/self/task/%d/fd/%d", (int)task, fd)
	                 : base_fmt(buf, size, "/proc/self/fd/%d", fd);
	return n > 0 && (size_t)n < size ? 0 : -1;
}

/* Whether path reaches the directory reached.  Not once it is removed
 * (no links: the recording is over), which a descriptor still reaches. */
static int is_reached(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_nlink > 0 &&
	       st.st_dev == reached_dev && st.st_ino == reached_ino;
}

/* Names reached_fd in dir, the main thread's table first, if a name
 * reaches the directory: 1; 0 if none does (no /proc here, a bare chroot;
 * or the descriptor is gone). */
static int name_reached(char *dir, size_t size)
{
	char path[64];
	for (int own = 0; own < 2; own++)
		if (name_of(reached_fd, own, path, sizeof path) == 0 && strlen(path) < size &&
		    is_reached(path)) {
			strcpy(dir, path);
			return 1;
		}
	return 0;
}

/* The directory reached by descriptor fd (a directory: checked by the
 * caller), named in dir: 1, or -1 with errno ENOENT; fd is closed on
 * failure unless keep. */
static int reach_by(int fd, int keep, char *dir, size_t size)
{
	struct stat st;
	if (fstat(fd, &st) == 0) {
		reached_dev = st.st_dev, reached_ino = st.st_ino, reached_fd = fd;
		if (name_reached(dir, size))
			return 1;
	}
	if (!keep)
		close(fd);
	reached_fd = -1;
	errno = ENOENT;
	return -1;
}

/* The directory asked for and named in dir: 1, or -1 with errno. */
static int ask(char *dir, size_t size)
{
	int fd = ringask_dir(atomic_load(&reached_as));
	return fd < 0 ? -1 : reach_by(agent_keep_high(fd), 0, dir, size);
}

/* Whether descriptor fd is the directory dev:ino, not removed. */
static int is_dir(int fd, dev_t dev, ino_t ino)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && st.st_nlink > 0 &&
	       st.st_dev == dev && st.st_ino == ino;
}

static int from_parent(int fd, dev_t dev, ino_t ino);

/* "n:dev:ino" (RINGREACH_ENV's value) into its parts: 0, or -1 when v is
 * not one. */
static int parse_passed(const char *v, int *fd, dev_t *dev, ino_t *ino)
{
	char *end;
	long n = v ? base_strtoll(v, &end, 10) : -1;
	if (!v || n < 0 || n > 65535 || *end != ':')
		return -1;
	*dev = (dev_t)base_strtoull(end + 1, &end, 10);
	if (*end != ':')
		return -1;
	*ino = (ino_t)base_strtoull(end + 1, &end, 10);
	if (*end)
		return -1;
	*fd = (int)n;
	return 0;
}

/* "n:dev:ino" (RINGREACH_ENV): descriptor n, passed by an exec, or the
 * parent's descriptor n where it was not (a posix_spawn()ed child, or one
 * that closed it), opened again through the parent's /proc directory. */
static int take_passed(const char *v)
{
	int n;
	dev_t dev;
	ino_t ino;
	if (parse_passed(v, &n, &dev, &ino) != 0)
		return -1;
	if (is_dir((int)n, dev, ino)) {
		(void)fcntl((int)n, F_SETFD, FD_CLOEXEC); /* ours again, as held */
		return (int)n;
	}
	return from_parent((int)n, dev, ino);
}

/* The directory by descriptor fd: held (above); fd is closed when it
 * cannot be kept high (a low RLIMIT_NOFILE: the program's low numbers
 * are not ours to take). */
static void hold(int fd)
{
	struct stat st;
	int high = fd;
	if (fstat(fd, &st) != 0 || ((high = agent_keep_high(fd)) == fd && fd < AGENT_KEEP_BELOW - 64)) {
		close(high);
		return;
	}
	held_dev = st.st_dev, held_ino = st.st_ino;
	held_fd = high;
}

void ringreach_hold(const char *dir)
{
	if (held_fd >= 0 || atomic_load(&reached_as)[0])
		return;
	int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		hold(fd);
}

int ringreach_start(char *dir, size_t size)
{
	if (atomic_load(&reached_as)[0]) /* reached before: ringreach_check() asks again */
		return 0;
	int passed = held_fd < 0 ? take_passed(profil_getenv(RINGREACH_ENV)) : -1;
	if (passed >= 0) /* a descendant of a namespace change */
		hold(passed);
	struct stat st;
	const char *kept;
	if (stat(dir, &st) == 0 || errno != ENOENT || !(kept = base_keep(dir, PATH_MAX)))
		return 0; /* seen here, or not for want of a name */
	atomic_store(&reached_as, kept);
	int held = is_dir(held_fd, held_dev, held_ino);
	if ((held && reach_by(held_fd, 1, dir, size) == 1) || (!held && ask(dir, size) == 1))
		return 1;
	/* held but not named (no /proc here): the recorder, even if it
	 * answered, sends what cannot be named either */
	int e = held ? ENOENT : errno;
	atomic_store(&reached_as, ""); /* checks have nothing to do */
	errno = e;
	/* no recorder bound (an abstract name gives no ENOENT): the
	 * recording is over, as before; no token: none of ours to ask */
	return e == ECONNREFUSED || e == EACCES ? 0 : -1;
}

void ringreach_check(char *dir, size_t size)
{
	if (!atomic_load(&reached_as)[0] || is_reached(dir))
		return;
	if (reached_fd >= 0 && name_reached(dir, size))
		return; /* a forked child's own copy, or another thread's */
	(void)ask(dir, size); /* the program closed it: the recorder again */
}

/*
 * The descriptor was closed here: a child that closes every descriptor
 * before its exec (Python's subprocess does, by default, in a vfork
 * child; daemons do).  Its parent, stopped in vfork() or still running,
 * has it yet: opened again through the parent's /proc directory, at the
 * lowest free number (the new image's agent moves it high).  The new
 * descriptor, or -1.
 */
static int from_parent(int fd, dev_t dev, ino_t ino)
{
	char path[64];
	if (base_fmt(path, sizeof path, "/proc/%d/fd/%d", (int)getppid(), fd) >= (int)sizeof path)
		return -1;
	int got = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (got >= 0 && !is_dir(got, dev, ino)) {
		close(got);
		got = -1;
	}
	return got;
}

/*
 * An exec's hook (envfix.c), maybe in a vfork child: the descriptor held
 * goes to the new image (close-on-exec cleared) and value says which, for
 * RINGREACH_ENV: 0.  -1 when there is nothing to pass (none held, or it
 * no longer reaches the directory).  spawn: for posix_spawn()'s
 * child, which inherits nothing of ours (the flag stays), and opens the
 * descriptor through our /proc directory, this process being its parent.
 */
/* The descriptor an exec passes on: the one the directory was reached by,
 * else the one held; -1 when there is none.  *dev, *ino: its directory. */
static int to_pass(dev_t *dev, ino_t *ino)
{
	*dev = atomic_load(&reached_as)[0] ? reached_dev : held_dev;
	*ino = atomic_load(&reached_as)[0] ? reached_ino : held_ino;
	return atomic_load(&reached_as)[0] ? reached_fd : held_fd;
}

int ringreach_exec_pass(char *value, size_t size, int spawn)
{
	dev_t dev;
	ino_t ino;
	int fd = to_pass(&dev, &ino);
	if (fd < 0)
		return -1;
	if (!is_dir(fd, dev, ino) && (spawn || (fd = from_parent(fd, dev, ino)) < 0))
		return -1;
	int n = base_fmt(value, size, "%d:%llu:%llu", fd, (unsigned long long)dev,
	                 (unsigned long long)ino);
	if (n <= 0 || (size_t)n >= size)
		return -1;
	return spawn || fcntl(fd, F_SETFD, 0) == 0 ? 0 : -1;
}

/* The number envp's RINGREACH_ENV entry names, if it is the directory
 * dev:ino; -1. */
static int passed_in(char *const envp[], dev_t dev, ino_t ino)
{
	static const char name[] = RINGREACH_ENV "=";
	for (size_t i = 0; envp && envp[i]; i++) {
		int n;
		dev_t d;
		ino_t o;
		if (strncmp(envp[i], name, sizeof name - 1) == 0)
			return parse_passed(envp[i] + sizeof name - 1, &n, &d, &o) == 0 && d == dev &&
			       o == ino && is_dir(n, dev, ino) ? n : -1;
	}
	return -1;
}

/* Nothing is written above (a vfork child shares our memory): whichever
 * descriptor may have been passed is made close-on-exec again, which it
 * was before if it was not; one opened for this exec (from_parent(): the
 * process had closed its own) is closed.  It was left open, without
 * close-on-exec, by every exec that failed: Python's subprocess tries
 * each directory of PATH with an execve() of its own, so a program it
 * ran in a sandbox had one such descriptor per directory before its own. */
void ringreach_exec_failed(char *const envp[])
{
	dev_t dev;
	ino_t ino;
	int fd = to_pass(&dev, &ino);
	int passed = passed_in(envp, dev, ino);
	if (passed >= 0 && passed != fd)
		close(passed);
	if (is_dir(fd, dev, ino))
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC); /* ours: not a number the program reused */
}
