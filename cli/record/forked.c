/*
 * forked.c - what forked children without a ring file last said of
 * themselves, for reaped.c.
 *
 * A forked child is sampled into memory of its own until it needs a ring
 * file (agent/defer.c); one that ends or execs before has no image, only
 * its words in its nearest ancestor's ring (ring.h RING_FORKED: its pid,
 * and whether it was exec'ing), all in that one image, in order.  Its
 * last word tells whether it ended before its first sample (then reaped.c
 * credits its whole time, told by its parent's reap) or became a program
 * no agent entered (then its time is that program's).
 *
 * A child's pid is the one it had in its own PID namespace, which is its
 * ancestor's: the words of an image of another namespace are keyed by
 * that namespace (its inode, nspid.c; UNKNOWN_NS when it was not told),
 * so that they never answer for a process of ours with the same number.
 *
 * The word written at the fork carries the call that forked the child
 * (its callers, as locations once record_build() has made them); a later
 * word (an exec that failed) carries none, and the first one's is kept.
 */
#include "record_int.h"
#include "../model/profile.h"

#include <stdlib.h>

#define UNKNOWN_NS UINT64_MAX

struct word {
	uint64_t pidns; /* 0: ours */
	uint32_t pid, order;
	int execing;
	const uint64_t *path; /* locations of the fork's callers, or NULL */
	size_t npath;
};

struct forked_words {
	struct word *v;
	size_t n;
};

static int by_child_then_order(const void *a, const void *b)
{
	const struct word *x = a, *y = b;
	if (x->pidns != y->pidns)
		return x->pidns < y->pidns ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static uint64_t namespace_of(const struct image *im)
{
	return !im->ns_pid ? 0 : im->pidns ? im->pidns : UNKNOWN_NS;
}

struct forked_words *forked_words(const struct images *set)
{
	size_t cap = 1, k = 0;
	for (size_t i = 0; i < set->n; i++)
		cap += set->v[i].nforked;
	struct forked_words *fw = prof_xcalloc(1, sizeof *fw);
	struct word *w = prof_xcalloc(cap, sizeof *w);
	for (size_t i = 0; i < set->n; i++)
		for (size_t j = 0; j < set->v[i].nforked; j++, k++) {
			const struct forked_word *f = &set->v[i].forked[j];
			w[k] = (struct word){namespace_of(&set->v[i]), f->pid, (uint32_t)k,
			                     f->execing, f->locs, f->locs ? f->npcs : 0};
		}
	qsort(w, k, sizeof *w, by_child_then_order);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && w[m - 1].pid == w[i].pid && w[m - 1].pidns == w[i].pidns) {
			m--; /* a later word of the same child: its state wins */
			if (!w[i].path) {
				w[i].path = w[m].path;
				w[i].npath = w[m].npath;
			}
		}
		w[m++] = w[i];
	}
	fw->v = w;
	fw->n = m;
	return fw;
}

static int child_vs_word(const void *key, const void *elem)
{
	const struct word *k = key, *e = elem;
	if (k->pidns != e->pidns)
		return k->pidns < e->pidns ? -1 : 1;
	return k->pid < e->pid ? -1 : k->pid > e->pid;
}

int forked_ended_unsampled(const struct forked_words *fw, uint64_t pidns, uint32_t pid,
                           const uint64_t **path, size_t *npath)
{
	struct word key = {pidns, pid, 0, 0, NULL, 0};
	const struct word *f = fw->n ? bsearch(&key, fw->v, fw->n, sizeof key, child_vs_word) : NULL;
	*path = f ? f->path : NULL;
	*npath = f ? f->npath : 0;
	return f && !f->execing;
}

void forked_words_free(struct forked_words *fw)
{
	if (fw)
		free(fw->v);
	free(fw);
}
