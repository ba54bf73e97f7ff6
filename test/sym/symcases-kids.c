/*
 * symcases-kids.c - a CU's DIE indexes kept by build-id
 * (cli/symbol/kidcache.c) against the symbolizer without them: at every
 * address around every line-table row of real modules (symcases-lines.c
 * gathers them), the inline chain is the same from a recording that
 * writes the files, from one that reads them and adds what it needed
 * more, and from one that only reads; what is read is the file; a
 * damaged, foreign or another libdw's file is rebuilt, never trusted.
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void sh(const char *cmd)
{
	CHECK(system(cmd) == 0);
}

/* The file layout kidcache.c writes (host order). */
struct kids_head {
	char magic[8], libdw[16];
	uint64_t nparents, nspans, ntop, has_top;
};

/* Calls fn on every kept file of every module in cache; their count. */
static size_t each_file(const char *cache, void (*fn)(const char *path, void *arg), void *arg)
{
	DIR *top = opendir(cache);
	CHECK(top != NULL);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(top))) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 5, ".kids") != 0)
			continue;
		char dir[1024];
		snprintf(dir, sizeof dir, "%s/%s", cache, e->d_name);
		DIR *d = opendir(dir);
		CHECK(d != NULL);
		struct dirent *f;
		while ((f = readdir(d)))
			if (f->d_name[0] != '.') {
				char path[2048];
				snprintf(path, sizeof path, "%s/%s", dir, f->d_name);
				fn(path, arg);
				n++;
			}
		closedir(d);
	}
	closedir(top);
	return n;
}

/* Sums sizes and inodes: a file rewritten (renamed into place) changes
 * its inode, one grown its size. */
struct census {
	long bytes;
	unsigned long inodes;
};

static void count(const char *path, void *arg)
{
	struct census *c = arg;
	struct stat st;
	CHECK(stat(path, &st) == 0);
	c->bytes += (long)st.st_size;
	c->inodes += (unsigned long)st.st_ino;
}

static struct census census_of(const char *cache)
{
	struct census c = {0, 0};
	each_file(cache, count, &c);
	return c;
}

/* Every kept child's range narrowed to its first byte: a reader that
 * uses the file finds no child at most addresses. */
static void narrow(const char *path, void *arg)
{
	(void)arg;
	FILE *f = fopen(path, "r+b");
	CHECK(f != NULL);
	struct kids_head h;
	CHECK(fread(&h, sizeof h, 1, f) == 1);
	long at = (long)(sizeof h + h.nparents * 32);
	for (uint64_t i = 0; i < h.nspans; i++, at += 32) {
		uint64_t lohi[2];
		CHECK(fseek(f, at, SEEK_SET) == 0 && fread(lohi, 8, 2, f) == 2);
		lohi[1] = lohi[0] + 1;
		CHECK(fseek(f, at, SEEK_SET) == 0 && fwrite(lohi, 8, 2, f) == 2);
	}
	CHECK(fclose(f) == 0);
}

/* The largest kept file, into arg (a path buffer of 2048). */
static void largest(const char *path, void *arg)
{
	char *best = arg;
	struct stat a, b;
	CHECK(stat(path, &a) == 0);
	if (!best[0] || (stat(best, &b) == 0 && a.st_size > b.st_size))
		snprintf(best, 2048, "%s", path);
}

/* What a cache left to the process's exit (sym_cache_leave()) wrote. */
static const char *leave_dir;
static struct census left;

static void leave(struct sym_cache *c)
{
	sym_cache_leave(c);
	left = census_of(leave_dir);
}

void sym_cu_kids_cache(void)
{
	sym_addrs_enable(0); /* these files, not the answers above them */
	struct module mods[KEPT_MODULES];
	size_t n = kept_modules(mods);
	char cache[256], cmd[2400], big[2048] = "";
	snprintf(cache, sizeof cache, "/tmp/symtest-kids-%d", (int)getpid());
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh(cmd);

	unsigned long asks = sym_scopes_libdw_asks();
	CHECK(kept_run_every(mods, n, NULL, NULL, 1) == 0); /* without them */
	asks = sym_scopes_libdw_asks() - asks;
	CHECK(kept_run_every(mods, n, cache, NULL, 2) == 0); /* writes half */
	struct census half = census_of(cache);
	CHECK(half.bytes > 0);
	/* reads, adds; what it added is written by sym_cache_leave(), which
	 * a caller leaving the cache to its exit calls, and only once */
	leave_dir = cache;
	CHECK(kept_run_ending(mods, n, cache, leave) == 0);
	struct census all = census_of(cache);
	CHECK(left.bytes > half.bytes);
	CHECK(all.bytes == left.bytes && all.inodes == left.inodes);
	/* only reads, and answers as many lookups without libdw as building
	 * them did (a kept index that misleads the descent is not wrong, only
	 * slow: scopes.c then asks libdw) */
	unsigned long before = sym_scopes_libdw_asks();
	CHECK(kept_run_every(mods, n, cache, NULL, 1) == 0);
	fprintf(stderr, "  libdw asked for %lu chains without the files, %lu with\n", asks,
	        sym_scopes_libdw_asks() - before);
	CHECK(sym_scopes_libdw_asks() - before == asks);
	struct census again = census_of(cache);
	CHECK(again.bytes == all.bytes && again.inodes == all.inodes); /* not rewritten */

	/* what later recordings read is the file */
	size_t files = each_file(cache, narrow, NULL);
	size_t differ = kept_run_every(mods, n, cache, "", 1);
	fprintf(stderr, "  %zu kept files; narrowed, %zu chains differ\n", files, differ);
	CHECK(differ > 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s/*.kids", cache);
	sh(cmd);
	CHECK(kept_run_every(mods, n, cache, NULL, 1) == 0);

	/* damaged, foreign or another libdw's: rebuilt whole, the same */
	each_file(cache, largest, big);
	CHECK(file_size(big, NULL) > 64);
	snprintf(cmd, sizeof cmd, "cp %s %s/good", big, cache);
	sh(cmd);
	const char *damage[] = {
		"truncate -s 60 %s", "truncate -s -1 %s",
		/* counts claiming gigabytes: parents, spans, top */
		"printf '\\377\\377\\377\\017' | dd of=%s bs=1 seek=24 conv=notrunc status=none",
		"printf '\\377\\377\\377\\017' | dd of=%s bs=1 seek=32 conv=notrunc status=none",
		"printf '\\377\\377\\377\\017' | dd of=%s bs=1 seek=40 conv=notrunc status=none",
		"printf '\\002' | dd of=%s bs=1 seek=48 conv=notrunc status=none", /* has_top */
		"printf '0.0' | dd of=%s bs=1 seek=8 conv=notrunc status=none",    /* libdw */
		"printf 'PRFLNS01' | dd of=%s conv=notrunc status=none",
		/* the first parent's first span: its hi below its lo */
		"printf '\\0\\0\\0\\0\\0\\0\\0\\0' | dd of=%s bs=1 seek=$((56 + 32 * "
		"$(od -An -tu8 -j24 -N8 %s) + 8)) conv=notrunc status=none",
		"printf 'something else entirely' > %s",
		"cp " SYM_BIN "/libsymlib.so %s"};
	for (size_t i = 0; i < sizeof damage / sizeof *damage; i++) {
		snprintf(cmd, sizeof cmd, damage[i], big, big);
		sh(cmd);
		CHECK(kept_run_every(mods, n, cache, NULL, 1) == 0);
		snprintf(cmd, sizeof cmd, "cmp -s %s %s/good", big, cache);
		sh(cmd); /* written again, as it was */
	}
	kept_modules_free(mods, n);
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh(cmd);
}
