/*
 * profile.c - the in-memory profile (profile.h): growable arrays, and hash
 * tables that intern functions and locations and merge samples by (stack,
 * pid, tid), so a recording of millions of samples costs memory in
 * proportion to its distinct stacks only.
 *
 * The hash tables live in a private struct around the public one; they
 * hold 1-based ids (0 = empty slot) and are rebuilt on growth.
 */
#include "profile.h"
#include "index.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct profile_priv {
	struct profile pub; /* first: prof_* get the public part's address */
	struct prof_index funcs, locs, samples; /* by content (index.h) */
	struct prof_index maps; /* prof_intern_mapping()'s, by file and place */
	size_t capm, capf, capl, caps, capp, capc;
};

static struct profile_priv *priv(const struct profile *p)
{
	return (struct profile_priv *)p;
}

_Noreturn void prof_oom(void)
{
	fputs("profil: out of memory\n", stderr);
	exit(1);
}

/* The reserve (prof_reserve_take): address space only, never touched,
 * in blocks given back one at a time.  Private and writable, so that it
 * counts against RLIMIT_DATA as well as RLIMIT_AS, the two limits
 * malloc() meets. */
static struct {
	void *p;
	size_t len;
} reserve[2];
static size_t nreserve;

void prof_reserve_take(size_t len)
{
	if (nreserve == sizeof reserve / sizeof reserve[0] || !len)
		return;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	               -1, 0);
	if (p != MAP_FAILED)
		reserve[nreserve].p = p, reserve[nreserve++].len = len;
}

int prof_reserve_release(void)
{
	if (!nreserve)
		return 0;
	nreserve--;
	munmap(reserve[nreserve].p, reserve[nreserve].len);
	return 1;
}

void *prof_xrealloc(void *old, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		prof_oom();
	size_t bytes = n && size ? n * size : 1;
	void *p = realloc(old, bytes);
	while (!p && prof_reserve_release())
		p = realloc(old, bytes);
	if (!p)
		prof_oom();
	return p;
}

void *prof_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	while (!p && prof_reserve_release())
		p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		prof_oom();
	return p;
}

size_t prof_path_bare_len(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t n = strlen(path), d = sizeof deleted - 1;
	return n > d && strcmp(path + n - d, deleted) == 0 ? n - d : n;
}

char *prof_xstrdup(const char *s)
{
	char *d = strdup(s ? s : "");
	while (!d && prof_reserve_release())
		d = strdup(s ? s : "");
	if (!d)
		prof_oom();
	return d;
}

/* Makes room for one more element in an array of *cap elements. */
void *prof_xgrow(void *arr, size_t n, size_t *cap, size_t first, size_t size)
{
	if (n < *cap)
		return arr;
	if (*cap > SIZE_MAX / 2)
		prof_oom();
	*cap = *cap ? *cap * 2 : first;
	return prof_xrealloc(arr, *cap, size);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	return mix(prof_hash_seeded(h, s), 0);
}

static uint64_t hash_function(const struct prof_function *f)
{
	uint64_t h = hash_str(hash_str(hash_str(1, f->name), f->system_name), f->filename);
	return mix(h, (uint64_t)f->start_line);
}

static uint64_t hash_location(const struct prof_location *l)
{
	return mix(mix(2, l->mapping_id), l->address);
}

static uint64_t hash_sample(const struct prof_sample *s)
{
	uint64_t h = mix(mix(3, s->pid), s->tid);
	for (size_t i = 0; i < s->nlocs; i++)
		h = mix(h, s->locs[i]);
	return h;
}

static uint64_t hash_mapping(const struct prof_mapping *m)
{
	uint64_t h = hash_str(hash_str(4, m->path), m->build_id);
	return mix(mix(mix(h, m->start), m->limit), m->file_offset);
}

static uint64_t hash_at_mapping(const void *p, size_t i)
{
	return hash_mapping(&((const struct profile *)p)->mappings[i]);
}

static uint64_t hash_at_function(const void *p, size_t i)
{
	return hash_function(&((const struct profile *)p)->functions[i]);
}

static uint64_t hash_at_location(const void *p, size_t i)
{
	return hash_location(&((const struct profile *)p)->locations[i]);
}

static uint64_t hash_at_sample(const void *p, size_t i)
{
	return hash_sample(&((const struct profile *)p)->samples[i]);
}

struct profile *prof_new(void)
{
	struct profile_priv *q = prof_xcalloc(1, sizeof *q);
	q->pub.command = prof_xstrdup("");
	q->pub.engine = prof_xstrdup("");
	return &q->pub;
}

void prof_free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nmappings; i++)
		free(p->mappings[i].path), free(p->mappings[i].build_id);
	for (size_t i = 0; i < p->nfunctions; i++) {
		struct prof_function *f = &p->functions[i];
		free(f->name), free(f->system_name), free(f->filename);
	}
	for (size_t i = 0; i < p->nlocations; i++)
		free(p->locations[i].lines);
	for (size_t i = 0; i < p->nsamples; i++)
		prof_free_sample(&p->samples[i]);
	for (size_t i = 0; i < p->nprocesses; i++)
		free(p->processes[i].cmdline);
	for (size_t i = 0; i < p->ncomments; i++)
		free(p->comments[i]);
	free(p->mappings), free(p->functions), free(p->locations), free(p->samples);
	free(p->processes), free(p->comments), free(p->command), free(p->engine);
	struct profile_priv *q = priv(p);
	prof_index_free(&q->funcs), prof_index_free(&q->locs), prof_index_free(&q->samples);
	prof_index_free(&q->maps);
	free(q);
}

void prof_free_sample(struct prof_sample *s)
{
	free(s->locs), free(s->thread), free(s->comm);
	s->locs = NULL, s->thread = s->comm = NULL;
}

void prof_rehash_samples(struct profile *p)
{
	struct profile_priv *q = priv(p);
	prof_index_free(&q->samples);
	prof_index_reserve(&q->samples, p->nsamples, 64, hash_at_sample, p);
}

uint64_t prof_add_mapping(struct profile *p, const struct prof_mapping *m)
{
	struct profile_priv *q = priv(p);
	p->mappings = prof_xgrow(p->mappings, p->nmappings, &q->capm, 16, sizeof *p->mappings);
	struct prof_mapping *d = &p->mappings[p->nmappings++];
	*d = *m;
	d->path = prof_xstrdup(m->path);
	d->build_id = prof_xstrdup(m->build_id);
	return p->nmappings;
}

uint64_t prof_intern_mapping(struct profile *p, const struct prof_mapping *m)
{
	struct profile_priv *q = priv(p);
	prof_index_reserve(&q->maps, p->nmappings, 64, hash_at_mapping, p);
	size_t at = prof_index_first(&q->maps, hash_mapping(m));
	for (; q->maps.slots[at]; at = prof_index_next(&q->maps, at)) {
		const struct prof_mapping *o = &p->mappings[q->maps.slots[at] - 1];
		if (o->start == m->start && o->limit == m->limit && o->file_offset == m->file_offset &&
		    !strcmp(o->path, m->path) && !strcmp(o->build_id, m->build_id))
			return q->maps.slots[at];
	}
	uint64_t id = prof_add_mapping(p, m);
	q->maps.slots[at] = (uint32_t)id;
	return id;
}

uint64_t prof_intern_function(struct profile *p, const char *name, const char *system_name,
                              const char *filename, int64_t start_line)
{
	struct profile_priv *q = priv(p);
	name = name ? name : "";
	struct prof_function key = {(char *)name, (char *)(system_name ? system_name : name),
	                            (char *)(filename ? filename : ""), start_line};
	prof_index_reserve(&q->funcs, p->nfunctions, 64, hash_at_function, p);
	size_t at = prof_index_first(&q->funcs, hash_function(&key));
	for (; q->funcs.slots[at]; at = prof_index_next(&q->funcs, at)) {
		const struct prof_function *f = &p->functions[q->funcs.slots[at] - 1];
		if (f->start_line == start_line && !strcmp(f->name, key.name) &&
		    !strcmp(f->system_name, key.system_name) && !strcmp(f->filename, key.filename))
			return q->funcs.slots[at];
	}
	p->functions = prof_xgrow(p->functions, p->nfunctions, &q->capf, 16, sizeof *p->functions);
	struct prof_function *f = &p->functions[p->nfunctions++];
	f->name = prof_xstrdup(key.name);
	f->system_name = prof_xstrdup(key.system_name);
	f->filename = prof_xstrdup(key.filename);
	f->start_line = start_line;
	q->funcs.slots[at] = p->nfunctions;
	return p->nfunctions;
}

uint64_t prof_add_location(struct profile *p, uint64_t mapping_id, uint64_t address)
{
	struct profile_priv *q = priv(p);
	struct prof_location key = {mapping_id, address, 0, NULL};
	prof_index_reserve(&q->locs, p->nlocations, 64, hash_at_location, p);
	size_t at = prof_index_first(&q->locs, hash_location(&key));
	while (q->locs.slots[at])
		at = prof_index_next(&q->locs, at);
	p->locations = prof_xgrow(p->locations, p->nlocations, &q->capl, 16, sizeof *p->locations);
	p->locations[p->nlocations++] = key;
	q->locs.slots[at] = p->nlocations;
	return p->nlocations;
}

uint64_t prof_intern_location(struct profile *p, uint64_t mapping_id, uint64_t address)
{
	struct profile_priv *q = priv(p);
	struct prof_location key = {mapping_id, address, 0, NULL};
	prof_index_reserve(&q->locs, p->nlocations, 64, hash_at_location, p);
	size_t at = prof_index_first(&q->locs, hash_location(&key));
	for (; q->locs.slots[at]; at = prof_index_next(&q->locs, at)) {
		const struct prof_location *l = &p->locations[q->locs.slots[at] - 1];
		if (l->mapping_id == mapping_id && l->address == address)
			return q->locs.slots[at];
	}
	return prof_add_location(p, mapping_id, address);
}

void prof_add_sample_ns(struct profile *p, const uint64_t *locs, size_t nlocs, int64_t count,
                        int64_t cpu_ns, uint32_t pid, uint32_t tid, const char *thread,
                        const char *comm)
{
	struct profile_priv *q = priv(p);
	struct prof_sample key = {nlocs, (uint64_t *)locs, 0, 0, pid, tid, NULL, NULL};
	prof_index_reserve(&q->samples, p->nsamples, 64, hash_at_sample, p);
	size_t at = prof_index_first(&q->samples, hash_sample(&key));
	for (; q->samples.slots[at]; at = prof_index_next(&q->samples, at)) {
		struct prof_sample *s = &p->samples[q->samples.slots[at] - 1];
		if (s->pid == pid && s->tid == tid && s->nlocs == nlocs &&
		    (nlocs == 0 || !memcmp(s->locs, locs, nlocs * sizeof *locs))) {
			s->count += count;
			s->cpu_ns += cpu_ns;
			return;
		}
	}
	p->samples = prof_xgrow(p->samples, p->nsamples, &q->caps, 16, sizeof *p->samples);
	struct prof_sample *s = &p->samples[p->nsamples++];
	*s = key;
	s->locs = prof_xrealloc(NULL, nlocs, sizeof *locs);
	if (nlocs)
		memcpy(s->locs, locs, nlocs * sizeof *locs);
	s->count = count;
	s->cpu_ns = cpu_ns;
	s->thread = prof_xstrdup(thread);
	s->comm = prof_xstrdup(comm);
	q->samples.slots[at] = p->nsamples;
}

void prof_add_sample(struct profile *p, const uint64_t *locs, size_t nlocs, int64_t count,
                     uint32_t pid, uint32_t tid, const char *thread, const char *comm)
{
	prof_add_sample_ns(p, locs, nlocs, count, count * p->period_ns, pid, tid, thread, comm);
}

void prof_set_lines(struct profile *p, uint64_t location_id, const struct prof_line *lines,
                    size_t n)
{
	struct prof_location *l = &p->locations[location_id - 1];
	free(l->lines);
	l->lines = n ? prof_xrealloc(NULL, n, sizeof *lines) : NULL;
	if (n)
		memcpy(l->lines, lines, n * sizeof *lines);
	l->nlines = n;
}

void prof_add_process(struct profile *p, uint32_t pid, uint32_t ppid, const char *cmdline)
{
	struct profile_priv *q = priv(p);
	p->processes = prof_xgrow(p->processes, p->nprocesses, &q->capp, 16, sizeof *p->processes);
	p->processes[p->nprocesses++] = (struct prof_process){pid, ppid, prof_xstrdup(cmdline)};
}

void prof_add_comment(struct profile *p, const char *text)
{
	struct profile_priv *q = priv(p);
	p->comments = prof_xgrow(p->comments, p->ncomments, &q->capc, 16, sizeof *p->comments);
	p->comments[p->ncomments++] = prof_xstrdup(text);
}

void prof_set_string(char **field, const char *value)
{
	char *v = prof_xstrdup(value);
	free(*field);
	*field = v;
}

int64_t prof_total(const struct profile *p)
{
	int64_t t = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		t += p->samples[i].count;
	return t;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static size_t distinct(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_u64);
	size_t d = 0;
	for (size_t i = 0; i < n; i++)
		d += i == 0 || v[i] != v[i - 1];
	return d;
}

/* One definition for every place that prints these counts (record's
 * summary, the report header, the HTML page), so they cannot disagree:
 * a process is a pid (an exec'd image is the same process), whether or
 * not it was sampled; a thread is a (pid, tid) with samples. */
void prof_count_tasks(const struct profile *p, size_t *processes, size_t *threads)
{
	size_t n = p->nprocesses + p->nsamples;
	uint64_t *v = prof_xrealloc(NULL, n ? n : 1, sizeof *v);
	for (size_t i = 0; i < p->nprocesses; i++)
		v[i] = p->processes[i].pid;
	for (size_t i = 0; i < p->nsamples; i++)
		v[p->nprocesses + i] = p->samples[i].pid;
	*processes = distinct(v, n);
	for (size_t i = 0; i < p->nsamples; i++)
		v[i] = (uint64_t)p->samples[i].pid << 32 | p->samples[i].tid;
	*threads = distinct(v, p->nsamples);
	free(v);
}
