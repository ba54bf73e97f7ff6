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
 *
 * A name read is looked up among the rings already open by a hash of
 * it: compared with every image in turn, a shell loop of 2,000 short
 * processes cost the recorder 0.14 s, 35% of it in those comparisons
 * (each read of the directory compared every name with every image).
 */
#include "images.h"
#include "../model/profile.h"

#include <dirent.h>
#include <stdint.h>
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

static size_t name_hash(const char *s)
{
	uint64_t h = 14695981039346656037ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return (size_t)h;
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void enter(struct images *set, size_t i)
{
	size_t mask = set->known_cap - 1, h = name_hash(base_of(set->v[i].file)) & mask;
	while (set->known[h])
		h = (h + 1) & mask;
	set->known[h] = i + 1;
}

/* Enters the images opened since the last call, the table kept at most
 * half full (rebuilt twice as large when it would not be). */
static void enter_new(struct images *set)
{
	if (!set->known_cap || 2 * set->n > set->known_cap) {
		size_t cap = set->known_cap ? set->known_cap : 64;
		while (2 * set->n > cap)
			cap *= 2;
		free(set->known);
		set->known = prof_xcalloc(cap, sizeof *set->known);
		set->known_cap = cap;
		set->known_n = 0;
	}
	for (; set->known_n < set->n; set->known_n++)
		enter(set, set->known_n);
}

/* Whether a ring file named name (in the directory) is open already. */
static int known(struct images *set, const char *name)
{
	enter_new(set);
	size_t mask = set->known_cap - 1;
	for (size_t h = name_hash(name) & mask; set->known[h]; h = (h + 1) & mask)
		if (strcmp(base_of(set->v[set->known[h] - 1].file), name) == 0)
			return 1;
	return 0;
}

void images_scan(struct images *set)
{
	struct timespec ts;
	nspid_drain(set); /* before the files whose pids it names are opened */
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
		if (known(set, de->d_name))
			continue;
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", set->dir, de->d_name);
		struct image im;
		memset(&im, 0, sizeof im);
		im.file = prof_xstrdup(path);
		if (!images_open(&im)) {
			free(im.file);
			set->pending++;
			continue;
		}
		if (im.rf || im.rfd) { /* its header seen complete: its datagram is queued */
			nspid_drain(set);
			nspid_apply(set, &im, de->d_name);
		}
		set->v = prof_xgrow(set->v, set->n, &set->cap, 64, sizeof *set->v);
		set->v[set->n++] = im;
	}
	closedir(d);
}
