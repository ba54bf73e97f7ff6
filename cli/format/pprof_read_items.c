/*
 * pprof_read_items.c - profile.proto's repeated messages into the model:
 * Mapping, Function, Location (with its Lines), Sample (with its Labels).
 * Unknown fields are skipped; every string index and id is checked.
 */
#include "pprof_read.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads string index v into *s (freeing what was there). */
static int take_str(struct rd *r, uint64_t v, char **s)
{
	char *n = rd_str(r, v);
	if (!n)
		return rd_bad(r, "string index out of range");
	free(*s);
	*s = n;
	return 0;
}

int pprof_mapping(struct rd *r, struct pbr *m)
{
	struct pbfield f;
	struct prof_mapping mp = {0};
	uint64_t id = 0, hasl = 0;
	int rc;
	while ((rc = pb_next(m, &f)) == 1) {
		int err = 0;
		switch (f.num) {
		case 1: id = f.v; break;
		case 2: mp.start = f.v; break;
		case 3: mp.limit = f.v; break;
		case 4: mp.file_offset = f.v; break;
		case 5: err = take_str(r, f.v, &mp.path); break;
		case 6: err = take_str(r, f.v, &mp.build_id); break;
		case 7: mp.has_functions = f.v != 0; break;
		case 9: hasl = f.v; break;
		}
		if (err) {
			rc = -1;
			break;
		}
	}
	mp.has_lines = hasl != 0;
	for (size_t i = 0; i < r->nmpid; i++)
		if (r->mpid[i].lo <= id && id <= r->mpid[i].hi)
			mp.pid = (uint32_t)r->mpid[i].pid;
	if (rc == 0 && id == 0)
		rc = rd_bad(r, "mapping with id 0");
	if (rc == 0)
		rd_id_add(r, ID_MAPPING, id, prof_add_mapping(r->p, &mp));
	free(mp.path), free(mp.build_id);
	return rc < 0 ? (r->err[0] ? -1 : rd_bad(r, "malformed mapping")) : 0;
}

int pprof_function(struct rd *r, struct pbr *m)
{
	struct pbfield f;
	uint64_t id = 0;
	int64_t start = 0;
	char *s[3] = {0};
	int rc;
	while ((rc = pb_next(m, &f)) == 1) {
		if (f.num == 1)
			id = f.v;
		else if (f.num == 5)
			start = (int64_t)f.v;
		else if (f.num >= 2 && f.num <= 4 && take_str(r, f.v, &s[f.num - 2]) != 0) {
			rc = -1;
			break;
		}
	}
	if (rc == 0 && id == 0)
		rc = rd_bad(r, "function with id 0");
	if (rc == 0)
		rd_id_add(r, ID_FUNCTION, id, prof_intern_function(r->p, s[0], s[1] && *s[1] ? s[1] : s[0],
		                                                s[2], start));
	free(s[0]), free(s[1]), free(s[2]);
	return rc < 0 ? (r->err[0] ? -1 : rd_bad(r, "malformed function")) : 0;
}

/* One Line message: function id and line number. */
static int line(struct rd *r, struct pbr *m, struct prof_line *l)
{
	struct pbfield f;
	uint64_t fid = 0;
	int rc;
	*l = (struct prof_line){0, 0};
	while ((rc = pb_next(m, &f)) == 1)
		if (f.num == 1)
			fid = f.v;
		else if (f.num == 2)
			l->line = (int64_t)f.v;
	if (rc < 0)
		return rd_bad(r, "malformed line");
	if (fid && !(l->function_id = rd_id_get(r, ID_FUNCTION, fid)))
		return rd_unknown_id(r, ID_FUNCTION, fid);
	return 0;
}

int pprof_location(struct rd *r, struct pbr *m)
{
	struct pbfield f;
	uint64_t id = 0, mid = 0, addr = 0;
	struct prof_line *lines = NULL;
	size_t n = 0;
	int rc;
	while ((rc = pb_next(m, &f)) == 1) {
		if (f.num == 1)
			id = f.v;
		else if (f.num == 2)
			mid = f.v;
		else if (f.num == 3)
			addr = f.v;
		else if (f.num == 4 && f.type == PB_LEN) {
			lines = prof_xrealloc(lines, n + 1, sizeof *lines);
			if (line(r, &f.sub, &lines[n++]) != 0)
				break;
		}
	}
	uint64_t model_mid = mid ? rd_id_get(r, ID_MAPPING, mid) : 0;
	if (r->err[0])
		rc = -1;
	else if (rc < 0)
		rc = rd_bad(r, "malformed location");
	else if (id == 0)
		rc = rd_bad(r, "location with id 0");
	else if (mid && !model_mid)
		rc = rd_unknown_id(r, ID_MAPPING, mid);
	if (rc == 0) {
		uint64_t lid = prof_add_location(r->p, model_mid, addr);
		prof_set_lines(r->p, lid, lines, n);
		rd_id_add(r, ID_LOCATION, id, lid);
	}
	free(lines);
	return rc;
}


/* A sample's labels we know: pid, tid (numbers), thread, comm (strings). */
struct labels {
	uint64_t pid, tid;
	char *thread, *comm;
};

static int label(struct rd *r, struct pbr *m, struct labels *lb)
{
	struct pbfield f;
	uint64_t key = 0, s = 0, num = 0;
	int rc;
	while ((rc = pb_next(m, &f)) == 1)
		if (f.num == 1)
			key = f.v;
		else if (f.num == 2)
			s = f.v;
		else if (f.num == 3)
			num = f.v;
	if (rc < 0)
		return rd_bad(r, "malformed label");
	if (key >= r->nstrs || s >= r->nstrs)
		return rd_bad(r, "string index out of range");
	if (rd_str_is(r, key, "pid"))
		lb->pid = num;
	else if (rd_str_is(r, key, "tid"))
		lb->tid = num;
	else if (rd_str_is(r, key, "thread"))
		free(lb->thread), lb->thread = rd_str(r, s);
	else if (rd_str_is(r, key, "comm"))
		free(lb->comm), lb->comm = rd_str(r, s);
	return 0;
}

/* The sample's fields; its location ids already mapped to the model's. */
static int sample_fields(struct rd *r, struct pbr *m, uint64_t **locs, size_t *nlocs,
                         uint64_t **vals, size_t *nvals, struct labels *lb)
{
	struct pbfield f;
	size_t capl = 0, capv = 0;
	int rc;
	while ((rc = pb_next(m, &f)) == 1) {
		if (f.num == 1 && pb_append_varints(&f, locs, nlocs, &capl) != 0)
			return rd_bad(r, "malformed sample");
		if (f.num == 2 && pb_append_varints(&f, vals, nvals, &capv) != 0)
			return rd_bad(r, "malformed sample");
		if (f.num == 3 && (f.type != PB_LEN || label(r, &f.sub, lb) != 0))
			return r->err[0] ? -1 : rd_bad(r, "malformed label");
	}
	if (rc < 0)
		return rd_bad(r, "malformed sample");
	for (size_t i = 0; i < *nlocs; i++) {
		uint64_t id = rd_id_get(r, ID_LOCATION, (*locs)[i]);
		if (!id)
			return rd_unknown_id(r, ID_LOCATION, (*locs)[i]);
		(*locs)[i] = id;
	}
	return 0;
}

int pprof_sample(struct rd *r, struct pbr *m)
{
	uint64_t *locs = NULL, *vals = NULL;
	size_t nlocs = 0, nvals = 0;
	struct labels lb = {0};
	int rc = sample_fields(r, m, &locs, &nlocs, &vals, &nvals, &lb);
	if (rc == 0 && nvals != (size_t)r->nvalues)
		rc = rd_bad(r, "a sample's number of values differs from the sample types'");
	if (rc == 0) {
		int64_t period = r->p->period_ns;
		int64_t cpu = r->vcpu >= 0 ? (int64_t)vals[r->vcpu] : 0;
		int64_t count = r->vcount >= 0 ? (int64_t)vals[r->vcount]
		                : period > 0 ? cpu / period : cpu;
		if (r->vcpu < 0 && period > 0 && count > INT64_MAX / period)
			rc = rd_bad(r, "sample count too large");
		else if (r->vcpu < 0)
			cpu = count * (period > 0 ? period : 0);
		if (count < 0 || cpu < 0)
			rc = rd_bad(r, "negative sample value");
		else if (count > INT64_MAX - r->total || cpu > INT64_MAX - r->total_ns)
			rc = rd_bad(r, "sample counts overflow 64 bits");
		if (rc == 0) {
			r->total += count, r->total_ns += cpu;
			prof_add_sample_ns(r->p, locs, nlocs, count, cpu, (uint32_t)lb.pid,
			                   (uint32_t)lb.tid, lb.thread, lb.comm);
		}
	}
	free(locs), free(vals), free(lb.thread), free(lb.comm);
	return rc;
}
