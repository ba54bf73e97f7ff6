/*
 * modkeep.c - each module's file held open while the command runs, for
 * the symbolizer at the end when the path no longer reaches it.
 *
 * Modules are symbolized after the command ends, by the paths they were
 * recorded with, as seen from here.  Three common cases lost their
 * symbols that way: a program removed before the end (a test suite's
 * temporary binaries), one rebuilt over
 * while the command went on (make's targets), and one in a root of its
 * own (a chroot, a bubblewrap sandbox, a container), whose path here
 * names another file or nothing.  So the first time a build-id is seen
 * (a load in the module log), its file is opened while the process is
 * likely alive: through /proc/PID/map_files (the very file mapped, even
 * removed or a memfd; it needs CAP_SYS_ADMIN, so only as root), else the
 * process's root (/proc/PID/root/PATH), else the path as we see it.  At
 * the end a
 * descriptor whose file is still the one at its path is closed unused;
 * the others go to the symbolizer as /proc/self/fd/N (sym_options.files),
 * tried after the path and checked by build-id like any file.
 *
 * A held descriptor keeps its file's mount busy: a command that runs a
 * program from a file system it mounted and then unmounts it (a loop
 * image, a test's tmpfs) would get EBUSY.  So a file is held only on a
 * mount that is busy anyway: ours ("/", the working directory, the
 * rings' directory) or its process's root, which nothing unmounts under
 * the process, or a memfd's, the kernel's own; on any other mount it is
 * closed at once (and a removed program there goes without symbols, as
 * before).
 *
 * Cost: an open, an fstat and a statx or two per distinct build-id (a
 * Python run maps about sixty: 0.2 ms), a stat each at the end; a module
 * without a build-id is not held (nothing would tell its file from
 * another).  At most KEEP_MAX descriptors, and never more than a quarter
 * of RLIMIT_NOFILE.
 */
#include "record_int.h"
#include "../model/profile.h"
#include "../symbol/symbolize.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define KEEP_MAX 512

struct kept {
	char build_id[65];
	char *path;     /* as recorded, " (deleted)" taken off */
	int fd;         /* -1: seen, but not held */
	dev_t dev;
	ino_t ino;
	char name[32];  /* /proc/self/fd/N, for the symbolizer */
};

static struct kept *kept;
static size_t nkept, capkept, nheld;
static size_t held_max = (size_t)-1; /* set at the first use */
static uint64_t busy_mounts[3];      /* ours: "/", ".", the rings' directory */
static size_t nbusy;

/* The id of the mount path (relative to dirfd; "" with AT_EMPTY_PATH: of
 * dirfd itself) is on: 1, or 0 when the kernel does not say (before
 * 5.8). */
static int mount_id(int dirfd, const char *path, int flags, uint64_t *id)
{
	struct statx stx;
	if (statx(dirfd, path, flags, STATX_MNT_ID, &stx) != 0 || !(stx.stx_mask & STATX_MNT_ID))
		return 0;
	*id = stx.stx_mnt_id;
	return 1;
}

static void note_busy(const char *dir)
{
	if (dir && nbusy < sizeof busy_mounts / sizeof *busy_mounts &&
	    mount_id(AT_FDCWD, dir, 0, &busy_mounts[nbusy]))
		nbusy++;
}

/* Whether fd is a memfd (a program run from memory: runc re-executes
 * itself so): its mount is the kernel's own, which nothing unmounts. */
static int is_memfd(int fd)
{
	char name[32], target[16];
	snprintf(name, sizeof name, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(name, target, sizeof target);
	return n >= 7 && memcmp(target, "/memfd:", 7) == 0;
}

/* Whether a descriptor of fd's file may be kept: its mount is one we keep
 * busy already, or pid's root mount, or no mount anyone can unmount. */
static int on_busy_mount(int fd, uint32_t pid)
{
	uint64_t id, root;
	char name[64];
	if (is_memfd(fd))
		return 1;
	if (!mount_id(fd, "", AT_EMPTY_PATH, &id))
		return 0;
	for (size_t i = 0; i < nbusy; i++)
		if (busy_mounts[i] == id)
			return 1;
	snprintf(name, sizeof name, "/proc/%u/root", (unsigned)pid);
	return mount_id(AT_FDCWD, name, 0, &root) && root == id;
}

static size_t limit_of_held(void)
{
	struct rlimit rl;
	size_t max = KEEP_MAX;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 4 < max)
		max = (size_t)(rl.rlim_cur / 4);
	return max;
}

/* kept[] by build-id (model/index.h).  Every forked child logs again
 * every module it inherited, so each load event is looked up: a walk of
 * kept[] for each made a process of 2,000 libraries that forked 250
 * children cost the record process 2.5 CPU s (strcmp 60% of it). */
static struct prof_index seen_index;

static uint64_t id_hash_at(const void *ctx, size_t i)
{
	(void)ctx;
	return prof_hash_str(kept[i].build_id);
}

/* The slot of build_id: its entry's, or the empty one it would take. */
static uint32_t *seen_slot(const char *build_id)
{
	size_t at = prof_index_first(&seen_index, prof_hash_str(build_id));
	while (seen_index.slots[at] && strcmp(kept[seen_index.slots[at] - 1].build_id, build_id) != 0)
		at = prof_index_next(&seen_index, at);
	return &seen_index.slots[at];
}

static int seen(const char *build_id)
{
	return seen_index.cap && *seen_slot(build_id) != 0;
}

static char *bare(const char *path)
{
	char *p = prof_xstrdup(path);
	p[prof_path_bare_len(p)] = '\0';
	return p;
}

/* A descriptor of the file mapped at an address in [start, end) of pid:
 * the first of its /proc/PID/map_files entries there (they are named
 * "lo-hi" by each mapping's range), or -1. */
static int open_mapped(uint32_t pid, uint64_t start, uint64_t end)
{
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%u/map_files", (unsigned)pid);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	int fd = -1;
	struct dirent *de;
	while (fd < 0 && (de = readdir(d)) != NULL) {
		unsigned long long lo, hi;
		if (sscanf(de->d_name, "%llx-%llx", &lo, &hi) == 2 && lo >= start && hi <= end)
			fd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC);
	}
	closedir(d);
	return fd;
}

/* The file e maps, opened the best way there is while pid may live: the
 * exact mapping's entry in /proc/PID/map_files (as root: it needs
 * CAP_SYS_ADMIN), the path in the process's root, the path here, and as
 * root, for a file no path reaches any more (removed, a memfd program),
 * any of its mappings' entries. */
static int open_module(uint32_t pid, const struct module_event *e, const char *path)
{
	char name[4096 + 64];
	int fd = -1, root = geteuid() == 0;
	/* the module's code ends where its segment does; its mapping, at the
	 * next page */
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE), end = (e->end + page - 1) & ~(page - 1);
	if (root) {
		snprintf(name, sizeof name, "/proc/%u/map_files/%llx-%llx", (unsigned)pid,
		         (unsigned long long)e->start, (unsigned long long)end);
		fd = open(name, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0 && snprintf(name, sizeof name, "/proc/%u/root%s", (unsigned)pid, path) <
	                      (int)sizeof name)
		fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && root)
		fd = open_mapped(pid, e->start, end);
	return fd;
}

static void keep(uint32_t pid, const struct module_event *e, const char *set_dir)
{
	if (held_max == (size_t)-1) {
		held_max = limit_of_held();
		note_busy("/");
		note_busy(".");
		note_busy(set_dir);
	}
	prof_index_reserve(&seen_index, nkept, 256, id_hash_at, NULL);
	kept = prof_xgrow(kept, nkept, &capkept, 16, sizeof *kept);
	struct kept *k = &kept[nkept];
	memset(k, 0, sizeof *k);
	strcpy(k->build_id, e->build_id);
	*seen_slot(k->build_id) = ++nkept;
	k->path = bare(e->path);
	k->fd = nheld < held_max ? open_module(pid, e, k->path) : -1;
	struct stat st;
	if (k->fd >= 0 && (fstat(k->fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	                   !on_busy_mount(k->fd, pid))) {
		close(k->fd);
		k->fd = -1;
	}
	if (k->fd < 0)
		return;
	k->dev = st.st_dev, k->ino = st.st_ino;
	snprintf(k->name, sizeof k->name, "/proc/self/fd/%d", k->fd);
	nheld++;
}

void modkeep_poll(struct images *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct image *im = &set->v[i];
		for (; im->mods_kept < im->nmods; im->mods_kept++) {
			const struct module_event *e = &im->mods[im->mods_kept];
			if (e->load && e->build_id[0] && e->path[0] == '/' && !seen(e->build_id))
				keep(im->pid, e, set->dir);
		}
	}
}

size_t modkeep_files(struct sym_file **out)
{
	struct sym_file *files = prof_xcalloc(nkept ? nkept : 1, sizeof *files);
	size_t n = 0;
	for (size_t i = 0; i < nkept; i++) {
		struct kept *k = &kept[i];
		struct stat st;
		if (k->fd < 0)
			continue;
		if (stat(k->path, &st) == 0 && st.st_dev == k->dev && st.st_ino == k->ino) {
			close(k->fd); /* the path reaches it: nothing to add */
			k->fd = -1;
			continue;
		}
		files[n].build_id = k->build_id;
		files[n].path = k->name;
		n++;
	}
	*out = files;
	return n;
}

void modkeep_free(void)
{
	for (size_t i = 0; i < nkept; i++) {
		if (kept[i].fd >= 0)
			close(kept[i].fd);
		free(kept[i].path);
	}
	free(kept);
	prof_index_free(&seen_index);
	kept = NULL;
	nkept = capkept = nheld = 0;
}
