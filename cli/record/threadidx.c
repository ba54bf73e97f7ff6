/*
 * threadidx.c - the threads of an image, found by tid.
 *
 * An index (model/index.h) over im->threads, which only grows while the
 * recording runs.  Every sample record names its thread: a walk of the
 * array per record cost a process of 40,000 short threads the most of the
 * record process's CPU, and the array grew by one element at each new
 * thread.
 */
#include "images.h"
#include "../model/profile.h"

#include <stdlib.h>
#include <string.h>

static uint64_t tid_hash(uint32_t tid)
{
	return (tid * 0x9e3779b1u) >> 7;
}

static uint64_t tid_hash_at(const void *im, size_t i)
{
	return tid_hash(((const struct image *)im)->threads[i].tid);
}

/* The entry of tid, or NULL; *slot: where it is, or where it would go. */
static struct thread_name *thread_find(const struct image *im, uint32_t tid, size_t *slot)
{
	const struct prof_index *x = &im->thread_index;
	size_t at = x->cap ? prof_index_first(x, tid_hash(tid)) : 0;
	for (; x->cap && x->slots[at]; at = prof_index_next(x, at))
		if (im->threads[x->slots[at] - 1].tid == tid)
			break;
	*slot = at;
	return x->cap && x->slots[at] ? &im->threads[x->slots[at] - 1] : NULL;
}

struct thread_name *image_thread_entry(struct image *im, uint32_t tid, int *added)
{
	size_t slot;
	/* room first, as every index.h user makes it: the slot found stays */
	prof_index_reserve(&im->thread_index, im->nthreads, 64, tid_hash_at, im);
	struct thread_name *t = thread_find(im, tid, &slot);
	*added = !t;
	if (t)
		return t;
	im->threads = prof_xgrow(im->threads, im->nthreads, &im->capthreads, 8, sizeof *im->threads);
	t = &im->threads[im->nthreads++];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	im->thread_index.slots[slot] = im->nthreads;
	return t;
}

const char *image_thread_name(const struct image *im, uint32_t tid)
{
	size_t slot;
	const struct thread_name *t = thread_find(im, tid, &slot);
	if (t)
		return t->name;
	return "";
}
