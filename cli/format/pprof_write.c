/*
 * pprof_write.c - the model as gzipped profile.proto.
 *
 * What the file holds:
 *   sample_type   [samples/count, cpu/nanoseconds]; each sample's values
 *                 are [count, cpu_ns]
 *   period_type   cpu/nanoseconds, period = period_ns
 *   time_nanos, duration_nanos
 *   mapping       ids 1..n as in the model, with build_id, filename and
 *                 has_functions / has_filenames / has_line_numbers /
 *                 has_inline_frames (the last three = the model's has_lines)
 *   location      ids 1..n, address, lines innermost first
 *   function      ids 1..n
 *   sample labels numeric "pid", "tid" (when nonzero); string "thread",
 *                 "comm" (when not empty)
 * and, as comments (one string each, the prefix followed by the value;
 * what profile.proto has no field for, so that pprof_read gets the model
 * back exactly):
 *   "profil:command <command line>"
 *   "profil:engine <engine name>"
 *   "profil:lost <samples lost>"
 *   "profil:process pid=<pid> ppid=<ppid> cmdline=<cmdline to the end>"
 *   "profil:mapping id=<first>-<last> pid=<pid>"  (mappings first..last)
 * Other comments are written as they are.
 */
#include "pprof.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "out.h"
#include "pb.h"
#include "../model/index.h"

/* The string table: strings interned to their index; "" is index 0. */
struct strtab {
	const char **strs;
	size_t n, cap;
	struct prof_index index; /* by content (model/index.h) */
	char **owned;    /* strings made here (comments) */
	size_t nowned;
};

static uint64_t str_hash_at(const void *t, size_t i)
{
	return prof_hash_str(((const struct strtab *)t)->strs[i]);
}

static int64_t st_index(struct strtab *t, const char *s)
{
	s = s ? s : "";
	prof_index_reserve(&t->index, t->n, 1024, str_hash_at, t);
	size_t k = prof_index_first(&t->index, prof_hash_str(s));
	for (; t->index.slots[k]; k = prof_index_next(&t->index, k))
		if (strcmp(t->strs[t->index.slots[k] - 1], s) == 0)
			return (int64_t)t->index.slots[k] - 1;
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->strs = prof_xrealloc(t->strs, t->cap, sizeof *t->strs);
	}
	t->strs[t->n] = s;
	t->index.slots[k] = ++t->n;
	return (int64_t)t->n - 1;
}

static int64_t st_owned(struct strtab *t, char *s)
{
	t->owned = prof_xrealloc(t->owned, t->nowned + 1, sizeof *t->owned);
	t->owned[t->nowned++] = s;
	return st_index(t, s);
}

static void value_type(struct pbuf *b, uint32_t field, struct strtab *t, const char *type,
                       const char *unit)
{
	struct pbuf m = {0};
	pb_int(&m, 1, st_index(t, type));
	pb_int(&m, 2, st_index(t, unit));
	pb_message(b, field, &m);
	pb_free(&m);
}

/* A sample's label, encoded in m (the caller's, reused: four labels a
 * sample), its key and string value given as string indexes. */
static void label(struct pbuf *b, struct pbuf *m, int64_t key, int64_t str, int64_t num)
{
	pb_reset(m);
	pb_int(m, 1, key);
	if (str >= 0)
		pb_int(m, 2, str);
	else
		pb_int(m, 3, num);
	pb_message(b, 3, m);
}

/*
 * The string indexes of the label keys and of the thread and command
 * names of the sample before: looked up for every label, they were six
 * searches of the string table a sample (13 M of a 27-compile
 * recording's 160 M instructions) for strings that change only from
 * one thread or process to the next, and samples come process by
 * process.  A key is looked up when first used, as before, so the
 * string table is the same.
 */
enum { KEY_PID, KEY_TID, KEY_THREAD, KEY_COMM, NKEYS };

struct label_strs {
	int64_t key[NKEYS]; /* -1 until first used */
	const char *last[2]; /* thread, comm */
	int64_t last_index[2];
};

static int64_t key_index(struct label_strs *ls, struct strtab *t, int k)
{
	static const char *const names[NKEYS] = {"pid", "tid", "thread", "comm"};
	if (ls->key[k] < 0)
		ls->key[k] = st_index(t, names[k]);
	return ls->key[k];
}

static int64_t name_index(struct label_strs *ls, struct strtab *t, int which, const char *s)
{
	if (!ls->last[which] || strcmp(ls->last[which], s) != 0) {
		ls->last[which] = s;
		ls->last_index[which] = st_index(t, s);
	}
	return ls->last_index[which];
}

static void put_samples(struct pbuf *b, const struct profile *p, struct strtab *t)
{
	struct pbuf m = {0}, l = {0};
	struct label_strs ls = {{-1, -1, -1, -1}, {NULL, NULL}, {0, 0}};
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		uint64_t v[2] = {(uint64_t)s->count, (uint64_t)s->cpu_ns};
		pb_reset(&m);
		pb_packed(&m, 1, s->locs, s->nlocs);
		pb_packed(&m, 2, v, 2);
		if (s->pid)
			label(&m, &l, key_index(&ls, t, KEY_PID), -1, s->pid);
		if (s->tid)
			label(&m, &l, key_index(&ls, t, KEY_TID), -1, s->tid);
		if (s->thread[0]) {
			int64_t key = key_index(&ls, t, KEY_THREAD);
			label(&m, &l, key, name_index(&ls, t, 0, s->thread), 0);
		}
		if (s->comm[0]) {
			int64_t key = key_index(&ls, t, KEY_COMM);
			label(&m, &l, key, name_index(&ls, t, 1, s->comm), 0);
		}
		pb_message(b, 2, &m);
	}
	pb_free(&m);
	pb_free(&l);
}

static void put_mappings(struct pbuf *b, const struct profile *p, struct strtab *t)
{
	struct pbuf m = {0};
	for (size_t i = 0; i < p->nmappings; i++) {
		const struct prof_mapping *mp = &p->mappings[i];
		pb_reset(&m);
		pb_uint(&m, 1, i + 1);
		pb_uint(&m, 2, mp->start);
		pb_uint(&m, 3, mp->limit);
		pb_uint(&m, 4, mp->file_offset);
		pb_int(&m, 5, st_index(t, mp->path));
		pb_int(&m, 6, st_index(t, mp->build_id));
		pb_uint(&m, 7, mp->has_functions != 0);
		pb_uint(&m, 8, mp->has_lines != 0);
		pb_uint(&m, 9, mp->has_lines != 0);
		pb_uint(&m, 10, mp->has_lines != 0);
		pb_message(b, 3, &m);
	}
	pb_free(&m);
}

static void put_locations(struct pbuf *b, const struct profile *p)
{
	struct pbuf m = {0}, l = {0};
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct prof_location *loc = &p->locations[i];
		pb_reset(&m);
		pb_uint(&m, 1, i + 1);
		pb_uint(&m, 2, loc->mapping_id);
		pb_uint(&m, 3, loc->address);
		for (size_t k = 0; k < loc->nlines; k++) {
			pb_reset(&l);
			pb_uint(&l, 1, loc->lines[k].function_id);
			pb_int(&l, 2, loc->lines[k].line);
			pb_message(&m, 4, &l);
		}
		pb_message(b, 4, &m);
	}
	pb_free(&m);
	pb_free(&l);
}

static void put_functions(struct pbuf *b, const struct profile *p, struct strtab *t)
{
	struct pbuf m = {0};
	for (size_t i = 0; i < p->nfunctions; i++) {
		const struct prof_function *f = &p->functions[i];
		pb_reset(&m);
		pb_uint(&m, 1, i + 1);
		pb_int(&m, 2, st_index(t, f->name));
		pb_int(&m, 3, st_index(t, f->system_name));
		pb_int(&m, 4, st_index(t, f->filename));
		pb_int(&m, 5, f->start_line);
		pb_message(b, 5, &m);
	}
	pb_free(&m);
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	int rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		prof_oom();
	return s;
}

/* Comment string indices: the model's extra fields, then its comments. */
static uint64_t *comments(const struct profile *p, struct strtab *t, size_t *n)
{
	uint64_t *c = prof_xrealloc(NULL, 3 + p->nprocesses + p->nmappings + p->ncomments,
	                            sizeof *c);
	size_t k = 0;
	c[k++] = (uint64_t)st_owned(t, xasprintf(PPROF_C_COMMAND "%s", p->command));
	c[k++] = (uint64_t)st_owned(t, xasprintf(PPROF_C_ENGINE "%s", p->engine));
	c[k++] = (uint64_t)st_owned(t, xasprintf(PPROF_C_LOST "%" PRIu64, p->lost));
	for (size_t i = 0; i < p->nprocesses; i++) {
		const struct prof_process *pr = &p->processes[i];
		c[k++] = (uint64_t)st_owned(t, xasprintf(PPROF_C_PROCESS "pid=%" PRIu32
		                                         " ppid=%" PRIu32 " cmdline=%s",
		                                         pr->pid, pr->ppid, pr->cmdline));
	}
	/* One comment per run of mappings of one process (a recording adds a
	 * process's mappings together): readers show comments, keep them few. */
	for (size_t i = 0, j; i < p->nmappings; i = j) {
		for (j = i + 1; j < p->nmappings && p->mappings[j].pid == p->mappings[i].pid; j++)
			;
		c[k++] = (uint64_t)st_owned(t, xasprintf(PPROF_C_MAPPING "id=%zu-%zu pid=%" PRIu32,
		                                         i + 1, j, p->mappings[i].pid));
	}
	for (size_t i = 0; i < p->ncomments; i++)
		c[k++] = (uint64_t)st_index(t, p->comments[i]);
	*n = k;
	return c;
}

/* The uncompressed profile.proto message. */
static void encode(const struct profile *p, struct pbuf *b)
{
	struct strtab t = {0};
	st_index(&t, "");
	value_type(b, 1, &t, "samples", "count");
	value_type(b, 1, &t, "cpu", "nanoseconds");
	put_samples(b, p, &t);
	put_mappings(b, p, &t);
	put_locations(b, p);
	put_functions(b, p, &t);
	size_t nc;
	uint64_t *c = comments(p, &t, &nc);
	for (size_t i = 0; i < t.n; i++)
		pb_str(b, 6, t.strs[i]);
	pb_int(b, 9, p->time_ns);
	pb_int(b, 10, p->duration_ns);
	value_type(b, 11, &t, "cpu", "nanoseconds"); /* both interned already */
	pb_int(b, 12, p->period_ns);
	pb_packed(b, 13, c, nc);
	free(c);
	for (size_t i = 0; i < t.nowned; i++)
		free(t.owned[i]);
	free(t.owned), free(t.strs);
	prof_index_free(&t.index);
}

/*
 * The gzip (RFC 1952) the encoding is spilled into, one member per
 * MEMBER_BYTES of it: the profile is never whole in memory.  (Encoded
 * whole first, a build's recording, 2.3 MB of profile.proto, grew a
 * buffer to 4 MiB by doublings and copies: some 1,500 fresh pages, each
 * a page fault, which cost more than the encoding on a virtual machine.)
 *
 * libdeflate at level 1, not zlib: zlib's fastest level (Z_BEST_SPEED,
 * which Go's runtime/pprof uses) was 28% of the record process's
 * instructions on a recording of 27 compiles, 50 M for 705 KB;
 * libdeflate takes 22 M for a file 4% smaller.  It compresses whole
 * buffers, not streams, so each spill is a gzip member of its own, as
 * BGZF writes them: RFC 1952 allows any number, and gzip, zlib
 * (input.c), Go's compress/gzip and so `go tool pprof` read them as one
 * stream.  Members of 256 KiB cost 0.5% of the size against one.
 */
#define MEMBER_BYTES (256u << 10)

struct gz {
	struct libdeflate_compressor *c;
	FILE *fp;
	int err; /* errno of the first failed write, or EIO; 0 */
	int members;
	unsigned char *out;
	size_t out_cap;
};

static void gz_init(struct gz *g, FILE *fp)
{
	memset(g, 0, sizeof *g);
	g->fp = fp;
	while (!(g->c = libdeflate_alloc_compressor(1)) && prof_reserve_release()) /* profile.h */
		;
	if (!g->c)
		prof_oom();
}

/* len bytes as one gzip member onto g->fp; after a failed write only
 * the error is kept. */
static void gz_member(struct gz *g, const unsigned char *p, size_t len)
{
	size_t bound = libdeflate_gzip_compress_bound(g->c, len);
	if (bound > g->out_cap) {
		g->out = prof_xrealloc(g->out, bound, 1);
		g->out_cap = bound;
	}
	size_t n = libdeflate_gzip_compress(g->c, p, len, g->out, g->out_cap);
	if (!n && !g->err)
		g->err = EIO; /* within the bound, this cannot happen */
	if (!g->err && fwrite(g->out, 1, n, g->fp) != n)
		g->err = errno ? errno : EIO;
	g->members++;
}

static void gz_end(struct gz *g)
{
	libdeflate_free_compressor(g->c);
	free(g->out);
}

static void spill(struct pbuf *b, void *ctx)
{
	gz_member(ctx, b->p, b->n);
	b->n = 0;
}

int pprof_write(const struct profile *p, const char *path)
{
	char err[512];
	struct outfile *o = out_open(path, err, sizeof err);
	if (!o) {
		fprintf(stderr, "profil: %s\n", err);
		return -1;
	}
	struct gz *g = prof_xcalloc(1, sizeof *g);
	gz_init(g, out_fp(o));
	struct pbuf b = {.spill = spill, .ctx = g};
	pb_reserve(&b, MEMBER_BYTES);
	encode(p, &b);
	if (b.n || !g->members) /* an empty profile: one empty member */
		gz_member(g, b.p, b.n);
	gz_end(g);
	pb_free(&b);
	int rc = 0;
	if (g->err) {
		snprintf(err, sizeof err, "cannot write %s: %s", path, strerror(g->err));
		out_abort(o);
		rc = -1;
	} else {
		rc = out_commit(o, err, sizeof err);
	}
	free(g);
	if (rc != 0)
		fprintf(stderr, "profil: %s\n", err);
	return rc;
}
