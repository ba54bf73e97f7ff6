/*
 * mkprofile.c - writes the fixture profiles the cases of test/cli/ *.t files
 * read, built with the model's API, so the reports' numbers are known:
 *
 *   basic.pprof    1000 samples at 100 Hz (10 ms each) in two processes:
 *                  self hot 610, warm 200, inl 100 (inlined into hot),
 *                  sqrt 90 (libm.so.6); cum main 1000, hot 710, warm 290;
 *                  pid 100 ("prog": threads 100 "prog" 700, 101 "worker"
 *                  290), pid 200 ("child": 10); lost 3
 *   prog.c         the source basic.pprof's functions point at
 *   unsym.pprof    no symbols: frames are module+0xoffset
 *   longname.pprof a function named in 300 characters beside a short one
 *   nofile.pprof   self.pprof with no source file known for hot_spot
 *   self.pprof     samples at real addresses of this program (hot_spot
 *                  900, main 100), for gmon/gprof and disassembly
 *   hostile files  truncated.pprof, random.bin, notgzip.txt, gzjunk.gz,
 *                  hugevarint.pprof, bomb.gz (8 MiB of zeros), badindex.pprof,
 *                  badloc.pprof, empty.pprof, deep.pprof (100000 frames)
 *   inject.pprof, inject.c, big.pprof (--big DIR): mkprofile-html.c
 *
 * mkprofile --exit-writing FILE opens FILE as the command's writers do
 * (cli/format/out.h), writes to it and exits(1) before committing, as
 * prof_oom() does in the middle of a streamed profile: no FILE.tmp-*
 * may be left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "format/out.h"
#include "format/pb.h"
#include "format/pprof.h"
#include "model/profile.h"

static const char *dir;

static char *at(const char *name)
{
	static char buf[4096];
	snprintf(buf, sizeof buf, "%s/%s", dir, name);
	return buf;
}

static void put(const char *name, const void *data, size_t n)
{
	FILE *f = fopen(at(name), "wb");
	if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
		perror(name);
		exit(1);
	}
}

static void put_gz(const char *name, const void *data, size_t n)
{
	gzFile g = gzopen(at(name), "wb");
	if (!g || (n && gzwrite(g, data, (unsigned)n) != (int)n) || gzclose(g) != Z_OK) {
		perror(name);
		exit(1);
	}
}

static uint64_t loc(struct profile *p, uint64_t map, uint64_t addr, uint64_t fn, int64_t line)
{
	uint64_t id = prof_intern_location(p, map, addr);
	struct prof_line l = {fn, line};
	prof_set_lines(p, id, &l, 1);
	return id;
}

static void basic(void)
{
	struct profile *p = prof_new();
	p->period_ns = 10000000;
	p->time_ns = 1700000000000000000;
	p->duration_ns = 5000000000;
	p->lost = 3;
	prof_set_string(&p->command, "prog --fast");
	prof_set_string(&p->engine, "test-engine");
	prof_add_process(p, 100, 1, "prog --fast");
	prof_add_process(p, 200, 100, "child x");
	struct prof_mapping m = {0x1000, 0x9000, 0x1000, "/usr/bin/prog", "abc123", 100, 1, 1};
	uint64_t exe = prof_add_mapping(p, &m);
	m = (struct prof_mapping){0x7000000, 0x7100000, 0, "/usr/lib/libm.so.6", "", 100, 1, 0};
	uint64_t lib = prof_add_mapping(p, &m);
	m = (struct prof_mapping){0x1000, 0x9000, 0x1000, "/usr/bin/prog", "abc123", 200, 1, 1};
	uint64_t exe2 = prof_add_mapping(p, &m);
	uint64_t fmain = prof_intern_function(p, "main", NULL, "prog.c", 3);
	uint64_t fhot = prof_intern_function(p, "hot", NULL, "prog.c", 10);
	uint64_t fwarm = prof_intern_function(p, "warm", NULL, "prog.c", 20);
	uint64_t finl = prof_intern_function(p, "inl", NULL, "prog.c", 30);
	uint64_t fsqrt = prof_intern_function(p, "sqrt", NULL, "", 0);
	uint64_t lmain = loc(p, exe, 0x1100, fmain, 5), lhot = loc(p, exe, 0x1200, fhot, 12);
	uint64_t lwarm = loc(p, exe, 0x1300, fwarm, 22), lsqrt = loc(p, lib, 0x7000100, fsqrt, 0);
	uint64_t linl = prof_intern_location(p, exe, 0x1210);
	struct prof_line chain[2] = {{finl, 32}, {fhot, 13}};
	prof_set_lines(p, linl, chain, 2);
	uint64_t cmain = loc(p, exe2, 0x1100, fmain, 5), chot = loc(p, exe2, 0x1200, fhot, 12);
	prof_add_sample(p, (uint64_t[]){lhot, lmain}, 2, 600, 100, 100, "prog", "prog");
	prof_add_sample(p, (uint64_t[]){linl, lmain}, 2, 100, 100, 100, "prog", "prog");
	prof_add_sample(p, (uint64_t[]){lwarm, lmain}, 2, 150, 100, 101, "worker", "prog");
	prof_add_sample(p, (uint64_t[]){lwarm, lmain}, 2, 50, 100, 101, "worker", "prog"); /* merges */
	prof_add_sample(p, (uint64_t[]){lsqrt, lwarm, lmain}, 3, 90, 100, 101, "worker", "prog");
	prof_add_sample(p, (uint64_t[]){chot, cmain}, 2, 10, 200, 200, "child", "child");
	prof_add_comment(p, "a comment, kept");
	if (pprof_write(p, at("basic.pprof")) != 0)
		exit(1);
	prof_free(p);
	FILE *f = fopen(at("prog.c"), "w");
	for (int i = 1; i <= 40; i++)
		fprintf(f, "/* line %d */\n", i);
	fclose(f);
}

static void unsym(void)
{
	struct profile *p = prof_new();
	p->period_ns = 1000000;
	struct prof_mapping m = {0x400000, 0x500000, 0, "/opt/x/bin/tool", "", 7, 0, 0};
	uint64_t exe = prof_add_mapping(p, &m);
	uint64_t a = prof_intern_location(p, exe, 0x401234), b = prof_intern_location(p, 0, 0xdead);
	prof_add_sample(p, (uint64_t[]){a}, 1, 30, 7, 7, "tool", "tool");
	prof_add_sample(p, (uint64_t[]){b, a}, 2, 10, 7, 7, "tool", "tool");
	if (pprof_write(p, at("unsym.pprof")) != 0)
		exit(1);
	prof_free(p);
}

/* A C++-like name of 300 characters beside a short one (test/cli/report.t). */
static void longname(void)
{
	struct profile *p = prof_new();
	p->period_ns = 1000000;
	struct prof_mapping m = {0x400000, 0x500000, 0, "/opt/x/bin/tool", "", 7, 1, 0};
	uint64_t exe = prof_add_mapping(p, &m);
	char name[301];
	memset(name, 'n', 300);
	memcpy(name, "ns::", 4);
	name[300] = '\0';
	uint64_t flong = prof_intern_function(p, name, NULL, "", 0);
	uint64_t fshort = prof_intern_function(p, "short_one", NULL, "", 0);
	uint64_t a = loc(p, exe, 0x401000, flong, 0), b = loc(p, exe, 0x402000, fshort, 0);
	prof_add_sample(p, (uint64_t[]){a}, 1, 30, 7, 7, "tool", "tool");
	prof_add_sample(p, (uint64_t[]){b}, 1, 10, 7, 7, "tool", "tool");
	if (pprof_write(p, at("longname.pprof")) != 0)
		exit(1);
	prof_free(p);
}

/* Work for gprof and objdump to find: a real function of this program. */
__attribute__((noinline)) unsigned long hot_spot(unsigned long n);
__attribute__((noinline)) unsigned long hot_spot(unsigned long n)
{
	volatile unsigned long acc = 0;
	for (unsigned long i = 0; i < n; i++)
		acc += i * i;
	return acc;
}

/* The mapping of /proc/self/maps that holds addr. */
static void self_mapping(uint64_t addr, struct prof_mapping *m, char *path, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	unsigned long long lo, hi, off;
	while (f && fgets(line, sizeof line, f)) {
		int pos = 0;
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &lo, &hi, &off, &pos) >= 3 &&
		    addr >= lo && addr < hi) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, len, "%s", line + pos);
			*m = (struct prof_mapping){lo, hi, off, path, "", (uint32_t)getpid(), 1, 1};
			fclose(f);
			return;
		}
	}
	fprintf(stderr, "mkprofile: no mapping for %llx\n", (unsigned long long)addr);
	exit(1);
}

int main(int argc, char **argv);

/* heap.pprof: sound, but of memory, as Go's heap profiles are (sample
 * types alloc_objects/count and alloc_space/bytes, the period in
 * space/bytes): not a CPU profile. */
static void heap_profile(struct pbuf *b, struct pbuf *m)
{
	struct pbuf line = {0};
	static const uint64_t types[][2] = {{1, 2}, {3, 4}};
	pb_reset(b);
	for (size_t i = 0; i < 2; i++) {
		pb_reset(m);
		pb_uint(m, 1, types[i][0]);
		pb_uint(m, 2, types[i][1]);
		pb_message(b, 1, m);
	}
	pb_reset(m); /* sample {location_id: [1], value: [3, 1536]} */
	pb_packed(m, 1, (uint64_t[]){1}, 1);
	pb_packed(m, 2, (uint64_t[]){3, 1536}, 2);
	pb_message(b, 2, m);
	pb_reset(m); /* location {id: 1, line {function_id: 1}} */
	pb_uint(m, 1, 1);
	pb_uint(&line, 1, 1);
	pb_message(m, 4, &line);
	pb_message(b, 4, m);
	pb_reset(m); /* function {id: 1, name: "grow"} */
	pb_uint(m, 1, 1);
	pb_uint(m, 2, 6);
	pb_message(b, 5, m);
	for (const char *const *str = (const char *const[]){"", "alloc_objects", "count",
	     "alloc_space", "bytes", "space", "grow", NULL}; *str; str++)
		pb_str(b, 6, *str);
	pb_reset(m); /* period_type {type: "space", unit: "bytes"}, period 524288 */
	pb_uint(m, 1, 5);
	pb_uint(m, 2, 4);
	pb_message(b, 11, m);
	pb_uint(b, 12, 524288);
	put_gz("heap.pprof", b->p, b->n);
	pb_free(&line);
}

/* hot_spot's source file is src ("" for none known). */
static void self(const char *src, const char *name)
{
	struct profile *p = prof_new();
	struct prof_mapping m;
	char path[4096];
	p->period_ns = 10000000;
	prof_add_process(p, (uint32_t)getpid(), 1, "mkprofile");
	self_mapping((uint64_t)(uintptr_t)hot_spot, &m, path, sizeof path);
	uint64_t exe = prof_add_mapping(p, &m);
	uint64_t fhot = prof_intern_function(p, "hot_spot", NULL, src, 1);
	uint64_t fmain = prof_intern_function(p, "main", NULL, "/nonexistent/main.c", 1);
	uint64_t lhot = loc(p, exe, (uint64_t)(uintptr_t)hot_spot + 4, fhot, 5);
	uint64_t lmain = loc(p, exe, (uint64_t)(uintptr_t)main + 4, fmain, 3);
	prof_add_sample(p, (uint64_t[]){lhot, lmain}, 2, 900, (uint32_t)getpid(), 1, "m", "m");
	prof_add_sample(p, (uint64_t[]){lmain}, 1, 100, (uint32_t)getpid(), 1, "m", "m");
	if (pprof_write(p, at(name)) != 0)
		exit(1);
	prof_free(p);
}

/* A stack 100000 frames deep (recursion gone wild, or a hostile file). */
static void deep(void)
{
	struct profile *p = prof_new();
	p->period_ns = 1000000;
	struct prof_mapping m = {0x1000, 0x2000, 0, "/bin/deep", "", 1, 1, 1};
	uint64_t map = prof_add_mapping(p, &m), n = 100000;
	uint64_t f = prof_intern_function(p, "recurse", NULL, "deep.c", 1);
	uint64_t l = loc(p, map, 0x1010, f, 2), *locs = malloc(n * sizeof *locs);
	for (uint64_t i = 0; i < n; i++)
		locs[i] = l;
	prof_add_sample(p, locs, n, 7, 1, 1, "deep", "deep");
	free(locs);
	if (pprof_write(p, at("deep.pprof")) != 0)
		exit(1);
	prof_free(p);
}

static void hostile(void)
{
	static unsigned char buf[1 << 16];
	FILE *f = fopen(at("basic.pprof"), "rb");
	size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
	if (f)
		fclose(f);
	put("truncated.pprof", buf, n / 2);
	unsigned long long x = 42;
	for (size_t i = 0; i < 4096; i++)
		buf[i] = (unsigned char)((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
	put("random.bin", buf, 4096);
	put_gz("gzjunk.gz", buf, 4096);
	put("notgzip.txt", "hello, this is not a profile\n", 29);
	put("empty.pprof", "", 0);
	static const unsigned char huge[] = {0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	                                     0xff, 0xff, 0x01, 0x00};
	put("hugevarint.pprof", huge, sizeof huge);
	char *zeros = calloc(8 << 20, 1);
	put_gz("bomb.gz", zeros, 8 << 20);
	free(zeros);
	struct pbuf b = {0}, m = {0};
	pb_uint(&m, 1, 1); /* sample_type {type: 1, unit: 1} */
	pb_uint(&m, 2, 1);
	pb_message(&b, 1, &m);
	pb_reset(&m); /* function {id: 1, name: 99} - no string 99 */
	pb_uint(&m, 1, 1);
	pb_uint(&m, 2, 99);
	pb_message(&b, 5, &m);
	pb_str(&b, 6, "");
	pb_str(&b, 6, "x");
	put("badindex.pprof", b.p, b.n);
	pb_reset(&b);
	pb_reset(&m);
	pb_uint(&m, 1, 1);
	pb_uint(&m, 2, 1);
	pb_message(&b, 1, &m);
	pb_reset(&m); /* sample {location_id: [7], value: [1]} - no location 7 */
	pb_packed(&m, 1, (uint64_t[]){7}, 1);
	pb_packed(&m, 2, (uint64_t[]){1}, 1);
	pb_message(&b, 2, &m);
	pb_str(&b, 6, "");
	pb_str(&b, 6, "x");
	put_gz("badloc.pprof", b.p, b.n);
	heap_profile(&b, &m);
	pb_free(&b);
	pb_free(&m);
}

#define SAME(what, cond) do { if (!(cond)) { \
	fprintf(stderr, "mkprofile: round trip changed %s\n", what); bad = 1; } } while (0)

/* Reads basic.pprof back and checks every field the writer was given. */
static int roundtrip(void)
{
	struct profile *p;
	char err[512];
	int bad = 0;
	if (pprof_read(at("basic.pprof"), &p, err, sizeof err) != 0) {
		fprintf(stderr, "mkprofile: %s\n", err);
		return 1;
	}
	SAME("header", p->period_ns == 10000000 && p->time_ns == 1700000000000000000 &&
	     p->duration_ns == 5000000000 && p->lost == 3 && !strcmp(p->command, "prog --fast") &&
	     !strcmp(p->engine, "test-engine"));
	SAME("processes", p->nprocesses == 2 && p->processes[1].pid == 200 &&
	     p->processes[1].ppid == 100 && !strcmp(p->processes[1].cmdline, "child x"));
	SAME("comments", p->ncomments == 1 && !strcmp(p->comments[0], "a comment, kept"));
	SAME("mappings", p->nmappings == 3 && p->mappings[0].start == 0x1000 &&
	     p->mappings[0].limit == 0x9000 && p->mappings[0].file_offset == 0x1000 &&
	     !strcmp(p->mappings[0].build_id, "abc123") && p->mappings[0].pid == 100 &&
	     p->mappings[2].pid == 200 && p->mappings[0].has_lines && !p->mappings[1].has_lines &&
	     !strcmp(p->mappings[1].path, "/usr/lib/libm.so.6"));
	SAME("functions", p->nfunctions == 5 && !strcmp(p->functions[1].name, "hot") &&
	     !strcmp(p->functions[1].filename, "prog.c") && p->functions[1].start_line == 10);
	const struct prof_location *inl = &p->locations[4];
	SAME("inline chain", p->nlocations == 7 && inl->address == 0x1210 && inl->nlines == 2 &&
	     !strcmp(p->functions[inl->lines[0].function_id - 1].name, "inl") &&
	     inl->lines[1].line == 13);
	SAME("samples", p->nsamples == 5 && prof_total(p) == 1000 && p->samples[2].count == 200 &&
	     p->samples[2].cpu_ns == 2000000000 && p->samples[2].tid == 101 &&
	     !strcmp(p->samples[2].thread, "worker") && !strcmp(p->samples[4].comm, "child") &&
	     p->samples[3].nlocs == 3);
	prof_free(p);
	return bad;
}

void html_fixtures(const char *dir); /* mkprofile-html.c */
int html_big(const char *dir);

/* Exits with the output open and written to, never committed. */
static int exit_writing(const char *path)
{
	char err[512];
	struct outfile *o = out_open(path, err, sizeof err);
	if (!o) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	for (int i = 0; i < 100000; i++)
		fputs("half a profile\n", out_fp(o));
	fflush(out_fp(o));
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--exit-writing"))
		return exit_writing(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--big"))
		return html_big(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--roundtrip")) {
		dir = argv[2];
		basic();
		return roundtrip();
	}
	if (argc != 2) {
		fprintf(stderr, "usage: mkprofile [--roundtrip] DIR\n");
		return 2;
	}
	dir = argv[1];
	hot_spot(10);
	basic();
	unsym();
	longname();
	self("/nonexistent/hot.c", "self.pprof");
	self("", "nofile.pprof");
	deep();
	hostile();
	html_fixtures(dir);
	return 0;
}
