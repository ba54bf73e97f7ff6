/*
 * scan.c - finding the ring files in the recording's directory.
 *
 * `profil record` reads the rings every few tens of milliseconds while the
 * command runs; reading the directory each time (opendir, readdir: about
 * 50 us here) was a large part of its cost while idle.  A file created
 * in a directory changes the directory's mtime, so the directory is read
 * again only when its mtime moved since the last look, or is less than a
 * second old (the kernel stamps it with a coarse clock: a file created
 * just after a read can carry the same time), or when a ring file in it
 * was not ready to open yet, and at least once a second.
 */
#include "images.h"
#include "../model/profile.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#define SECOND 1000000000LL

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * SECOND + ts->tv_nsec;
}

/* Whether a read of the directory may find a ring file not opened yet. */
static int worth_reading(struct images *set, int64_t now)
{
	struct stat st;
	if (set->pending || now - set->scanned_ns >= SECOND || stat(set->dir, &st) != 0)
		return 1;
	int64_t mtime = ns_of(&st.st_mtim);
	int changed = mtime != set->dir_mtime_ns || now - mtime < SECOND;
	set->dir_mtime_ns = mtime;
	return changed;
}

static int known(const struct images *set, const char *file)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->v[i].file, file) == 0)
			return 1;
	return 0;
}

void images_scan(struct images *set)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (!worth_reading(set, ns_of(&ts)))
		return;
	DIR *d = opendir(set->dir);
	if (!d)
		return;
	set->scanned_ns = ns_of(&ts);
	set->pending = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".ring") != 0)
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", set->dir, de->d_name);
		if (known(set, path))
			continue;
		struct image im;
		memset(&im, 0, sizeof im);
		im.file = prof_xstrdup(path);
		if (!images_open(&im)) {
			free(im.file);
			set->pending++;
			continue;
		}
		set->v = prof_xrealloc(set->v, set->n + 1, sizeof *set->v);
		set->v[set->n++] = im;
	}
	closedir(d);
}
