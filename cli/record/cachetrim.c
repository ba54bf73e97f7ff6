/*
 * cachetrim.c - the cache (cache.c) kept within a size: once its
 * directories hold more than PROFIL_CACHE_MAX mebibytes (default 1024),
 * the files used least recently go first.
 *
 * Why: every build of every program profiled leaves its unwind rows and
 * its DWARF indexes behind, a change of their format leaves the old files
 * too, and nothing else ever removed them.
 *
 * When: after a recording, only if a directory changed since the last
 * trim (its mtime is newer than the stamp file "<root>/.trimmed"), so a
 * recording that added nothing pays two stat() calls, and not within
 * TRIM_EVERY_S of the last trim: a listing of the cache stats every file
 * in it (2,900 files here: 6-8 ms, 10% of the recorder's CPU on a build,
 * whose every run adds an unwind table for a freshly built program), and
 * ten minutes of recordings add far less than the bound.  What goes: regular
 * files by oldest access time (relatime refreshes it at least daily when
 * a file is read), never one modified in the last minute (another
 * recording may be writing it under its temporary name).  A file another
 * recording has open or mapped stays readable until closed, and every
 * reader checks what it reads and rebuilds what is missing: removing any
 * of them costs time, never a result.
 */
#include "record_int.h"
#include "../model/profile.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#define DEFAULT_MAX_MIB 1024
#define RECENT_S 60
#define TRIM_EVERY_S 600

static const char *const subdirs[] = {"debuginfo", "unwind"};
#define NSUB (sizeof subdirs / sizeof subdirs[0])

struct entry {
	int dir;            /* index into subdirs */
	int is_dir;         /* a unit's directory: removed once empty */
	char *name;         /* relative to subdirs[dir] */
	time_t atime;
	off_t bytes;
};

struct listing {
	struct entry *v;
	size_t n, cap;
	unsigned long long total;
};

static unsigned long long max_bytes(void)
{
	const char *s = getenv("PROFIL_CACHE_MAX");
	char *end;
	unsigned long long mib = s && *s ? strtoull(s, &end, 10) : DEFAULT_MAX_MIB;
	if (s && *s && *end)
		mib = DEFAULT_MAX_MIB; /* not a number: the default */
	return mib << 20;
}

static void add(struct listing *l, int dir, const char *name, const struct stat *st,
                int is_dir)
{
	l->v = prof_xgrow(l->v, l->n, &l->cap, 256, sizeof *l->v);
	l->v[l->n++] = (struct entry){dir, is_dir, prof_xstrdup(name), st->st_atime,
	                              is_dir ? 0 : st->st_size};
}

/* The regular files of directory fd (path rel, relative to root's
 * subdirectory k) into l, their bytes into l->total; those modified in
 * the last RECENT_S are only counted.  A directory within
 * (the DWARF indexes keep a file per unit in "<key>.lines/") is listed
 * too, one level down. */
static void list_dir(int fd, int k, const char *rel, int depth, struct listing *l,
                     time_t now)
{
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	struct dirent *de;
	struct stat st;
	while ((de = readdir(d)) != NULL) {
		char name[4096];
		if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..")))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    snprintf(name, sizeof name, "%s%s%s", rel, *rel ? "/" : "", de->d_name) >=
		            (int)sizeof name)
			continue;
		if (S_ISDIR(st.st_mode) && depth == 0) {
			int sub = openat(dirfd(d), de->d_name,
			                 O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
			if (sub >= 0)
				list_dir(sub, k, name, 1, l, now);
			add(l, k, name, &st, 1);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		l->total += (unsigned long long)st.st_size;
		if (st.st_mtime <= now - RECENT_S) /* else counted, never removed */
			add(l, k, name, &st, 0);
	}
	closedir(d);
}

static void list(int rootfd, struct listing *l, time_t now)
{
	for (size_t k = 0; k < NSUB; k++) {
		int fd = openat(rootfd, subdirs[k], O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd >= 0)
			list_dir(fd, (int)k, "", 0, l, now);
	}
}

/* Files by oldest access first; directories after every file (they go
 * only once emptied). */
static int by_atime(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->is_dir != y->is_dir)
		return x->is_dir - y->is_dir;
	return (x->atime > y->atime) - (x->atime < y->atime);
}

/* Whether a subdirectory changed since the stamp was last touched, and
 * that was TRIM_EVERY_S ago or more. */
static int changed_since_trim(int rootfd, time_t now)
{
	struct stat stamp, st;
	if (fstatat(rootfd, ".trimmed", &stamp, 0) != 0)
		return 1;
	if (stamp.st_mtime <= now && now - stamp.st_mtime < TRIM_EVERY_S)
		return 0;
	for (size_t k = 0; k < NSUB; k++)
		if (fstatat(rootfd, subdirs[k], &st, 0) == 0 &&
		    (st.st_mtim.tv_sec > stamp.st_mtim.tv_sec ||
		     (st.st_mtim.tv_sec == stamp.st_mtim.tv_sec &&
		      st.st_mtim.tv_nsec >= stamp.st_mtim.tv_nsec)))
			return 1;
	return 0;
}

static void touch_stamp(int rootfd)
{
	int fd = openat(rootfd, ".trimmed", O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
}

static int remove_entry(int rootfd, const struct entry *e)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/%s", subdirs[e->dir], e->name);
	return unlinkat(rootfd, path, e->is_dir ? AT_REMOVEDIR : 0);
}

void record_cache_trim(const char *root)
{
	int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return;
	time_t now = time(NULL);
	if (!changed_since_trim(rootfd, now)) {
		close(rootfd);
		return;
	}
	struct listing l = {0};
	list(rootfd, &l, now);
	unsigned long long limit = max_bytes();
	if (l.total > limit)
		qsort(l.v, l.n, sizeof *l.v, by_atime);
	int removed = 0;
	for (size_t i = 0; i < l.n && l.total > limit && !l.v[i].is_dir; i++)
		if (remove_entry(rootfd, &l.v[i]) == 0) {
			l.total -= (unsigned long long)l.v[i].bytes;
			removed = 1;
		}
	for (size_t i = 0; i < l.n && removed; i++)
		if (l.v[i].is_dir)
			remove_entry(rootfd, &l.v[i]); /* fails unless we emptied it */
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i].name);
	free(l.v);
	/* a file still being written may be renamed in after this: the
	 * directory's mtime then moves past the stamp, and a recording after
	 * TRIM_EVERY_S looks again */
	touch_stamp(rootfd);
	close(rootfd);
}
