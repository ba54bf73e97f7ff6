/*
 * keep.c - the strings a process keeps from its start, packed together.
 *
 * A process's start under the agent keeps a few strings for its whole
 * life: the program's path, the name the loader gave the agent, the
 * cache directory of the unwind tables, the command line, the PROFIL_*
 * variables an exec must carry.  Each had a buffer of its own, as large
 * as the longest value it must take (4 or 8 KiB, in .lbss), and each
 * value, a few dozen bytes, was written at its buffer's start: one page
 * each, one page fault each in every process (10-28 us apiece on a PVM
 * guest), where the values together fill a fraction of one page.  Here
 * they are written one after another into one array, each taking what
 * it needs and no more, so a start writes one page where it wrote five.
 *
 * Kept strings are never freed or moved: a pointer to one is good until
 * the process ends or execs (a forked child has its own copy of all).
 * The array is as large as every user's longest value together
 * (KEEP_BYTES), so a start never runs out; a caller that does (a value
 * kept again and again) gets NULL and does as it did with a value too
 * long for its buffer.
 *
 * base_keep_open() gives the free space itself, for a value whose length
 * is known only once it is written there (a file read, readlink()), and
 * holds the array until base_keep_close() says how much of it to keep:
 * none, for scratch (perf_probe.c reads /proc/self/status there at a
 * start rather than into 16 KiB of stack, whose far end is a fresh page).
 * Not for signal handlers; threads take turns (an atomic flag, held for
 * one copy or one read; base_keep_try_open() does not wait).
 */
#include "base/base.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>

/* Under `held`: used, and the bytes from kept + used on. */
static char kept[KEEP_BYTES] LARGE_STATIC;
static size_t used;
static atomic_flag held = ATOMIC_FLAG_INIT;

char *base_keep_try_open(size_t *room)
{
	if (atomic_flag_test_and_set_explicit(&held, memory_order_acquire))
		return NULL;
	*room = sizeof kept - used;
	return kept + used;
}

/* Waits while another thread holds the array (one copy or one read), but
 * not forever: a child made without fork()'s handlers (_Fork(), a raw
 * clone()) while a thread of its parent held it has a copy that nobody
 * will let go. */
char *base_keep_open(size_t *room)
{
	char *at;
	for (int tries = 0; !(at = base_keep_try_open(room)); tries++) {
		if (tries == 1000)
			return NULL;
		sched_yield();
	}
	return at;
}

const char *base_keep_close(size_t n)
{
	const char *at = kept + used;
	if (n > sizeof kept - used)
		n = 0; /* more than the room it was given: a caller's mistake */
	used += n;
	atomic_flag_clear_explicit(&held, memory_order_release);
	return n ? at : NULL;
}

/* fork()'s child handler: the thread that held the array is not in the
 * child, and what it had not closed was not kept. */
void base_keep_forked_child(void)
{
	atomic_flag_clear_explicit(&held, memory_order_relaxed);
}

const char *base_keep(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	if (n >= max)
		return NULL;
	size_t room;
	char *at = base_keep_open(&room);
	if (!at)
		return NULL;
	if (n + 1 > room)
		return base_keep_close(0);
	memcpy(at, s, n + 1);
	return base_keep_close(n + 1);
}
