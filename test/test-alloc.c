/*
 * test-alloc.c - what base/ gives the parts that must not call the
 * program's allocator (src/base/alloc.c): the allocator, the in-place
 * sort and the thread listing.  The runner links its own copies of the
 * three files (Makefile, TEST_AGENT_SRC); under AddressSanitizer the
 * allocator's calls go to the C library's, as the library's do.
 */
#include "runner.h"
#include "base/base.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;

static unsigned long long rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Sizes around every class boundary and the large blocks' mappings. */
static size_t size_at(unsigned i)
{
	static const size_t edges[] = {0, 1, 15, 16, 17, 31, 32, 33, 48, 49, 112, 113, 240,
	                               241, 496, 497, 1008, 1009, 2032, 2033, 4080, 4081,
	                               4096, 8192, 65536, 300000};
	return edges[i % (sizeof edges / sizeof *edges)];
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (unsigned char)(seed * 31 + k);
}

static int holds(const unsigned char *p, size_t n, unsigned seed)
{
	for (size_t k = 0; k < n; k++)
		if (p[k] != (unsigned char)(seed * 31 + k))
			return 0;
	return 1;
}

/* Every block aligned to 16, none overlapping another (each keeps its
 * pattern while all are live), freed blocks reused without harm. */
TEST_IMPL(alloc_blocks_hold_what_they_say)
{
	enum { N = 600 };
	static unsigned char *live[N];
	static size_t len[N];
	for (int round = 0; round < 3; round++) {
		for (unsigned i = 0; i < N; i++) {
			len[i] = size_at(i + (unsigned)round);
			live[i] = mem_alloc(len[i]);
			ASSERT(live[i] != NULL);
			ASSERT_EQ((uintptr_t)live[i] % 16, 0);
			fill(live[i], len[i], i);
		}
		for (unsigned i = 0; i < N; i++)
			ASSERT(holds(live[i], len[i], i));
		for (unsigned i = 0; i < N; i += 2) /* half back: the next round reuses */
			mem_free(live[i]);
		for (unsigned i = 1; i < N; i += 2)
			ASSERT(holds(live[i], len[i], i));
		for (unsigned i = 1; i < N; i += 2)
			mem_free(live[i]);
	}
	mem_free(NULL);
	return 0;
}

TEST_IMPL(alloc_realloc_keeps_contents)
{
	static const size_t steps[] = {1, 20, 40, 100, 300, 1000, 4000, 4081, 9000, 70000,
	                               200000, 5000, 60, 8, 0, 33};
	unsigned char *p = mem_realloc(NULL, 10);
	size_t have = 10;
	ASSERT(p != NULL);
	fill(p, have, 7);
	for (size_t i = 0; i < sizeof steps / sizeof *steps; i++) {
		size_t want = steps[i], kept = want < have ? want : have;
		unsigned char *q = mem_realloc(p, want);
		ASSERT(q != NULL);
		ASSERT_EQ((uintptr_t)q % 16, 0);
		ASSERT(holds(q, kept, 7));
		fill(q, want, 7);
		p = q, have = want;
	}
	mem_free(p);
	char *s = mem_strdup("a string of ours");
	ASSERT(s && strcmp(s, "a string of ours") == 0);
	mem_free(s);
	return 0;
}

/* calloc zeroes a reused block too, and refuses a product that overflows. */
TEST_IMPL(alloc_calloc_zeroes_and_checks)
{
	for (size_t n = 1; n <= 8192; n *= 2) {
		unsigned char *p = mem_alloc(n);
		ASSERT(p != NULL);
		memset(p, 0xa5, n);
		mem_free(p);
		unsigned char *z = mem_calloc(n, 1);
		ASSERT(z != NULL);
		for (size_t k = 0; k < n; k++)
			ASSERT_EQ(z[k], 0);
		mem_free(z);
	}
	errno = 0;
	ASSERT(mem_calloc(SIZE_MAX / 2, 3) == NULL);
	ASSERT_EQ(errno, ENOMEM);
	errno = 0;
	ASSERT(mem_alloc(SIZE_MAX - 8) == NULL);
	ASSERT_EQ(errno, ENOMEM);
	return 0;
}

static _Atomic int churning = 1;

static void *churn(void *unused)
{
	(void)unused;
	void *keep[64] = {0};
	for (unsigned long i = 0; atomic_load(&churning); i++) {
		/* small blocks only: a large one is a mapping, whose mmap and
		 * munmap wait while a fork copies the address space */
		unsigned k = (unsigned)(rng() % 64);
		mem_free(keep[k]);
		keep[k] = mem_alloc(size_at((unsigned)i) % 4000);
	}
	for (unsigned k = 0; k < 64; k++)
		mem_free(keep[k]);
	return NULL;
}

/*
 * A child forked while another thread allocates (as the helper thread
 * does at any moment) must be able to allocate: without the fork handlers
 * (process/fork.c registers them in the library) a child inherited the
 * lock held by a thread it does not have, and its first allocation
 * waited for ever.  Each child allocates, frees and exits; the parent
 * gives it 10 s before taking it for stuck.
 */
TEST_IMPL(alloc_fork_while_another_thread_allocates)
{
	if (skip_under("asan", "the ASan build's allocator is the C library's (src/base/alloc.c)"))
		return 0;
	ASSERT_OK(pthread_atfork(alloc_atfork_prepare, alloc_atfork_parent, alloc_atfork_child));
	pthread_t t;
	ASSERT_OK(pthread_create(&t, NULL, churn, NULL));
	for (int i = 0; i < 200; i++) {
		pid_t child = fork();
		ASSERT(child >= 0);
		if (child == 0) {
			alarm(10);
			for (unsigned k = 0; k < 50; k++)
				mem_free(mem_alloc(size_at(k)));
			_exit(0);
		}
		int status;
		ASSERT_EQ(waitpid(child, &status, 0), child);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			FAIL_AT("child %d: status %#x (stuck on the allocator's lock?)", i, status);
	}
	atomic_store(&churning, 0);
	ASSERT_OK(pthread_join(t, NULL));
	return 0;
}

struct elem {
	unsigned key;
	unsigned char payload[68]; /* 72 bytes: swaps in more than one piece */
};

static unsigned long comparisons;

static int by_key(const void *a, const void *b)
{
	comparisons++;
	unsigned x = ((const struct elem *)a)->key, y = ((const struct elem *)b)->key;
	return x < y ? -1 : x > y;
}

static int by_uint(const void *a, const void *b)
{
	comparisons++;
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* Patterns that break naive quicksorts, and random ones. */
static unsigned key_of(int pattern, size_t i, size_t n)
{
	switch (pattern) {
	case 0: return (unsigned)i;                        /* sorted */
	case 1: return (unsigned)(n - i);                  /* reversed */
	case 2: return 7;                                  /* all equal */
	case 3: return (unsigned)(i < n / 2 ? i : n - i);  /* organ pipe */
	case 4: return (unsigned)(rng() % 4);              /* few keys */
	default: return (unsigned)rng();
	}
}

static double log2_of(size_t n)
{
	double l = 0;
	while (n > 1)
		n >>= 1, l += 1;
	return l + 1;
}

/* The same order as qsort's, for every pattern and size; within
 * 4 n log2 n comparisons, introsort's bound (2 log2 n levels of
 * partitions, n comparisons each, then at most heapsort's 2 n log2 n): an
 * O(n^2) sort of 100,000 sorted or equal keys would take billions. */
TEST_IMPL(sort_inplace_orders_as_qsort)
{
	static const size_t sizes[] = {0, 1, 2, 3, 5, 12, 13, 14, 100, 1000, 100000};
	for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
		size_t n = sizes[s];
		unsigned *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
		ASSERT(a && b);
		for (int pattern = 0; pattern < 6; pattern++) {
			for (size_t i = 0; i < n; i++)
				a[i] = b[i] = key_of(pattern, i, n);
			comparisons = 0;
			sort_inplace(a, n, sizeof *a, by_uint);
			if (n > 1 && comparisons > 4 * n * log2_of(n))
				FAIL_AT("n %zu pattern %d: %lu comparisons", n, pattern, comparisons);
			qsort(b, n, sizeof *b, by_uint);
			ASSERT(memcmp(a, b, n * sizeof *a) == 0);
		}
		free(a), free(b);
	}
	return 0;
}

/* Large elements: every byte of each moves with its key. */
TEST_IMPL(sort_inplace_moves_whole_elements)
{
	enum { N = 3000 };
	static struct elem v[N];
	for (size_t i = 0; i < N; i++) {
		v[i].key = (unsigned)(rng() % 500);
		memset(v[i].payload, (int)(v[i].key * 7 + 1), sizeof v[i].payload);
	}
	sort_inplace(v, N, sizeof v[0], by_key);
	for (size_t i = 0; i < N; i++) {
		ASSERT(i == 0 || v[i - 1].key <= v[i].key);
		for (size_t k = 0; k < sizeof v[i].payload; k++)
			ASSERT_EQ(v[i].payload[k], (unsigned char)(v[i].key * 7 + 1));
	}
	return 0;
}

enum { THREADS = 6 };
static pid_t tids[THREADS];
static pthread_barrier_t started, done;

static void *park(void *arg)
{
	tids[(intptr_t)arg] = (pid_t)syscall(SYS_gettid);
	pthread_barrier_wait(&started);
	pthread_barrier_wait(&done);
	return NULL;
}

struct seen {
	pid_t tid[64];
	int n;
	int stop_after;
};

static int note_tid(pid_t tid, void *arg)
{
	struct seen *s = arg;
	if (s->n < 64)
		s->tid[s->n++] = tid;
	return s->stop_after && s->n == s->stop_after ? 42 : 0;
}

static int listed(const struct seen *s, pid_t tid)
{
	for (int i = 0; i < s->n; i++)
		if (s->tid[i] == tid)
			return 1;
	return 0;
}

/* Every thread once, the main one included, and nothing else; the first
 * non-zero answer ends the listing and is returned. */
TEST_IMPL(tasklist_lists_every_thread)
{
	pthread_t t[THREADS];
	ASSERT_OK(pthread_barrier_init(&started, NULL, THREADS + 1));
	ASSERT_OK(pthread_barrier_init(&done, NULL, THREADS + 1));
	for (intptr_t i = 0; i < THREADS; i++)
		ASSERT_OK(pthread_create(&t[i], NULL, park, (void *)i));
	pthread_barrier_wait(&started);
	struct seen all = {.n = 0};
	ASSERT_EQ(tasklist_each(note_tid, &all), 0);
	/* ours, each once (a sanitizer's own thread may be among them) */
	ASSERT(all.n >= THREADS + 1);
	for (int i = 0; i < all.n; i++) {
		ASSERT_EQ(syscall(SYS_tgkill, getpid(), all.tid[i], 0), 0);
		for (int j = 0; j < i; j++)
			ASSERT(all.tid[j] != all.tid[i]);
	}
	ASSERT(listed(&all, getpid()));
	for (int i = 0; i < THREADS; i++)
		ASSERT(listed(&all, tids[i]));
	struct seen some = {.n = 0, .stop_after = 3};
	ASSERT_EQ(tasklist_each(note_tid, &some), 42);
	ASSERT_EQ(some.n, 3);
	pthread_barrier_wait(&done);
	for (int i = 0; i < THREADS; i++)
		ASSERT_OK(pthread_join(t[i], NULL));
	return 0;
}
