/*
 * test-keep.c - the strings a process keeps from its start
 * (src/base/keep.c): packed one after another, never moved, refused
 * (NULL) rather than cut when too long or out of room, the free space
 * lent and given back whole, and threads taking turns.  The runner has
 * its own copy of keep.c (TEST_AGENT_SRC), fresh in each test's process.
 */
#include "runner.h"
#include "../src/base/base.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

TEST_IMPL(keep_packs_strings_one_after_another)
{
	const char *a = base_keep("/usr/bin/true", 4096);
	const char *b = base_keep("/root/.cache/profil/unwind", 4096);
	const char *c = base_keep("", 4096);
	ASSERT(a && b && c);
	ASSERT_EQ(strcmp(a, "/usr/bin/true"), 0);
	ASSERT_EQ(strcmp(b, "/root/.cache/profil/unwind"), 0);
	ASSERT_EQ(c[0], '\0');
	/* each takes its length and its NUL, no more: one page for all */
	ASSERT(b == a + sizeof "/usr/bin/true");
	ASSERT(c == b + sizeof "/root/.cache/profil/unwind");
	return 0;
}

TEST_IMPL(keep_refuses_what_is_too_long_and_keeps_the_rest)
{
	char big[300];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	ASSERT(base_keep(big, 299) == NULL); /* 299 characters: not shorter */
	const char *k = base_keep(big, 300);
	ASSERT(k && strcmp(k, big) == 0);
	/* filled to the end: refused whole, never cut, and nothing kept
	 * before is touched */
	const char *first = base_keep("first", 16);
	size_t kept = 0;
	for (const char *more; (more = base_keep(big, sizeof big)); kept++)
		if (strcmp(more, big) != 0)
			FAIL_AT("string %zu kept cut: %zu characters", kept, strlen(more));
	ASSERT(kept >= KEEP_BYTES / sizeof big - 2);
	ASSERT(kept <= KEEP_BYTES / sizeof big);
	ASSERT_EQ(strcmp(first, "first"), 0);
	ASSERT_EQ(strcmp(k, big), 0);
	size_t room;
	char *at = base_keep_open(&room);
	ASSERT(at != NULL);
	ASSERT(room < sizeof big);
	if (room > 1) { /* what is left still takes a short one */
		base_keep_close(0);
		ASSERT(base_keep("", 1) != NULL);
	} else {
		base_keep_close(0);
	}
	return 0;
}

TEST_IMPL(keep_lends_free_space_and_takes_back_what_is_not_kept)
{
	size_t room, room2;
	char *at = base_keep_open(&room);
	ASSERT(at != NULL);
	ASSERT_EQ(room, KEEP_BYTES);
	/* held: another taker does not get it */
	ASSERT(base_keep_try_open(&room2) == NULL);
	memset(at, 'S', 1000); /* scratch, kept none of it */
	ASSERT(base_keep_close(0) == NULL);
	char *again = base_keep_open(&room2);
	ASSERT(again == at);
	ASSERT_EQ(room2, room);
	memcpy(again, "read\0", 5);
	const char *kept = base_keep_close(5);
	ASSERT(kept == at);
	ASSERT_EQ(strcmp(kept, "read"), 0);
	/* more than it was lent: a mistake, nothing kept */
	char *third = base_keep_open(&room);
	ASSERT(third == at + 5);
	ASSERT(base_keep_close(room + 1) == NULL);
	ASSERT(base_keep("next", 8) == at + 5);
	return 0;
}

#define KEEPERS 4
#define EACH 400

static void *keeper(void *arg)
{
	long id = (long)arg;
	const char **got = calloc(EACH, sizeof *got);
	for (int i = 0; got && i < EACH; i++) {
		char s[48];
		snprintf(s, sizeof s, "t%ld-%d", id, i);
		got[i] = base_keep(s, sizeof s);
	}
	return got;
}

TEST_IMPL(keep_threads_take_turns)
{
	pthread_t t[KEEPERS];
	const char **got[KEEPERS];
	for (long i = 0; i < KEEPERS; i++)
		ASSERT_OK(pthread_create(&t[i], NULL, keeper, (void *)i));
	for (int i = 0; i < KEEPERS; i++)
		ASSERT_OK(pthread_join(t[i], (void **)&got[i]));
	/* every string whole and where it was said to be, none overlapping */
	size_t total = 0;
	for (long i = 0; i < KEEPERS; i++) {
		ASSERT(got[i] != NULL);
		for (int j = 0; j < EACH; j++) {
			char want[48];
			snprintf(want, sizeof want, "t%ld-%d", i, j);
			if (!got[i][j] || strcmp(got[i][j], want) != 0)
				FAIL_AT("thread %ld string %d: %s, want %s", i, j,
				        got[i][j] ? got[i][j] : "(null)", want);
			total += strlen(want) + 1;
		}
	}
	size_t room;
	char *end = base_keep_open(&room);
	ASSERT(end != NULL);
	base_keep_close(0);
	ASSERT_EQ(KEEP_BYTES - room, total);
	for (int i = 0; i < KEEPERS; i++)
		free(got[i]);
	return 0;
}

/* A holder that never lets go (a child forked while its parent's thread
 * held the array has such a copy): a taker gives up, NULL, and holds
 * nothing. */
static void *late_taker(void *arg)
{
	(void)arg;
	return (void *)base_keep("late", 8);
}

TEST_IMPL(keep_gives_up_on_a_holder_that_never_lets_go)
{
	size_t room;
	ASSERT(base_keep_open(&room) != NULL); /* and never closed */
	pthread_t t;
	void *got = (void *)1;
	ASSERT_OK(pthread_create(&t, NULL, late_taker, NULL));
	ASSERT_OK(pthread_join(t, &got));
	ASSERT(got == NULL);
	return 0;
}
