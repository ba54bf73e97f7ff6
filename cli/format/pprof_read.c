/*
 * pprof_read.c - a pprof file into the model (pprof.h).
 *
 * The message is parsed by its schema, in passes over the top-level
 * fields (strings and comments first, then mappings, functions,
 * locations, samples), so the file's order does not matter and nothing
 * recurses on input.  Every string index and id is checked; file ids are
 * any nonzero numbers and are mapped to the model's dense ids.
 */
#include "pprof.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "pprof_read.h"

static const char *const pprof_id_names[] = {"mapping", "function", "location"};

int rd_bad(struct rd *r, const char *what)
{
	snprintf(r->err, r->errlen, "corrupt pprof profile: %s", what);
	return -1;
}

char *rd_str(struct rd *r, uint64_t i)
{
	if (i >= r->nstrs)
		return NULL;
	size_t n = (size_t)(r->strs[i].end - r->strs[i].p);
	char *s = prof_xrealloc(NULL, n + 1, 1);
	memcpy(s, r->strs[i].p, n);
	s[n] = '\0';
	return s;
}

int rd_str_is(struct rd *r, uint64_t i, const char *want)
{
	return i < r->nstrs && (size_t)(r->strs[i].end - r->strs[i].p) == strlen(want) &&
	       memcmp(r->strs[i].p, want, strlen(want)) == 0;
}

static int cmp_id(const void *a, const void *b)
{
	const struct idmap *x = a, *y = b;
	return x->file < y->file ? -1 : x->file > y->file;
}

void rd_id_add(struct rd *r, int kind, uint64_t file, uint64_t model)
{
	size_t n = r->nmaps[kind];
	if ((n & (n - 1)) == 0) /* at powers of two: amortised growth */
		r->maps[kind] = prof_xrealloc(r->maps[kind], n ? 2 * n : 1, sizeof **r->maps);
	r->maps[kind][r->nmaps[kind]++] = (struct idmap){file, model};
}

static int id_seal(struct rd *r, int kind)
{
	if (r->nmaps[kind] == 0)
		return 0; /* qsort and bsearch want an array, even an empty one */
	qsort(r->maps[kind], r->nmaps[kind], sizeof **r->maps, cmp_id);
	for (size_t i = 1; i < r->nmaps[kind]; i++)
		if (r->maps[kind][i].file == r->maps[kind][i - 1].file) {
			snprintf(r->err, r->errlen, "corrupt pprof profile: two %ss with id %" PRIu64,
			         pprof_id_names[kind], r->maps[kind][i].file);
			return -1;
		}
	r->dense[kind] = 1; /* ids 1..n (ours, and most writers'): found by index */
	for (size_t i = 0; i < r->nmaps[kind] && r->dense[kind]; i++)
		r->dense[kind] = r->maps[kind][i].file == i + 1;
	return 0;
}

uint64_t rd_id_get(struct rd *r, int kind, uint64_t file)
{
	struct idmap key = {file, 0}, *m;
	if (r->nmaps[kind] == 0)
		return 0;
	if (r->dense[kind])
		return file >= 1 && file <= r->nmaps[kind] ? r->maps[kind][file - 1].model : 0;
	m = bsearch(&key, r->maps[kind], r->nmaps[kind], sizeof key, cmp_id);
	return m ? m->model : 0;
}

int rd_unknown_id(struct rd *r, int kind, uint64_t id)
{
	snprintf(r->err, r->errlen, "corrupt pprof profile: reference to %s %" PRIu64
	         ", which is not in the file", pprof_id_names[kind], id);
	return -1;
}


/* Strings, scalars and the structure of the whole message. */
static int first_pass(struct rd *r)
{
	struct pbr t = r->top;
	struct pbfield f;
	size_t cap = 0, ntypes = 0;
	int rc;
	while ((rc = pb_next(&t, &f)) == 1) {
		if (f.num == 6 && f.type == PB_LEN) {
			if (r->nstrs == cap) {
				cap = cap ? 2 * cap : 64;
				r->strs = prof_xrealloc(r->strs, cap, sizeof *r->strs);
			}
			r->strs[r->nstrs++] = f.sub;
		} else if (f.num == 1) {
			ntypes++;
		} else if (f.num >= 9 && f.num <= 12 && f.num != 11 && f.type == PB_VARINT) {
			int64_t v = (int64_t)f.v;
			*(f.num == 9 ? &r->p->time_ns : f.num == 10 ? &r->p->duration_ns
			                                            : &r->p->period_ns) = v;
		}
	}
	if (rc < 0) {
		snprintf(r->err, r->errlen, "not a pprof profile (malformed protobuf at byte %zu)",
		         (size_t)(t.p - r->base));
		return -1;
	}
	if (r->nstrs == 0 || r->strs[0].p != r->strs[0].end)
		return snprintf(r->err, r->errlen, "not a pprof profile (%s)",
		                r->nstrs ? "string table does not start with \"\""
		                         : "no string table"), -1;
	if (ntypes == 0)
		return snprintf(r->err, r->errlen, "not a pprof profile (no sample types)"), -1;
	if (ntypes > 64)
		return rd_bad(r, "more than 64 sample types");
	r->nvalues = (int)ntypes;
	return 0;
}

/* "type/unit" of a ValueType message's string indexes, appended to buf;
 * the file's bytes that are not printable are '?' (an error is one line). */
static void name_type(struct rd *r, uint64_t type, uint64_t unit, char *buf, size_t size)
{
	char *t = rd_str(r, type), *u = rd_str(r, unit);
	size_t n = strlen(buf);
	snprintf(buf + n, size - n, "%s%.40s/%.40s", n ? ", " : "", t ? t : "?", u ? u : "?");
	for (char *c = buf + n; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	free(t);
	free(u);
}

/*
 * Which values are the samples and the CPU time: samples/count and
 * cpu/nanoseconds (ours, Go's runtime/pprof), else another producer's
 * first value counted in periods, as long as something in the profile is
 * time (a sample type or the period in nanoseconds).  A profile of
 * something else (Go's heap profile: alloc_space/bytes, a period in
 * space/bytes) is refused, naming what it counts (parse(), after the
 * rest, so that a damaged file is still called damaged): its values read
 * as CPU time were nonsense.
 */
static int sample_types(struct rd *r)
{
	struct pbr t = r->top;
	struct pbfield f, g;
	int k = 0, timed = 0;
	char kinds[256] = "";
	r->vcount = r->vcpu = -1;
	while (pb_next(&t, &f) == 1) {
		if (f.num != 1 && f.num != 11)
			continue;
		if (f.type != PB_LEN)
			return rd_bad(r, "wrong wire type for a sample type");
		uint64_t type = 0, unit = 0;
		while (pb_next(&f.sub, &g) == 1)
			*(g.num == 1 ? &type : g.num == 2 ? &unit : &g.v) = g.v;
		timed |= rd_str_is(r, unit, "nanoseconds");
		if (f.num == 11)
			continue; /* the period's type */
		name_type(r, type, unit, kinds, sizeof kinds);
		if (rd_str_is(r, type, "samples") && rd_str_is(r, unit, "count") && r->vcount < 0)
			r->vcount = k;
		if (rd_str_is(r, type, "cpu") && rd_str_is(r, unit, "nanoseconds") && r->vcpu < 0)
			r->vcpu = k;
		k++;
	}
	if (r->vcount < 0 && r->vcpu < 0 && !timed)
		r->not_cpu = prof_xstrdup(kinds); /* said once the rest is known sound */
	if (r->vcount < 0 && r->vcpu < 0)
		r->vcount = 0; /* some other producer's counts: the first value */
	return 0;
}

/* Our own comments give back what profile.proto has no field for. */
static void comment(struct rd *r, const char *c, struct pidrange **mpid, size_t *nmpid)
{
	size_t n;
	unsigned long long a, b, h;
	int off = -1;
	if (!strncmp(c, PPROF_C_COMMAND, n = strlen(PPROF_C_COMMAND)))
		prof_set_string(&r->p->command, c + n);
	else if (!strncmp(c, PPROF_C_ENGINE, n = strlen(PPROF_C_ENGINE)))
		prof_set_string(&r->p->engine, c + n);
	else if (!strncmp(c, PPROF_C_LOST, n = strlen(PPROF_C_LOST)))
		r->p->lost = strtoull(c + n, NULL, 10);
	else if (sscanf(c, PPROF_C_PROCESS "pid=%llu ppid=%llu cmdline=%n", &a, &b, &off) == 2 &&
	         off > 0)
		prof_add_process(r->p, (uint32_t)a, (uint32_t)b, c + off);
	else if (sscanf(c, PPROF_C_MAPPING "id=%llu-%llu pid=%llu", &a, &h, &b) == 3 ||
	         (sscanf(c, PPROF_C_MAPPING "id=%llu pid=%llu", &a, &b) == 2 && (h = a, 1))) {
		*mpid = prof_xrealloc(*mpid, *nmpid + 1, sizeof **mpid);
		(*mpid)[(*nmpid)++] = (struct pidrange){a, h, b};
	} else
		prof_add_comment(r->p, c);
}

static int comments(struct rd *r)
{
	struct pbr t = r->top;
	struct pbfield f;
	uint64_t *idx = NULL;
	size_t n = 0, cap = 0;
	while (pb_next(&t, &f) == 1)
		if (f.num == 13 && pb_append_varints(&f, &idx, &n, &cap) != 0) {
			free(idx);
			return rd_bad(r, "malformed comments");
		}
	for (size_t i = 0; i < n; i++) {
		char *c = rd_str(r, idx[i]);
		if (!c) {
			free(idx);
			return rd_bad(r, "comment index out of range");
		}
		comment(r, c, &r->mpid, &r->nmpid);
		free(c);
	}
	free(idx);
	return 0;
}

/* Pass over top-level fields numbered num, calling fn on each. */
static int each(struct rd *r, uint32_t num, int (*fn)(struct rd *, struct pbr *))
{
	struct pbr t = r->top;
	struct pbfield f;
	int rc;
	while ((rc = pb_next(&t, &f)) == 1)
		if (f.num == num) {
			if (f.type != PB_LEN)
				return rd_bad(r, "wrong wire type");
			if (fn(r, &f.sub) != 0)
				return -1;
		}
	return rc;
}

static int parse(struct rd *r)
{
	if (first_pass(r) != 0 || sample_types(r) != 0 || comments(r) != 0)
		return -1;
	if (each(r, 3, pprof_mapping) != 0 || id_seal(r, ID_MAPPING) != 0)
		return -1;
	if (each(r, 5, pprof_function) != 0 || id_seal(r, ID_FUNCTION) != 0)
		return -1;
	if (each(r, 4, pprof_location) != 0 || id_seal(r, ID_LOCATION) != 0)
		return -1;
	if (each(r, 2, pprof_sample) != 0)
		return -1;
	if (r->not_cpu)
		return snprintf(r->err, r->errlen, "not a CPU profile (its samples are %s)",
		                r->not_cpu), -1;
	return 0;
}

int pprof_read(const char *path, struct profile **out, char *err, size_t errlen)
{
	uint64_t cap = PPROF_MAX_BYTES;
	const char *env = getenv("PROFIL_MAX_INPUT");
	if (env && strtoull(env, NULL, 10) > 0 && strtoull(env, NULL, 10) < cap)
		cap = strtoull(env, NULL, 10);
	unsigned char *buf;
	size_t len;
	err[0] = '\0';
	if (input_load(path, cap, &buf, &len, err, errlen) != 0)
		return -1;
	struct rd r = {.p = prof_new(), .base = buf, .top = {buf, buf + len},
	               .err = err, .errlen = errlen};
	int rc = len == 0 ? (snprintf(err, errlen, "empty file"), -1) : parse(&r);
	if (rc != 0) {
		/* name the file in front of what went wrong */
		char msg[512];
		snprintf(msg, sizeof msg, "%s: %s", path, err);
		snprintf(err, errlen, "%s", msg);
		prof_free(r.p);
	} else {
		*out = r.p;
	}
	free(buf);
	free(r.strs);
	free(r.not_cpu);
	for (int k = 0; k < 3; k++)
		free(r.maps[k]);
	free(r.mpid);
	return rc;
}
