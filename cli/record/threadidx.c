/*
 * threadidx.c - the threads of an image, found by tid.
 *
 * An open-addressing index (slots hold an entry's index + 1, 0: empty; at
 * most half full) over im->threads, which only grows while the recording
 * runs.  Every sample record names its thread: a walk of the array per
 * record cost a process of 40,000 short threads the most of the record
 * process's CPU, and the array grew by one element at each new thread.
 */
#include "images.h"
#include "../model/profile.h"

#include <stdlib.h>
#include <string.h>

static size_t thread_slot(uint32_t tid, size_t cap)
{
	return (size_t)((tid * 0x9e3779b1u) >> 7) & (cap - 1);
}

static void thread_index_grow(struct image *im)
{
	size_t cap = im->thread_index_cap ? 2 * im->thread_index_cap : 64;
	size_t *index = prof_xcalloc(cap, sizeof *index);
	for (size_t i = 0; i < im->nthreads; i++) {
		size_t at = thread_slot(im->threads[i].tid, cap);
		while (index[at])
			at = (at + 1) & (cap - 1);
		index[at] = i + 1;
	}
	free(im->thread_index);
	im->thread_index = index;
	im->thread_index_cap = cap;
}

/* The entry of tid, or NULL; *slot: where it is, or where it would go. */
static struct thread_name *thread_find(const struct image *im, uint32_t tid, size_t *slot)
{
	size_t cap = im->thread_index_cap, at = cap ? thread_slot(tid, cap) : 0;
	for (; cap && im->thread_index[at]; at = (at + 1) & (cap - 1))
		if (im->threads[im->thread_index[at] - 1].tid == tid)
			break;
	*slot = at;
	return cap && im->thread_index[at] ? &im->threads[im->thread_index[at] - 1] : NULL;
}

struct thread_name *image_thread_entry(struct image *im, uint32_t tid, int *added)
{
	size_t slot;
	struct thread_name *t = thread_find(im, tid, &slot);
	*added = !t;
	if (t)
		return t;
	if (2 * (im->nthreads + 1) > im->thread_index_cap) {
		thread_index_grow(im);
		thread_find(im, tid, &slot);
	}
	im->threads = prof_xgrow(im->threads, im->nthreads, &im->capthreads, 8, sizeof *im->threads);
	t = &im->threads[im->nthreads++];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	im->thread_index[slot] = im->nthreads;
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
