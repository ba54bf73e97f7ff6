/*
 * symcases-lines.c - a CU's line answers and file table kept by build-id
 * (cli/symbol/linecache.c) against libdw itself: for real modules (the
 * test program and libraries, our own library, libc with Debian's
 * separate debuginfo when installed), the inline chain with files and
 * lines at every address around every line-table row must be the same
 * from libdw, from the first recording (which writes the files) and from
 * later ones (which read them); the files are what later recordings
 * read, and a damaged or foreign one is rebuilt, never trusted.
 */
#include "symtest.h"
#include "../../cli/symbol/symint.h"

#include <dirent.h>
#include <string.h>
#include <unistd.h>

static void sh(const char *cmd)
{
	CHECK(system(cmd) == 0);
}

/* Every address around each row of each CU, at most MAX_ADDRS (every
 * stride-th row of a large module). */
static void collect(struct module *m, struct sym_image *im)
{
	Dwarf_Addr bias;
	Dwarf *dbg = dwfl_module_getdwarf(sym_image_module(im), &bias);
	CHECK(dbg != NULL);
	size_t rows = 0, k = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	for (int pass = 0; pass < 2; pass++, off = 0) {
		size_t stride = pass ? rows / (MAX_ADDRS / 3) + 1 : 1, seen = 0;
		while (dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die cu;
			Dwarf_Lines *lines;
			size_t nl;
			if (dwarf_offdie(dbg, off + hsize, &cu) &&
			    dwarf_getsrclines(&cu, &lines, &nl) == 0)
				for (size_t i = 0; i < nl; i++, seen++) {
					Dwarf_Addr a;
					if (!pass) {
						rows++;
					} else if (seen % stride == 0 && k + 3 <= MAX_ADDRS &&
					           dwarf_lineaddr(dwarf_onesrcline(lines, i), &a) == 0) {
						m->addrs[k++] = a + bias - 1;
						m->addrs[k++] = a + bias;
						m->addrs[k++] = a + bias + 1;
					}
				}
			off = next;
		}
	}
	m->n = k;
}

/* One address's chain as text. */
static char *chain(struct sym_image *im, uint64_t addr)
{
	struct sym_frame f[SYM_MAX_FRAMES];
	size_t n = sym_image_lookup(im, addr, f, SYM_MAX_FRAMES);
	char *out = NULL;
	size_t len = 0;
	FILE *s = open_memstream(&out, &len);
	CHECK(s != NULL);
	for (size_t i = 0; i < n; i++)
		fprintf(s, "%s|%s|%s|%lld|%lld;", f[i].name, f[i].system_name,
		        f[i].file ? f[i].file : "-", (long long)f[i].decl_line, (long long)f[i].line);
	fclose(s);
	sym_frames_free(f, n);
	return out;
}

/* Looks every address of every module up with the cache in dir (NULL:
 * none: libdw's own answers, kept as want); how many differed.  Only
 * every every-th address when every > 1 (never with dir NULL). */
static size_t kept_run(struct module *mods, size_t nmods, const char *dir, const char *bad,
                       size_t every, void (*at_end)(struct sym_cache *))
{
	struct sym_options opt = {.debug_cache = dir};
	struct sym_cache *c = sym_cache_new(&opt);
	size_t differ = 0;
	for (size_t i = 0; i < nmods; i++) {
		struct module *m = &mods[i];
		struct sym_image *im = image_of(c, m->path);
		if (!m->addrs) {
			m->addrs = calloc(MAX_ADDRS, sizeof *m->addrs);
			m->want = calloc(MAX_ADDRS, sizeof *m->want);
			CHECK(m->addrs && m->want);
			collect(m, im);
		}
		for (size_t k = 0; k < m->n; k += every) {
			char *got = chain(im, m->addrs[k]);
			if (!dir) {
				m->want[k] = got;
				continue;
			}
			if (strcmp(got, m->want[k]) != 0) {
				if (!bad || (*bad && !strstr(got, bad)))
					fprintf(stderr, "  %s %#llx:\n    libdw %s\n    kept  %s\n",
					        m->path, (unsigned long long)m->addrs[k], m->want[k], got);
				CHECK(bad && (!*bad || strstr(got, bad))); /* only what was altered */
				differ++;
			}
			free(got);
		}
	}
	if (at_end)
		at_end(c);
	sym_cache_free(c);
	return differ;
}

size_t kept_run_every(struct module *mods, size_t nmods, const char *dir, const char *bad,
                      size_t every)
{
	return kept_run(mods, nmods, dir, bad, every, NULL);
}

size_t kept_run_ending(struct module *mods, size_t nmods, const char *dir,
                       void (*at_end)(struct sym_cache *))
{
	return kept_run(mods, nmods, dir, NULL, 1, at_end);
}

static size_t run(struct module *mods, size_t nmods, const char *dir, const char *bad)
{
	return kept_run_every(mods, nmods, dir, bad, 1);
}

/* The modules both kept-cache cases look up, into mods: the test program
 * and libraries, our library, and libc when its debuginfo (libc6-dbg) is
 * installed (without it libc has no lines); their count. */
size_t kept_modules(struct module *mods)
{
	const char *paths[] = {SYM_BIN "/symprog", SYM_BIN "/libsymlib.so",
	                       SYM_BIN "/libsymcxx.so", SYM_BIN "/../../libprofil.so",
	                       "/lib/x86_64-linux-gnu/libc.so.6"};
	size_t n = sizeof paths / sizeof *paths;
	char id[128], dbg[300];
	memset(mods, 0, KEPT_MODULES * sizeof *mods);
	for (size_t i = 0; i < n; i++)
		mods[i].path = paths[i];
	file_build_id(paths[n - 1], id, sizeof id);
	snprintf(dbg, sizeof dbg, "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	return !id[0] || access(dbg, R_OK) != 0 ? n - 1 : n;
}

void kept_modules_free(struct module *mods, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < mods[i].n; k++)
			free(mods[i].want[k]);
		free(mods[i].want);
		free(mods[i].addrs);
	}
}

/* The first CU file of the test program's build-id, into path. */
static void first_kept(const char *cache, const char *id, char *path, size_t size)
{
	char dir[512];
	snprintf(dir, sizeof dir, "%s/%s.lines", cache, id);
	DIR *d = opendir(dir);
	CHECK(d != NULL);
	struct dirent *e;
	path[0] = '\0';
	while ((e = readdir(d)) && !path[0])
		if (e->d_name[0] != '.')
			snprintf(path, size, "%s/%s", dir, e->d_name);
	closedir(d);
	CHECK(path[0]);
}

void sym_cu_lines_cache(void)
{
	sym_addrs_enable(0); /* these files, not the answers above them */
	struct module mods[KEPT_MODULES];
	size_t n = kept_modules(mods);
	char cache[256], cmd[1024], id[128], kept[1024];
	snprintf(cache, sizeof cache, "/tmp/symtest-lines-%d", (int)getpid());
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh(cmd);
	file_kept_key(mods[0].path, id, sizeof id); /* the files' name */

	CHECK(run(mods, n, NULL, NULL) == 0);   /* libdw's answers */
	size_t total = 0;
	for (size_t i = 0; i < n; i++) {
		fprintf(stderr, "  %s: %zu addresses\n", mods[i].path, mods[i].n);
		CHECK(mods[i].n >= 9);
		total += mods[i].n;
	}
	CHECK(run(mods, n, cache, NULL) == 0);  /* writes the files */
	first_kept(cache, id, kept, sizeof kept);
	ino_t ino, ino2;
	long size = file_size(kept, &ino);
	CHECK(size > 64);
	CHECK(run(mods, n, cache, NULL) == 0);  /* reads them */
	CHECK(file_size(kept, &ino2) == size && ino2 == ino); /* not rewritten */

	/* what later recordings read is the file: a file name altered in it
	 * (same length) is what they show, and only there */
	snprintf(cmd, sizeof cmd, "sed -i 's,symprog\\.c,symprog\\.X,g' %s/%s.lines/*", cache, id);
	sh(cmd);
	CHECK(run(mods, n, cache, "symprog.X") > 0);
	snprintf(cmd, sizeof cmd, "rm -rf %s/%s.lines", cache, id);
	sh(cmd);
	CHECK(run(mods, n, cache, NULL) == 0);
	first_kept(cache, id, kept, sizeof kept);
	size = file_size(kept, NULL);

	/* damaged, foreign or another libdw's: rebuilt whole */
	const char *damage[] = {"truncate -s 60 %s", "truncate -s -1 %s",
	                        /* counts claiming gigabytes (names, spans) */
	                        "printf '\\377\\377\\377\\017' | dd of=%s bs=1 seek=32 conv=notrunc status=none",
	                        "printf '\\377\\377\\377\\017' | dd of=%s bs=1 seek=40 conv=notrunc status=none",
	                        "printf 'something else entirely' > %s",
	                        "printf 'PRFLNS01xx' | dd of=%s conv=notrunc status=none",
	                        "cp " SYM_BIN "/libsymlib.so %s"};
	for (size_t i = 0; i < sizeof damage / sizeof *damage; i++) {
		char what[900];
		snprintf(what, sizeof what, damage[i], kept);
		sh(what);
		CHECK(run(mods, n, cache, NULL) == 0);
		CHECK(file_size(kept, NULL) == size);
	}
	fprintf(stderr, "  %zu addresses, the same from libdw and from the kept files\n", total);
	kept_modules_free(mods, n);
	sh(cmd);
	snprintf(cmd, sizeof cmd, "rm -rf %s", cache);
	sh(cmd);
}
