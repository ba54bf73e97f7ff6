/*
 * cuindex.c - which compilation unit holds an address, without asking
 * libdw for its address ranges in every recording.
 *
 * Why: dwfl_module_addrdie() and dwfl_module_getsrc() find an address's
 * CU through dwarf_getaranges(), which the first time reads the header of
 * every CU the ranges name: 5.6 ms for libc6-dbg's libc (2,083 ranges),
 * 1.9 ms for pyenv's libpython, in every recording that has a sample
 * there (a third of `profil record`'s own CPU on a short C command).
 * A file's ranges never change, so the first recording keeps them, by
 * build-id, beside the decompressed debuginfo (zcache.c's directory), as
 * "<build-id>-<.debug_info size>.cus" (image.c's dwarf_key() says why the
 * size), and later ones read those few kilobytes instead.
 *
 * The answer is libdw's own: the same aranges, each with the offset of
 * its CU's DIE, sorted by address.  A file that does not check out
 * (size, order) is rebuilt, never trusted; with no cache directory or no
 * build-id, the ranges are taken from libdw each time, as before.
 *
 * File: "PRFCUS01", the count n (8 bytes), then n records of three
 * 8-byte words (low address, high address, DIE offset), host order.
 */
#include "symint.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "PRFCUS01"
#define MAX_RANGES (1u << 24)

struct sym_cus {
	size_t n;
	uint64_t (*r)[3]; /* lo, hi, DIE offset; by lo */
};

static int by_lo(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int well_formed(const struct sym_cus *c)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->r[i][0] >= c->r[i][1] || (i && c->r[i][0] < c->r[i - 1][0]))
			return 0;
	return 1;
}

static struct sym_cus *from_libdw(Dwarf *dbg)
{
	Dwarf_Aranges *ar;
	size_t n;
	if (dwarf_getaranges(dbg, &ar, &n) != 0 || n == 0 || n > MAX_RANGES)
		return NULL;
	struct sym_cus *c = calloc(1, sizeof *c);
	if (c)
		c->r = calloc(n, sizeof *c->r);
	if (!c || !c->r)
		sym_oom();
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr addr;
		Dwarf_Word len;
		Dwarf_Off off;
		Dwarf_Arange *a = dwarf_onearange(ar, i);
		if (a && dwarf_getarangeinfo(a, &addr, &len, &off) == 0 && len > 0 &&
		    addr + len > addr) {
			c->r[c->n][0] = addr;
			c->r[c->n][1] = addr + len;
			c->r[c->n++][2] = off;
		}
	}
	qsort(c->r, c->n, sizeof *c->r, by_lo);
	if (c->n == 0) {
		sym_cus_free(c);
		return NULL;
	}
	return c;
}

static struct sym_cus *from_file(const char *path)
{
	FILE *f = fopen(path, "rbe");
	if (!f)
		return NULL;
	char magic[8];
	uint64_t n;
	struct stat st;
	struct sym_cus *c = NULL;
	/* the count must match the file's size before it sizes anything */
	if (fstat(fileno(f), &st) == 0 && fread(magic, 8, 1, f) == 1 &&
	    memcmp(magic, MAGIC, 8) == 0 && fread(&n, 8, 1, f) == 1 && n > 0 &&
	    n <= MAX_RANGES && (uint64_t)st.st_size == 16 + n * sizeof *c->r) {
		c = calloc(1, sizeof *c);
		c->r = c ? calloc((size_t)n, sizeof *c->r) : NULL;
		if (!c || !c->r)
			sym_oom();
		c->n = (size_t)n;
		if (fread(c->r, sizeof *c->r, c->n, f) != c->n || fgetc(f) != EOF ||
		    !well_formed(c)) {
			sym_cus_free(c);
			c = NULL;
		}
	}
	fclose(f);
	return c;
}

static void to_file(const struct sym_cus *c, const char *path)
{
	char tmp[4200];
	FILE *f = sym_keep_open(path, tmp, sizeof tmp);
	if (!f)
		return;
	uint64_t n = c->n;
	int ok = fwrite(MAGIC, 8, 1, f) == 1 && fwrite(&n, 8, 1, f) == 1 &&
	         fwrite(c->r, sizeof *c->r, c->n, f) == c->n;
	sym_keep_close(f, tmp, path, ok);
}

struct sym_cus *sym_cus_load(Dwarf *dbg, const char *build_id)
{
	const char *dir = sym_zcache_dir();
	char path[4096];
	int cached = dir && build_id && *build_id &&
	             snprintf(path, sizeof path, "%s/%s.cus", dir, build_id) < (int)sizeof path;
	struct sym_cus *c = cached ? from_file(path) : NULL;
	if (c)
		return c;
	c = from_libdw(dbg);
	if (c && cached && sym_zcache_make_dir() == 0)
		to_file(c, path);
	return c;
}

int sym_cus_find(const struct sym_cus *c, uint64_t addr, uint64_t *die_off, uint64_t span[2])
{
	size_t lo = 0, hi = c ? c->n : 0; /* first range starting above addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->r[mid][0] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the answer depends on the last range starting at or below addr,
	 * its end, and where the next one starts */
	if (lo < (c ? c->n : 0))
		sym_span_cut(span, addr, c->r[lo][0]);
	if (lo > 0)
		sym_span_cut(span, addr, c->r[lo - 1][0]), sym_span_cut(span, addr, c->r[lo - 1][1]);
	if (lo == 0 || addr >= c->r[lo - 1][1])
		return -1;
	*die_off = c->r[lo - 1][2];
	return 0;
}

void sym_cus_free(struct sym_cus *c)
{
	if (c)
		free(c->r);
	free(c);
}
