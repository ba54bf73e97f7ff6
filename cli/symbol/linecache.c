/*
 * linecache.c - a compilation unit's line answers and file table, kept
 * across recordings by build-id and CU.
 *
 * Why: libdw answers a line lookup (dwarf_getsrc_die), a file-table
 * entry (dwarf_getsrcfiles) and a function's DW_AT_decl_file only after
 * decoding and sorting the CU's whole line program, whatever one line is
 * wanted.  For pyenv's libpython with full DWARF that is 86 CUs and
 * 481,328 rows in a recording of a Python loop: 72 ms of the 150 ms that
 * `profil record` then spends symbolizing, in every recording.  A CU's
 * lines never change, so the first recording that needs a CU keeps what
 * libdw answered for it, beside the decompressed debuginfo and the CU
 * ranges (zcache.c's directory, cuindex.c), as
 * "<key>.lines/<CU offset in hex>" (key: build-id and .debug_info size,
 * image.c's dwarf_key()); later recordings map that and use it in place
 * (checked whole first: a few hundred KB for ceval.c).
 *
 * What is kept is libdw's own answer, not our reading of the rows: for
 * each distinct row address a, dwarf_getsrc_die() at a and at a + 1 (a
 * lookup depends only on which rows start at or below the address, so
 * the answer at a + 1 holds up to the next row), adjacent equal answers
 * merged into spans; and each file-table entry as dwarf_filesrc() names
 * it.  The file records libdw's version: another version's file is
 * rebuilt.  So is one that does not check out (sizes, order, indexes,
 * strings); with no cache directory, no build-id or a CU libdw cannot
 * decode, the caller asks libdw each time, as before.
 *
 * File (host order): "PRFLNS01", libdw's version (16 bytes, NUL
 * padded), then 8-byte counts: table entries, all names (the table's,
 * then names a line had that the table has not), spans, string bytes;
 * one 8-byte string offset per name (~0: none); spans of 16 bytes
 * (address, name index + 1 or 0 for "no line", line); the strings.
 */
#include "symint.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "PRFLNS01"
#define LIMIT (1ull << 28) /* of any count: a file claiming more is bad */
#define NO_NAME UINT64_MAX

struct span {
	uint64_t addr;
	uint32_t name;  /* index + 1 into names; 0: no line here */
	int32_t line;
};

struct head {
	char magic[8];
	char libdw[16];
	uint64_t ntable, nnames, nspans, nbytes;
};

/* A kept file is used where it is mapped (sym_keep_map); one built from
 * libdw owns its three arrays. */
struct sym_cu_lines {
	struct head h;
	const uint64_t *offs;     /* nnames; offsets into bytes, NO_NAME: none */
	const struct span *spans; /* nspans, by address */
	const char *bytes;        /* the strings, each NUL-terminated */
	void *map;                /* the file, or NULL: the arrays are ours */
	size_t maplen;
};

void sym_cu_lines_free(void *p)
{
	struct sym_cu_lines *l = p;
	if (!l)
		return;
	if (l->map) {
		munmap(l->map, l->maplen);
	} else {
		free((void *)l->offs);
		free((void *)l->spans);
		free((void *)l->bytes);
	}
	free(l);
}

/* Name idx (checked on loading: an offset into bytes, or none). */
static const char *name_at(const struct sym_cu_lines *l, uint64_t idx)
{
	return idx < l->h.nnames && l->offs[idx] != NO_NAME ? l->bytes + l->offs[idx] : NULL;
}

int sym_cu_lines_at(const struct sym_cu_lines *l, uint64_t addr, const char **file, int *line,
                    uint64_t span[2])
{
	size_t lo = 0, hi = l->h.nspans; /* first span starting above addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->spans[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0)
		sym_span_cut(span, addr, l->spans[lo - 1].addr);
	if (lo < l->h.nspans)
		sym_span_cut(span, addr, l->spans[lo].addr);
	const struct span *s = lo ? &l->spans[lo - 1] : NULL;
	const char *name = s && s->name ? name_at(l, s->name - 1) : NULL;
	if (!name)
		return 0;
	*file = name;
	*line = s->line;
	return 1;
}

const char *sym_cu_lines_file(const struct sym_cu_lines *l, uint64_t idx)
{
	return idx < l->h.ntable ? name_at(l, idx) : NULL;
}

/* Whether the arrays hold together: strings terminated, every offset in
 * the block, every span's name an index, spans in address order.  One
 * pass over a mapping of a few hundred KB: its pages come from the page
 * cache several at a fault. */
static int sane(const struct sym_cu_lines *l)
{
	if (l->h.nbytes && l->bytes[l->h.nbytes - 1] != '\0')
		return 0;
	for (uint64_t i = 0; i < l->h.nnames; i++)
		if (l->offs[i] != NO_NAME && l->offs[i] >= l->h.nbytes)
			return 0;
	for (uint64_t i = 0; i < l->h.nspans; i++)
		if (l->spans[i].name > l->h.nnames ||
		    (i && l->spans[i].addr <= l->spans[i - 1].addr))
			return 0;
	return 1;
}

static struct sym_cu_lines *from_file(const char *path)
{
	size_t len;
	char *m = sym_keep_map(path, sizeof(struct head), &len, 1);
	if (!m)
		return NULL;
	struct sym_cu_lines *l = prof_xcalloc(1, sizeof *l);
	char version[16];
	sym_libdw_version(version);
	memcpy(&l->h, m, sizeof l->h);
	l->map = m;
	l->maplen = len;
	int ok = memcmp(l->h.magic, MAGIC, 8) == 0 && memcmp(l->h.libdw, version, 16) == 0 &&
	         l->h.ntable <= l->h.nnames && l->h.nnames < LIMIT && l->h.nspans < LIMIT &&
	         l->h.nbytes < LIMIT;
	/* the counts must add up to the file's size before any is used */
	ok = ok && (uint64_t)len == sizeof l->h + l->h.nnames * sizeof *l->offs +
	                            l->h.nspans * sizeof *l->spans + l->h.nbytes;
	if (ok) {
		l->offs = (const uint64_t *)(m + sizeof l->h);
		l->spans = (const struct span *)(l->offs + l->h.nnames);
		l->bytes = (const char *)(l->spans + l->h.nspans);
		ok = sane(l);
	}
	if (!ok) {
		sym_cu_lines_free(l);
		return NULL;
	}
	return l;
}

static void to_file(const struct sym_cu_lines *l, const char *path)
{
	char tmp[4200];
	FILE *f = sym_keep_open(path, tmp, sizeof tmp);
	if (!f)
		return;
	int ok = fwrite(&l->h, sizeof l->h, 1, f) == 1 &&
	         fwrite(l->offs, sizeof *l->offs, l->h.nnames, f) == l->h.nnames &&
	         fwrite(l->spans, sizeof *l->spans, l->h.nspans, f) == l->h.nspans &&
	         fwrite(l->bytes, 1, l->h.nbytes, f) == l->h.nbytes;
	sym_keep_close(f, tmp, path, ok);
}

static struct sym_cu_lines *build(Dwarf_Die *cu);

/* The directory for one build-id's CUs, made when missing; 0 or -1. */
static int lines_dir(const char *build_id, char *dir, size_t size)
{
	const char *root = sym_zcache_dir();
	if (!root || !build_id || !*build_id ||
	    snprintf(dir, size, "%s/%s.lines", root, build_id) >= (int)size)
		return -1;
	return 0;
}

struct sym_cu_lines *sym_cu_lines_load(Dwarf_Die *cu, const char *build_id)
{
	char dir[4096], path[4200];
	if (lines_dir(build_id, dir, sizeof dir) != 0)
		return NULL; /* nowhere to keep them: libdw's own lookups */
	snprintf(path, sizeof path, "%s/%llx", dir, (unsigned long long)dwarf_dieoffset(cu));
	struct sym_cu_lines *l = from_file(path);
	if (l)
		return l;
	l = build(cu);
	if (l && sym_zcache_make_dir() == 0 && (mkdir(dir, 0700) == 0 || errno == EEXIST))
		to_file(l, path);
	return l;
}

/* A CU's answers as they are gathered from libdw. */
struct builder {
	Dwarf_Die *cu;
	const char **names;     /* libdw's pointers, then copied */
	size_t nnames, capnames;
	struct span *spans;
	size_t nspans, capspans;
	struct sym_map index;   /* libdw's name pointer -> index + 1 */
};

/* name as the next entry of the names: its index + 1. */
static uint32_t push_name(struct builder *b, const char *name)
{
	b->names = prof_xgrow(b->names, b->nnames, &b->capnames, 64, sizeof *b->names);
	b->names[b->nnames++] = name;
	return (uint32_t)b->nnames;
}

/* Index + 1 of libdw's name (added when new); 0 for none. */
static uint32_t name_of(struct builder *b, const char *name)
{
	if (!name)
		return 0;
	uintptr_t known = (uintptr_t)sym_map_get(&b->index, name);
	if (known)
		return (uint32_t)known;
	uint32_t idx = push_name(b, name);
	sym_map_put(&b->index, name, (void *)(uintptr_t)idx);
	return idx;
}

/* A span after the last, merged into it when the answer is the same. */
static void add_span(struct builder *b, uint64_t addr, const char *src, int line)
{
	struct span s = {addr, name_of(b, src), src ? line : 0};
	const struct span *last = b->nspans ? &b->spans[b->nspans - 1] : NULL;
	if (last ? last->name == s.name && last->line == s.line : !s.name)
		return;
	b->spans = prof_xgrow(b->spans, b->nspans, &b->capspans, 64, sizeof *b->spans);
	b->spans[b->nspans++] = s;
}

/* libdw's own answer at addr, as the lookup asks it. */
static void add_answer(struct builder *b, uint64_t addr)
{
	Dwarf_Line *dl = dwarf_getsrc_die(b->cu, addr);
	const char *src = dl ? dwarf_linesrc(dl, NULL, NULL) : NULL;
	int line = 0;
	if (src && dwarf_lineno(dl, &line) != 0)
		src = NULL;
	add_span(b, addr, src, line);
}

/* One row of the line table, as the lookup would read it. */
struct row {
	uint64_t addr;
	const char *src; /* NULL: no file or line */
	int line;
	int end;         /* DW_LNE_end_sequence */
	size_t order;    /* in libdw's table */
};

static int by_addr(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The table's rows sorted by address into a malloc'd *out; their count. */
static size_t read_rows(Dwarf_Lines *lines, size_t n, struct row **out)
{
	struct row *r = prof_xcalloc(n, sizeof *r);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		bool end;
		if (!l || dwarf_lineaddr(l, &addr) != 0 || dwarf_lineendsequence(l, &end) != 0)
			continue;
		r[m] = (struct row){addr, dwarf_linesrc(l, NULL, NULL), 0, end, i};
		if (r[m].src && dwarf_lineno(l, &r[m].line) != 0)
			r[m].src = NULL;
		m++;
	}
	size_t sorted = 1; /* libdw sorts its table: only check */
	while (sorted < m && r[sorted - 1].addr <= r[sorted].addr)
		sorted++;
	if (sorted < m)
		qsort(r, m, sizeof *r, by_addr);
	*out = r;
	return m;
}

/*
 * The spans of a sorted table.  Where one row alone starts at an address
 * and does not end a sequence, every way libdw has searched its table
 * (exact match, or the last row at or below) answers that row, from its
 * address up to the next row's: the row is the answer.  Where several
 * rows start at one address, or a sequence ends there, which of them an
 * address gets is libdw's choice: it is asked, at the address and just
 * past it.
 */
static void add_rows(struct builder *b, const struct row *r, size_t n)
{
	for (size_t i = 0, j; i < n; i = j) {
		int plain = !r[i].end;
		for (j = i + 1; j < n && r[j].addr == r[i].addr; j++)
			plain = 0;
		if (plain) {
			add_span(b, r[i].addr, r[i].src, r[i].line);
			continue;
		}
		add_answer(b, r[i].addr);
		if (r[i].addr + 1 != 0 && (j == n || r[i].addr + 1 < r[j].addr))
			add_answer(b, r[i].addr + 1);
	}
}

/* The names copied into one block, each table entry and span kept. */
static struct sym_cu_lines *finish(struct builder *b, size_t ntable)
{
	struct sym_cu_lines *l = prof_xcalloc(1, sizeof *l);
	memcpy(l->h.magic, MAGIC, 8);
	sym_libdw_version(l->h.libdw);
	l->h.ntable = ntable;
	l->h.nnames = b->nnames;
	l->h.nspans = b->nspans;
	for (size_t i = 0; i < b->nnames; i++)
		l->h.nbytes += b->names[i] ? strlen(b->names[i]) + 1 : 0;
	char *bytes = prof_xcalloc(l->h.nbytes ? l->h.nbytes : 1, 1);
	uint64_t *offs = prof_xcalloc(b->nnames ? b->nnames : 1, sizeof *offs);
	size_t at = 0;
	for (size_t i = 0; i < b->nnames; i++) {
		offs[i] = b->names[i] ? at : NO_NAME;
		if (b->names[i]) {
			strcpy(bytes + at, b->names[i]);
			at += strlen(b->names[i]) + 1;
		}
	}
	l->bytes = bytes;
	l->offs = offs;
	l->spans = b->spans;
	b->spans = NULL;
	return l;
}

static struct sym_cu_lines *build(Dwarf_Die *cu)
{
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t nlines, nfiles;
	if (dwarf_getsrclines(cu, &lines, &nlines) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || nlines >= LIMIT || nfiles >= LIMIT)
		return NULL;
	struct builder b = {.cu = cu};
	for (size_t i = 0; i < nfiles; i++) { /* entry i is name i, whatever */
		const char *name = dwarf_filesrc(files, i, NULL, NULL);
		if (!name || sym_map_get(&b.index, name))
			push_name(&b, name);
		else
			name_of(&b, name);
	}
	struct row *rows;
	size_t n = read_rows(lines, nlines, &rows);
	add_rows(&b, rows, n);
	free(rows);
	struct sym_cu_lines *l = finish(&b, nfiles);
	free(b.names);
	free(b.spans);
	sym_map_free(&b.index, NULL);
	return l;
}
