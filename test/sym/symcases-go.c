/*
 * symcases-go.c - a Go program's own function table (.gopclntab,
 * cli/symbol/gopcln.c), built here by hand in the runtime's layout (Go
 * 1.20's pcHeader and _func) so that every field is known: names, files
 * and lines at chosen addresses; then the same table cut at every length
 * and with bytes changed, which must give whole answers or none (run
 * under the sanitizers and memcheck, a read past the table is caught).
 * A real Go program's table is read by test/cli/record.t.
 */
#include "symtest.h"

#include <string.h>

#include "../../cli/symbol/symint.h"

#define TEXT UINT64_C(0x401000)

struct table {
	unsigned char b[512];
	size_t n;
};

static size_t put(struct table *t, const void *p, size_t n)
{
	CHECK(t->n + n <= sizeof t->b);
	memcpy(t->b + t->n, p, n);
	t->n += n;
	return t->n - n;
}

static size_t put32(struct table *t, uint32_t v)
{
	unsigned char b[4] = {v & 0xff, v >> 8 & 0xff, v >> 16 & 0xff, v >> 24};
	return put(t, b, 4);
}

static void set64(struct table *t, size_t at, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		t->b[at + i] = (unsigned char)(v >> (8 * i));
}

/* One _func: entry offset, name offset, pc-value tables, CU, start line. */
static void put_func(struct table *t, uint32_t entry, uint32_t name, uint32_t pcfile,
                     uint32_t pcln, uint32_t cu, uint32_t start)
{
	uint32_t f[] = {entry, name, 0, 0, 0, pcfile, pcln, 0, cu, start, 0};
	for (size_t i = 0; i < sizeof f / sizeof *f; i++)
		put32(t, f[i]);
}

/*
 * main.alpha at TEXT, 0x20 bytes, in /src/a.go: line 10 for 16 bytes,
 * then 12; main.beta at TEXT+0x20, 0x20 bytes, /src/b.go line 20.
 * pc-value steps are (zig-zagged value delta, pc delta) from -1.
 */
static void build(struct table *t)
{
	memset(t, 0, sizeof *t);
	static const unsigned char head[8] = {0xf1, 0xff, 0xff, 0xff, 0, 0, 1, 8};
	put(t, head, sizeof head);
	t->n = 72; /* nfunc, nfiles, textStart, five offsets: set below */
	set64(t, 8, 2);
	set64(t, 16, 2);
	set64(t, 24, TEXT);
	set64(t, 32, put(t, "main.alpha\0main.beta", 21));
	set64(t, 40, t->n);
	put32(t, 0);  /* cutab: CU 0's files, as offsets into filetab */
	put32(t, 10);
	set64(t, 48, put(t, "/src/a.go\0/src/b.go", 20));
	size_t pctab = t->n;
	set64(t, 56, pctab);
	static const unsigned char pc[] = {
		0,                   /* offset 0 means "no table" */
		22, 16, 4, 16, 0,    /* alpha's lines: 10 for 16 bytes, 12 for 16 */
		2, 32, 0,            /* alpha's file: 0 */
		42, 32, 0,           /* beta's line: 20 */
		4, 32, 0,            /* beta's file: 1 */
	};
	put(t, pc, sizeof pc);
	while (t->n % 4)
		t->n++;
	size_t functab = t->n;
	set64(t, 64, functab);
	put32(t, 0x00), put32(t, 24);
	put32(t, 0x20), put32(t, 24 + 44);
	put32(t, 0x40), put32(t, 0);
	put_func(t, 0x00, 0, 6, 1, 0, 9);
	put_func(t, 0x20, 11, 12, 9, 0, 19);
}

static void expect(const struct sym_gopcln *g, uint64_t pc, const char *name, const char *file,
                   long line, long decl)
{
	struct sym_frame f;
	int n = sym_gopcln_at(g, pc, &f);
	if (!name) {
		CHECK(n == 0);
		return;
	}
	CHECK(n == 1);
	CHECK(!strcmp(f.name, name) && !strcmp(f.system_name, name));
	CHECK(f.file && !strcmp(f.file, file));
	CHECK(f.line == line && f.decl_line == decl);
	sym_frames_free(&f, 1);
}

/* Every address the table could be asked, on a damaged copy: whatever
 * comes back is whole (a name, and a file only with it). */
static size_t ask_all(const struct sym_gopcln *g)
{
	size_t named = 0;
	for (uint64_t pc = TEXT - 2; pc < TEXT + 0x44; pc++) {
		struct sym_frame f;
		if (sym_gopcln_at(g, pc, &f)) {
			CHECK(f.name && f.system_name && strlen(f.name) > 0);
			named++;
			sym_frames_free(&f, 1);
		}
	}
	return named;
}

void sym_go_table(void)
{
	struct table t;
	build(&t);
	struct sym_gopcln *g = sym_gopcln_parse(t.b, t.n);
	CHECK(g);
	expect(g, TEXT, "main.alpha", "/src/a.go", 10, 9);
	expect(g, TEXT + 0x0f, "main.alpha", "/src/a.go", 10, 9);
	expect(g, TEXT + 0x10, "main.alpha", "/src/a.go", 12, 9);
	expect(g, TEXT + 0x1f, "main.alpha", "/src/a.go", 12, 9);
	expect(g, TEXT + 0x20, "main.beta", "/src/b.go", 20, 19);
	expect(g, TEXT + 0x3f, "main.beta", "/src/b.go", 20, 19);
	expect(g, TEXT - 1, NULL, NULL, 0, 0);
	expect(g, TEXT + 0x40, NULL, NULL, 0, 0);
	CHECK(ask_all(g) == 0x40);
	sym_gopcln_free(g);

	/* Go 1.18's header: no startLine in _func */
	t.b[0] = 0xf0;
	g = sym_gopcln_parse(t.b, t.n);
	CHECK(g);
	expect(g, TEXT + 0x20, "main.beta", "/src/b.go", 20, 0);
	sym_gopcln_free(g);
	t.b[0] = 0xf1;

	/* Go 1.16's header and other magics: not read */
	t.b[0] = 0xfa;
	CHECK(!sym_gopcln_parse(t.b, t.n));
	t.b[0] = 0xf1;
	t.b[7] = 4;
	CHECK(!sym_gopcln_parse(t.b, t.n));
	t.b[7] = 8;

	/* cut at every length, each copy exactly that long */
	size_t parsed = 0;
	for (size_t len = 0; len <= t.n; len++) {
		unsigned char *copy = malloc(len ? len : 1);
		CHECK(copy);
		memcpy(copy, t.b, len);
		if ((g = sym_gopcln_parse(copy, len))) {
			parsed++;
			ask_all(g);
			sym_gopcln_free(g);
		}
		free(copy);
	}
	CHECK(parsed > 0 && parsed < t.n);

	/* bytes changed, one to four at a time (a fixed sequence) */
	uint32_t seed = 12345;
	for (int round = 0; round < 20000; round++) {
		unsigned char *copy = malloc(t.n);
		CHECK(copy);
		memcpy(copy, t.b, t.n);
		for (int k = round % 4; k >= 0; k--) {
			seed = seed * 1103515245u + 12345u;
			size_t at = 8 + (seed >> 8) % (t.n - 8); /* the magic kept */
			seed = seed * 1103515245u + 12345u;
			copy[at] = (unsigned char)(seed >> 16);
		}
		if ((g = sym_gopcln_parse(copy, t.n))) {
			ask_all(g);
			sym_gopcln_free(g);
		}
		free(copy);
	}
}
