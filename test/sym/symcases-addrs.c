/*
 * symcases-addrs.c - the answer per address kept by the image's DWARF key
 * (cli/symbol/addrkeep.c): for real modules (symcases-lines.c's), every
 * chain is the same from libdw, from the first recording (which writes
 * the files) and from later ones, which take every answer from the files
 * and rewrite nothing; what they show is what the file says; a damaged
 * file, one of another libdw or another build of profil is never
 * trusted and is rebuilt.
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static void sh(const char *cmd)
{
	CHECK(system(cmd) == 0);
}

/* The byte offset of the kept file's first frame: after the 96-byte
 * header and the 24-byte spans (their count at byte 72). */
static long first_frame(const char *path)
{
	uint64_t naddrs = 0;
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, &naddrs, 8, 72) == 8);
	close(fd);
	CHECK(naddrs > 0 && naddrs < 1000000);
	return 96 + (long)naddrs * 24;
}

/* The file is damaged by cmd (a format taking the path, then the
 * offset of the first frame); the chains stay libdw's; after `runs`
 * recordings the damaged file has been replaced, and the next recording
 * takes all its answers from the new one. */
static void damaged(struct module *mods, size_t n, size_t total, const char *cache,
                    const char *kept, const char *cmd, int runs)
{
	char what[2048];
	snprintf(what, sizeof what, cmd, kept, first_frame(kept));
	sh(what);
	snprintf(what, sizeof what, "cp %s %s/damaged", kept, cache);
	sh(what);
	for (int i = 0; i < runs; i++)
		CHECK(kept_run_every(mods, n, cache, NULL, 1) == 0);
	snprintf(what, sizeof what, "! cmp -s %s/damaged %s", cache, kept);
	sh(what);
	unsigned long hits = sym_addrs_hits();
	CHECK(kept_run_every(mods, n, cache, NULL, 1) == 0);
	CHECK(sym_addrs_hits() - hits == total);
}

/* One lookup in path's image, with the cache in dir: at an address none
 * of the runs asks (nothing names it), so that the kept answers are
 * written back with a new one without being asked themselves. */
static void one_new_answer(const char *path, const char *dir)
{
	struct sym_options opt = {.debug_cache = dir};
	struct sym_cache *c = sym_cache_new(&opt);
	struct sym_image *im = image_of(c, path);
	struct sym_frame f[SYM_MAX_FRAMES];
	size_t n = sym_image_lookup(im, UINT64_C(0x7ffffffff000), f, SYM_MAX_FRAMES);
	sym_frames_free(f, n);
	sym_cache_free(c);
}

void sym_addr_answers_kept(void)
{
	struct module mods[KEPT_MODULES];
	size_t n = kept_modules(mods), total = 0;
	char cache[256], cmd[2048], id[128], kept[600];
	snprintf(cache, sizeof cache, "/tmp/symtest-addrs-%d", (int)getpid());
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh(cmd);
	file_kept_key(mods[0].path, id, sizeof id); /* the file's name */
	char *path = sym_addrs_path(cache, id);
	snprintf(kept, sizeof kept, "%s", path);
	free(path);

	CHECK(kept_run_every(mods, n, NULL, NULL, 1) == 0); /* libdw's answers */
	for (size_t i = 0; i < n; i++)
		total += mods[i].n;
	unsigned long hits = sym_addrs_hits();
	CHECK(kept_run_every(mods, n, cache, NULL, 1) == 0); /* writes the files */
	CHECK(sym_addrs_hits() == hits);
	ino_t ino, ino2;
	long size = file_size(kept, &ino);
	CHECK(size > 96);
	hits = sym_addrs_hits();
	CHECK(kept_run_every(mods, n, cache, NULL, 1) == 0); /* reads them */
	fprintf(stderr, "  %zu addresses, %lu answered from the kept files\n", total,
	        sym_addrs_hits() - hits);
	CHECK(sym_addrs_hits() - hits == total);
	CHECK(file_size(kept, &ino2) == size && ino2 == ino); /* not rewritten */

	/* what later recordings show is the file's */
	snprintf(cmd, sizeof cmd, "sed -i 's,symprog\\.c,symprog\\.X,g' %s", kept);
	sh(cmd);
	CHECK(kept_run_every(mods, n, cache, "symprog.X", 1) > 0);
	snprintf(cmd, sizeof cmd, "rm -f %s", kept);
	sh(cmd);
	CHECK(kept_run_every(mods, n, cache, NULL, 1) == 0);
	CHECK(file_size(kept, NULL) == size);

	/* damaged, foreign, another libdw's or another profil's: not
	 * trusted, rebuilt (a header or an answer that does not check out, in
	 * the run that finds it; answers out of order are all dropped, and
	 * all are there again after the next run) */
	const struct {
		const char *cmd; /* a format of the path and the first frame's offset */
		int runs;
	} damage[] = {
		{"truncate -s 60 %s", 1},
		{"truncate -s -1 %s", 1},
		/* counts claiming gigabytes: addresses, frames, string bytes */
		{"printf '\\377\\377\\377\\017' | dd of=%s bs=1 seek=72 conv=notrunc status=none", 1},
		{"printf '\\377\\377\\377\\017' | dd of=%s bs=1 seek=80 conv=notrunc status=none", 1},
		{"printf '\\377\\377\\377\\017' | dd of=%s bs=1 seek=88 conv=notrunc status=none", 1},
		{"printf 'something else entirely' > %s", 1},
		{"printf 'xx' | dd of=%s bs=1 seek=8 conv=notrunc status=none", 1},  /* libdw's */
		{"printf 'xx' | dd of=%s bs=1 seek=24 conv=notrunc status=none", 1}, /* profil's */
		/* a name's offset past the strings */
		{"printf '\\377\\377\\377\\177' | dd of=%s bs=1 seek=%ld conv=notrunc status=none", 1},
		/* the first address made the highest: out of order */
		{"printf '\\377\\377\\377\\377\\377\\377\\377\\177' | "
		 "dd of=%s bs=1 seek=96 conv=notrunc status=none", 2},
	};
	for (size_t i = 0; i < sizeof damage / sizeof *damage; i++)
		damaged(mods, n, total, cache, kept, damage[i].cmd, damage[i].runs);

	/* an answer that does not check out, not asked for, is dropped when
	 * the others are written back with a new one, and asked again in the
	 * next run; after that every answer is the file's again */
	snprintf(cmd, sizeof cmd, "printf '\\377\\377\\377\\177' | dd of=%s bs=1 seek=%ld "
	         "conv=notrunc status=none", kept, first_frame(kept));
	sh(cmd);
	one_new_answer(mods[0].path, cache);
	hits = sym_addrs_hits();
	CHECK(kept_run_every(mods, n, cache, NULL, 1) == 0);
	CHECK(sym_addrs_hits() - hits < total);
	hits = sym_addrs_hits();
	CHECK(kept_run_every(mods, n, cache, NULL, 1) == 0);
	CHECK(sym_addrs_hits() - hits == total);
	kept_modules_free(mods, n);
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh(cmd);
}

/* Looks up every k-th address of m (from first) in the image of path,
 * the cache in dir; the chains must be libdw's. */
static void lookups(struct sym_cache *c, const struct module *m, const char *path, size_t first,
                    size_t k)
{
	struct sym_image *im = image_of(c, path);
	for (size_t i = first; i < m->n; i += k) {
		struct sym_frame f[SYM_MAX_FRAMES];
		size_t n = sym_image_lookup(im, m->addrs[i], f, SYM_MAX_FRAMES);
		CHECK(n > 0 || !strstr(m->want[i], "|"));
		sym_frames_free(f, n);
	}
}

/* Two images of one file in a recording (libc by its /usr/lib and its
 * /lib path), each with answers of its own: the file keeps both, not
 * the last one written. */
void sym_addr_answers_merged(void)
{
	struct module mods[KEPT_MODULES];
	kept_modules(mods);
	char cache[256], cmd[1024], link[300];
	snprintf(cache, sizeof cache, "/tmp/symtest-addrs2-%d", (int)getpid());
	snprintf(link, sizeof link, "%s/symprog-again", cache);
	snprintf(cmd, sizeof cmd, "rm -rf %s && mkdir -p %s && ln -s %s %s", cache, cache,
	         mods[0].path, link);
	sh(cmd);
	CHECK(kept_run_every(mods, 1, NULL, NULL, 1) == 0); /* symprog's addresses */
	struct sym_options opt = {.debug_cache = cache};
	struct sym_cache *c = sym_cache_new(&opt);
	lookups(c, &mods[0], mods[0].path, 0, 2); /* half by one path */
	lookups(c, &mods[0], link, 1, 2);         /* the rest by the other */
	sym_cache_free(c);
	unsigned long hits = sym_addrs_hits();
	CHECK(kept_run_every(mods, 1, cache, NULL, 1) == 0);
	fprintf(stderr, "  %zu addresses, %lu answered from the file\n", mods[0].n,
	        sym_addrs_hits() - hits);
	CHECK(sym_addrs_hits() - hits == mods[0].n);
	kept_modules_free(mods, 1);
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh(cmd);
}

/* The string bytes of the kept files in dir (their headers' counts). */
static uint64_t string_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	CHECK(d != NULL);
	uint64_t total = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char path[1024];
		uint64_t nbytes = 0;
		if (!strstr(e->d_name, ".addrs"))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		int fd = open(path, O_RDONLY);
		CHECK(fd >= 0 && pread(fd, &nbytes, 8, 88) == 8);
		close(fd);
		total += nbytes;
	}
	closedir(d);
	return total;
}

/* Answers added over two recordings (every other address, then the
 * rest) take their strings from the answers beside them, which mostly
 * have the same function and file: the files' strings grow by little
 * more than the answers' own, as when all were added at once (each new
 * answer's strings appended again had made them 1.4 times as many after
 * six recordings of a Python script). */
void sym_addr_answers_strings(void)
{
	struct module mods[KEPT_MODULES];
	size_t n = kept_modules(mods);
	char cache[256], cmd[1024], once[300], twice[300];
	snprintf(cache, sizeof cache, "/tmp/symtest-addrs3-%d", (int)getpid());
	snprintf(once, sizeof once, "%s/once", cache);
	snprintf(twice, sizeof twice, "%s/twice", cache);
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh(cmd);
	CHECK(kept_run_every(mods, n, NULL, NULL, 1) == 0); /* the addresses */
	struct sym_options all_at_once = {.debug_cache = once}, in_two = {.debug_cache = twice};
	struct sym_cache *c = sym_cache_new(&all_at_once);
	for (size_t i = 0; i < n; i++)
		lookups(c, &mods[i], mods[i].path, 0, 1);
	sym_cache_free(c);
	for (size_t half = 0; half < 2; half++) {
		c = sym_cache_new(&in_two);
		for (size_t i = 0; i < n; i++)
			lookups(c, &mods[i], mods[i].path, half, 2);
		sym_cache_free(c);
	}
	uint64_t all = string_bytes(once), halves = string_bytes(twice);
	fprintf(stderr, "  %llu string bytes added at once, %llu in two recordings\n",
	        (unsigned long long)all, (unsigned long long)halves);
	CHECK(all > 0 && halves <= all + all / 10);
	kept_modules_free(mods, n);
	sh(cmd);
}
