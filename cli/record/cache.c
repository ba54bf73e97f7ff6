/*
 * cache.c - where `profil record` keeps what outlives one recording:
 *
 *   <root>/debuginfo  separate debuginfo, decompressed (cli/symbol/zcache.c)
 *   <root>/unwind     the agent's unwind rows per object (src/unwind/
 *                     unwind_cache.c), so a program is not parsed anew
 *                     on every run (libLLVM: a quarter of a second)
 *
 * <root> is $PROFIL_CACHE ("" turns caching off), else
 * $XDG_CACHE_HOME/profil, else ~/.cache/profil when the home directory
 * exists (HOME=/nonexistent, as daemons' accounts have it, made
 * /nonexistent/.cache/profil: no cache then).  Every file in it is
 * keyed by build-id, written whole under a temporary name and renamed,
 * and checked when read: the directory can be removed at any time, and
 * cachetrim.c keeps it within a size.
 */
#include "record_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* mkdir -p, the last components private (0700): a cache of the user's
 * own programs' debuginfo is nobody else's business. */
static int make_dirs(char *path)
{
	for (char *s = path + 1;; s++) {
		char c = *s;
		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		int rc = mkdir(path, 0700);
		*s = c;
		if (rc != 0 && errno != EEXIST)
			return -1;
		if (c == '\0')
			return 0;
	}
}

static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* <root>/sub ("" for <root> itself) into buf: its length, or -1. */
static int cache_path(const char *sub, char *buf, size_t size)
{
	const char *root = getenv("PROFIL_CACHE");
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	const char *sep = *sub ? "/" : "";
	int n;
	if (root)
		n = *root ? snprintf(buf, size, "%s%s%s", root, sep, sub) : -1;
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/profil%s%s", xdg, sep, sub);
	else if (home && home[0] == '/' && is_dir(home)) /* a missing home is not made */
		n = snprintf(buf, size, "%s/.cache/profil%s%s", home, sep, sub);
	else
		n = -1;
	return n <= 0 || (size_t)n >= size || buf[0] != '/' ? -1 : n;
}

const char *record_cache_dir(const char *sub, char *buf, size_t size)
{
	if (cache_path(sub, buf, size) < 0 || make_dirs(buf) != 0)
		return NULL;
	return buf;
}

const char *record_cache_root(char *buf, size_t size)
{
	if (cache_path("", buf, size) < 0 || !is_dir(buf))
		return NULL;
	return buf;
}
