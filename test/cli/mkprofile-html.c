/*
 * mkprofile-html.c - fixtures of the HTML report's cases (test/cli/html.t),
 * linked into mkprofile:
 *
 *   inject.pprof  every string a profile carries made hostile: markup,
 *                 "</script>", U+2028/U+2029, bytes that are not UTF-8, a
 *                 C++ template name, in names, paths, the command line,
 *                 thread names, comments; its hottest function is
 *                 "</script><script>alert(5)</script>" (600 of 1000
 *                 samples), whose source inject.c has "<script>" lines
 *   big.pprof     (only with --big DIR) 50,000 functions in 10 modules
 *                 below 200 callers, 4 threads: the size and speed case
 */
#include <stdio.h>
#include <stdlib.h>

#include "format/pprof.h"
#include "model/profile.h"

void html_fixtures(const char *dir);
int html_big(const char *dir);

static char *path(const char *dir, const char *name)
{
	static char buf[4096];
	snprintf(buf, sizeof buf, "%s/%s", dir, name);
	return buf;
}

static uint64_t loc1(struct profile *p, uint64_t map, uint64_t addr, uint64_t fn, int64_t line)
{
	uint64_t id = prof_intern_location(p, map, addr);
	struct prof_line l = {fn, line};
	prof_set_lines(p, id, &l, 1);
	return id;
}

void html_fixtures(const char *dir)
{
	struct profile *p = prof_new();
	p->period_ns = 1000000;
	p->duration_ns = 1000000000;
	prof_set_string(&p->command, "prog <img src=x onerror=alert(1)> \"&amp;\" "
	                "</script><script>alert(2)</script>");
	prof_set_string(&p->engine, "<b>engine</b>");
	prof_add_comment(p, "</script><!-- <script>alert(3)</script>");
	prof_add_process(p, 1, 0, "<svg onload=alert(4)>");
	struct prof_mapping m = {0x1000, 0x9000, 0x1000, "/tmp/<i>lib</i>.so", "", 1, 1, 1};
	uint64_t map = prof_add_mapping(p, &m);
	uint64_t fx = prof_intern_function(p, "</script><script>alert(5)</script>", NULL,
	                                   "inject.c", 1);
	uint64_t ft = prof_intern_function(p, "std::vector<int, std::allocator<int> >::push_back"
	                                   "(int const&)", NULL, "inject.c", 5);
	uint64_t fs = prof_intern_function(p, "line\xe2\x80\xa8sep\xe2\x80\xa9para", NULL,
	                                   "<b>nofile</b>.c", 1);
	uint64_t fb = prof_intern_function(p, "bad\xff\xfe bytes \"quoted' & <b>bold</b>", NULL,
	                                   "", 0);
	uint64_t fi = prof_intern_function(p, "<inl>inner</inl>", NULL, "inject.c", 9);
	uint64_t lx = loc1(p, map, 0x1100, fx, 3), lt = loc1(p, map, 0x1200, ft, 6);
	uint64_t ls = loc1(p, map, 0x1300, fs, 2), lb = loc1(p, map, 0x1400, fb, 0);
	uint64_t li = prof_intern_location(p, map, 0x1110);
	struct prof_line chain[2] = {{fi, 10}, {fx, 4}};
	prof_set_lines(p, li, chain, 2);
	const char *th = "<t>\"'&";
	prof_add_sample(p, (uint64_t[]){lx, lt}, 2, 500, 1, 1, th, "<c>");
	prof_add_sample(p, (uint64_t[]){li, lt}, 2, 100, 1, 1, th, "<c>");
	prof_add_sample(p, (uint64_t[]){ls, lt}, 2, 200, 1, 2, "w\xe2\x80\xa8", "<c>");
	prof_add_sample(p, (uint64_t[]){lb, lt}, 2, 150, 1, 2, "w\xe2\x80\xa8", "<c>");
	prof_add_sample(p, (uint64_t[]){lt}, 1, 50, 1, 1, th, "<c>");
	if (pprof_write(p, path(dir, "inject.pprof")) != 0)
		exit(1);
	prof_free(p);
	FILE *f = fopen(path(dir, "inject.c"), "w");
	fputs("/* inject.c */\n"
	      "void x(void) {\n"
	      "\t<script>alert(6)</script>\n"
	      "\t</pre></table></textarea><!--\n"
	      "\tstd::vector<int> v; /* & \xe2\x80\xa8 \xff */\n"
	      "\tpush_back();\n"
	      "}\n"
	      "\n"
	      "static inline void inner(void) {\n"
	      "\t</script><script>alert(7)</script>\n"
	      "}\n", f);
	fclose(f);
}

int html_big(const char *dir)
{
	struct profile *p = prof_new();
	p->period_ns = 1000000;
	p->duration_ns = 60000000000;
	prof_set_string(&p->command, "big --functions 50000");
	prof_add_process(p, 1, 0, "big --functions 50000");
	uint64_t maps[10], mains, mids[200];
	char name[256];
	for (int i = 0; i < 10; i++) {
		snprintf(name, sizeof name, "/usr/lib/libmodule%d.so", i);
		struct prof_mapping m = {0x10000000ull * (uint64_t)(i + 1),
		                         0x10000000ull * (uint64_t)(i + 1) + 0x1000000, 0, name, "",
		                         1, 1, 1};
		maps[i] = prof_add_mapping(p, &m);
	}
	mains = loc1(p, maps[0], 0x10000010, prof_intern_function(p, "main", NULL, "big.c", 1), 2);
	for (int i = 0; i < 200; i++) {
		snprintf(name, sizeof name, "dispatch::Caller<%d>::run()", i);
		uint64_t fn = prof_intern_function(p, name, NULL, "big.c", 10 + i);
		mids[i] = loc1(p, maps[i % 10], 0x10000000ull * (uint64_t)(i % 10 + 1) + 0x100 +
		               (uint64_t)i * 16, fn, 11 + i);
	}
	for (int i = 0; i < 50000; i++) {
		snprintf(name, sizeof name, "work::Kernel<float, %d>::step_%05d(int)", i % 97, i);
		uint64_t fn = prof_intern_function(p, name, NULL, "kernel.c", i + 1);
		int mod = i % 10;
		uint64_t l = loc1(p, maps[mod], 0x10000000ull * (uint64_t)(mod + 1) + 0x10000 +
		                  (uint64_t)i * 64, fn, i + 2);
		uint32_t tid = 1 + (uint32_t)(i % 4);
		prof_add_sample(p, (uint64_t[]){l, mids[i % 200], mains}, 3, 1 + i % 13, 1, tid,
		                tid == 1 ? "big" : "worker", "big");
	}
	int rc = pprof_write(p, path(dir, "big.pprof"));
	prof_free(p);
	return rc == 0 ? 0 : 1;
}
