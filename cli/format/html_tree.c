/*
 * html_tree.c - the call tree the HTML page draws: frames (function and
 * module, interned), nodes (one per call path, root first, as a flame
 * graph lays them out), threads, and samples as (node, thread, count).
 * A sample's frames are named as every report names them (names.c), its
 * inlined functions frames of their own, as in folded stacks.
 */
#include <stdlib.h>
#include <string.h>

#include "html_int.h"

static uint64_t mix(struct hkey k)
{
	uint64_t h = k.a * 0x9e3779b97f4a7c15ull ^ k.b * 0xc2b2ae3d27d4eb4full ^ k.c;
	return h ^ h >> 31;
}

/* The slot for hash h: holds index+1 of an equal key, or 0 (free). */
typedef int eq_fn(const void *ctx, size_t index, const void *key);
static uint32_t *slot(const struct prof_index *m, uint64_t h, eq_fn *eq, const void *ctx,
                      const void *key)
{
	size_t k = prof_index_first(m, h);
	while (m->slots[k] && !eq(ctx, m->slots[k] - 1, key))
		k = prof_index_next(m, k);
	return &m->slots[k];
}

static uint64_t str_hash_of(const void *ctx, size_t i)
{
	return prof_hash_str(((const struct strtab *)ctx)->s[i]);
}
static int str_eq(const void *ctx, size_t i, const void *key)
{
	return strcmp(((const struct strtab *)ctx)->s[i], key) == 0;
}

size_t str_id(struct strtab *t, const char *s)
{
	prof_index_reserve(&t->map, t->n, 1024, str_hash_of, t);
	uint32_t *sl = slot(&t->map, prof_hash_str(s), str_eq, t, s);
	if (*sl)
		return *sl - 1;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->s = prof_xrealloc(t->s, t->cap, sizeof *t->s);
	}
	t->s[t->n] = prof_xstrdup(s);
	*sl = ++t->n;
	return t->n - 1;
}

static struct hkey frame_key(const struct htree *t, size_t i)
{
	return (struct hkey){t->frames[i].name, t->frames[i].module, 0};
}
static uint64_t frame_hash_of(const void *ctx, size_t i)
{
	return mix(frame_key(ctx, i));
}
static int frame_eq(const void *ctx, size_t i, const void *key)
{
	struct hkey a = frame_key(ctx, i);
	return !memcmp(&a, key, sizeof a);
}

static struct hkey node_key(const struct htree *t, size_t i)
{
	return (struct hkey){t->nodes[i].parent, t->nodes[i].frame, (uint64_t)t->nodes[i].inl};
}
static uint64_t node_hash_of(const void *ctx, size_t i)
{
	return mix(node_key(ctx, i));
}
static int node_eq(const void *ctx, size_t i, const void *key)
{
	struct hkey a = node_key(ctx, i);
	return !memcmp(&a, key, sizeof a);
}

size_t htree_find_frame(struct htree *t, const char *name, const char *module)
{
	struct hkey k = {str_id(&t->str, name), str_id(&t->str, module), 0};
	uint32_t *sl = t->nframes ? slot(&t->frame_map, mix(k), frame_eq, t, &k) : NULL;
	return sl && *sl ? *sl - 1 : (size_t)-1;
}

size_t htree_find_node(struct htree *t, size_t parent, size_t frame, int inl)
{
	struct hkey k = {parent, frame, (uint64_t)inl};
	uint32_t *sl = slot(&t->node_map, mix(k), node_eq, t, &k);
	return *sl ? *sl - 1 : (size_t)-1;
}

static size_t frame(struct htree *t, const struct profile *p, const struct prof_location *l,
                    size_t k)
{
	char buf[PROF_NAME_BUF];
	struct hkey key = {str_id(&t->str, prof_frame_name(p, l, k, buf)),
	                   str_id(&t->str, prof_location_module(p, l)), 0};
	prof_index_reserve(&t->frame_map, t->nframes, 1024, frame_hash_of, t);
	uint32_t *sl = slot(&t->frame_map, mix(key), frame_eq, t, &key);
	if (*sl)
		return *sl - 1;
	if (t->nframes == t->capframes) {
		t->capframes = t->capframes ? 2 * t->capframes : 256;
		t->frames = prof_xrealloc(t->frames, t->capframes, sizeof *t->frames);
	}
	uint64_t fn = k < l->nlines && l->lines[k].function_id <= p->nfunctions
	              ? l->lines[k].function_id : 0;
	t->frames[t->nframes] = (struct hframe){key.a, key.b,
		str_id(&t->str, fn ? p->functions[fn - 1].filename : ""), fn, l->mapping_id, 0, 0, 0};
	*sl = ++t->nframes;
	return t->nframes - 1;
}

static size_t node(struct htree *t, size_t parent, size_t fr, int inl)
{
	struct hkey key = {parent, fr, (uint64_t)inl};
	prof_index_reserve(&t->node_map, t->nnodes, 1024, node_hash_of, t);
	uint32_t *sl = slot(&t->node_map, mix(key), node_eq, t, &key);
	if (*sl)
		return *sl - 1;
	if (t->nnodes == t->capnodes) {
		t->capnodes = t->capnodes ? 2 * t->capnodes : 1024;
		t->nodes = prof_xrealloc(t->nodes, t->capnodes, sizeof *t->nodes);
	}
	t->nodes[t->nnodes] = (struct hnode){parent, fr, inl, 0};
	*sl = ++t->nnodes;
	return t->nnodes - 1;
}

static uint64_t thread_hash_of(const void *ctx, size_t i)
{
	const struct hthread *th = &((const struct htree *)ctx)->threads[i];
	return mix((struct hkey){th->pid, th->tid, 0});
}
static int thread_eq(const void *ctx, size_t i, const void *key)
{
	const struct hthread *th = &((const struct htree *)ctx)->threads[i];
	const struct hkey *k = key;
	return th->pid == k->a && th->tid == k->b;
}

static size_t thread(struct htree *t, const struct prof_sample *s)
{
	struct hkey key = {s->pid, s->tid, 0};
	prof_index_reserve(&t->thread_map, t->nthreads, 1024, thread_hash_of, t);
	uint32_t *sl = slot(&t->thread_map, mix(key), thread_eq, t, &key);
	if (*sl)
		return *sl - 1;
	t->threads = prof_xrealloc(t->threads, t->nthreads + 1, sizeof *t->threads);
	t->threads[t->nthreads] = (struct hthread){s->pid, s->tid, str_id(&t->str, s->thread),
	                                           str_id(&t->str, s->comm)};
	*sl = ++t->nthreads;
	return t->nthreads - 1;
}

/* Self to the leaf's frame, cum once per frame on the path. */
static void count(struct htree *t, size_t n, int64_t c, size_t si)
{
	if (n)
		t->frames[t->nodes[n].frame].self += c;
	for (; n; n = t->nodes[n].parent) {
		t->nodes[n].total += c;
		struct hframe *fr = &t->frames[t->nodes[n].frame];
		if (fr->stamp != si + 1)
			fr->stamp = si + 1, fr->cum += c;
	}
	t->nodes[0].total += c;
}

void htree_build(struct htree *t, const struct profile *p)
{
	memset(t, 0, sizeof *t);
	str_id(&t->str, "");
	node(t, 0, (size_t)-1, 0); /* the root: a frame no child has */
	t->samples = prof_xrealloc(NULL, p->nsamples + 1, sizeof *t->samples);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		size_t n = 0;
		for (size_t j = s->nlocs; j-- > 0;) {
			const struct prof_location *l = &p->locations[s->locs[j] - 1];
			for (size_t k = l->nlines ? l->nlines : 1; k-- > 0;)
				n = node(t, n, frame(t, p, l, k), k + 1 < l->nlines);
		}
		const struct prof_location *leaf = s->nlocs ? &p->locations[s->locs[0] - 1] : NULL;
		const struct prof_location *top = s->nlocs ? &p->locations[s->locs[s->nlocs - 1] - 1]
		                                           : NULL;
		t->truncated += !top || top->mapping_id == 0 ? s->count : 0;
		t->unsymbolized += !leaf || leaf->nlines == 0 || !leaf->lines[0].function_id
		                   ? s->count : 0;
		t->total += s->count;
		t->cpu_ns += s->cpu_ns;
		t->samples[t->nsamples++] = (struct hsample){n, thread(t, s), s->count};
		count(t, n, s->count, i);
	}
}

static int by_self(const void *x, const void *y, void *ctx)
{
	const struct hframe *f = ctx, *a = &f[*(const size_t *)x], *b = &f[*(const size_t *)y];
	if (a->self != b->self)
		return a->self < b->self ? 1 : -1;
	if (a->cum != b->cum)
		return a->cum < b->cum ? 1 : -1;
	return *(const size_t *)x < *(const size_t *)y ? -1 : 1;
}

size_t *htree_by_self(const struct htree *t)
{
	size_t *v = prof_xrealloc(NULL, t->nframes + 1, sizeof *v);
	for (size_t i = 0; i < t->nframes; i++)
		v[i] = i;
	qsort_r(v, t->nframes, sizeof *v, by_self, t->frames);
	return v;
}

void htree_free(struct htree *t)
{
	for (size_t i = 0; i < t->str.n; i++)
		free(t->str.s[i]);
	free(t->str.s);
	prof_index_free(&t->str.map);
	free(t->frames), free(t->nodes), free(t->threads), free(t->samples);
	prof_index_free(&t->frame_map), prof_index_free(&t->node_map);
	prof_index_free(&t->thread_map);
	memset(t, 0, sizeof *t);
}
