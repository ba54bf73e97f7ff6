/*
 * defer.c - a forked child's scratch ring: where it is sampled until it
 * needs a ring file of its own.
 *
 * Most forked children exec or exit before their first sample: a shell's
 * child between fork and exec, make's, a fork()+_exit().  Making each one
 * a ring file at the fork (the file, its mapping, its module log, the
 * checks of the recorder and of a tracer) cost it as much as the rest of
 * its life: 1.4 ms of a shell's child that execs /bin/true on a virtual
 * machine where a page fault costs 11 µs, nearly all of it faults on code
 * pages the fork does not map in the child (docs/benchmarks.md).  So the
 * child is sampled, from the fork on, into a ring in its own memory (this
 * file's static storage: pages are touched only as samples land in it),
 * published to the engine like any ring table, and gets its file when it
 * needs one (agent.c):
 *
 *   - live, from a thread that may call anything: the helper thread's
 *     start (made from the first sample whose stack proves a safe point,
 *     lazy_helper.c, or at the program's first pthread_create), the
 *     program's dlclose, a seccomp filter's install; the file's table is
 *     published, then what the scratch ring holds is copied into it;
 *   - final, where the engine's publish may not run: exit(), _exit() and
 *     exec, which may be called from a signal handler and, for exec, with
 *     the engine's lock held; what the scratch ring holds is copied into
 *     the file through a table that is never published.  The child stays
 *     deferred (an exec may fail): later samples go on into the scratch
 *     ring, and a later ending copies them into the same file.
 *
 * A child that ends or execs with nothing in its scratch ring makes no
 * file: its CPU time is its parent's reap (cli/record/reaped.c credits it
 * at [unsampled]) or the exec'd program's start-up (as a vfork child's
 * is); it tells its nearest ancestor's ring which (ring.h RING_FORKED).  A child killed by a signal before its ending loses what the
 * scratch ring held: the few samples before its first safe point.
 *
 * State: `state` and `owner` are atomics (a vfork child, sharing this
 * memory, is never the owner).  The scratch ring is written by sampling
 * handlers through the published table (ring.h's protocol) and read only
 * by the one ending it, after the table was withdrawn or replaced (the
 * engine's in-flight handshake) or with every signal blocked on the one
 * thread a deferred child has.
 */
#include "agent.h"
#include "../src/base/base.h"
#include "../src/base/ring.h"
#include "../src/engine/engine.h"

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

/* 256 KiB: a thousand samples of 30 frames; a child that reaches no
 * ending point by then drops samples as a full ring does (lost). */
#define SCRATCH_DATA (256u << 10)

static struct {
	_Alignas(4096) unsigned char head[RING_HEADER_SIZE];
	unsigned char data[SCRATCH_DATA];
} scratch LARGE_STATIC;

enum { NONE, DEFERRED, ENDING };
static _Atomic int state;
static _Atomic pid_t owner;
/* The table the scratch ring is published in: the engine retires it at
 * a live ending. */
static struct ptable *scratch_table;
/* The table final endings copy through: never published, never freed. */
static struct ptable final_table;

static struct ring_file *scratch_ring(void)
{
	return (struct ring_file *)(void *)scratch.head;
}

static pid_t pid_now(void)
{
	return (pid_t)syscall(SYS_getpid);
}

int defer_begin(uint32_t stack_depth, uint32_t modgen)
{
	struct ring_file *s = scratch_ring();
	s->data_offset = RING_HEADER_SIZE;
	s->data_size = SCRATCH_DATA;
	atomic_store(&s->head, 0);
	atomic_store(&s->tail, 0);
	atomic_store(&s->lost, 0);
	atomic_store(&s->modgen, modgen);
	struct ptable *t = ptable_new(0);
	if (!t)
		return -1;
	t->mode = PTABLE_RING;
	t->form = PFORM_RING;
	t->ring = s;
	t->ring_data = scratch.data;
	t->stack_depth = stack_depth;
	atomic_store(&owner, pid_now());
	atomic_store(&state, DEFERRED);
	scratch_table = t;
	if (engine_publish(t) != 0) { /* it freed t */
		scratch_table = NULL;
		atomic_store(&state, NONE);
		return -1;
	}
	return 0;
}

int defer_inherited(void)
{
	return atomic_load(&state) != NONE;
}

int defer_active(void)
{
	return atomic_load(&state) != NONE && atomic_load(&owner) == pid_now();
}

int defer_claim(int wait_ms)
{
	if (atomic_load(&owner) != pid_now())
		return 0;
	struct timespec pause = {0, 1000000};
	for (int waited = 0;; waited++) {
		int expect = DEFERRED;
		if (atomic_compare_exchange_strong(&state, &expect, ENDING))
			return 1;
		if (expect == NONE || waited >= wait_ms)
			return 0;
		nanosleep(&pause, NULL); /* another thread is ending it */
	}
}

void defer_release(int ended)
{
	atomic_store(&state, ended ? NONE : DEFERRED);
}

/* Nothing that needs a file: no record but a thread's name (an exit's
 * settling writes one, of use only beside samples of that thread). */
uint64_t defer_bytes(void)
{
	uint64_t head = atomic_load(&scratch_ring()->head);
	return head < SCRATCH_DATA ? head : SCRATCH_DATA;
}

int defer_empty(void)
{
	struct ring_file *s = scratch_ring();
	uint64_t head = atomic_load(&s->head), at = 0;
	if (atomic_load(&s->lost))
		return 0;
	while (at + 8 <= head && head <= SCRATCH_DATA) {
		uint32_t hdr = __atomic_load_n((const uint32_t *)(scratch.data + at), __ATOMIC_ACQUIRE);
		uint32_t words = RING_HDR_WORDS(hdr);
		if (hdr == 0 || words == 0)
			return 0; /* being written: a sample */
		if (RING_HDR_TYPE(hdr) != RING_THREAD && RING_HDR_TYPE(hdr) != RING_SKIP)
			return 0;
		at += words * 8ull;
	}
	return 1;
}

void defer_credit(struct ptable *t, pid_t tid, uint64_t marker, unsigned long w)
{
	if (!w)
		return;
	/* a struct ring_record with its one pc */
	struct {
		uint32_t hdr, tid, weight, modgen;
		uint64_t pc;
	} rec = {RING_HDR(RING_SAMPLE, 3), (uint32_t)tid, (uint32_t)w,
	         atomic_load(&scratch_ring()->modgen), marker};
	_Static_assert(sizeof rec == sizeof(struct ring_record) + sizeof(uint64_t),
	               "a sample record with one pc");
	sample_record_into(t, &rec);
}

struct ptable *defer_final_table(struct ring_file *rf)
{
	final_table.mode = PTABLE_RING;
	final_table.form = PFORM_RING;
	final_table.ring = rf;
	final_table.ring_data = (unsigned char *)rf + rf->data_offset;
	return &final_table;
}

/*
 * Every committed record of the scratch ring into t, its lost weight into
 * t's ring; then the scratch ring is empty again, and zeroed where it was
 * used (a child forked later starts from clean memory).  The caller made
 * sure no handler writes it meanwhile.  The scratch ring is never read,
 * so it never wraps: records lie from 0 to head, each ending where the
 * next begins.
 */
void defer_copy(struct ptable *t)
{
	struct ring_file *s = scratch_ring();
	uint64_t head = atomic_load(&s->head), at = 0;
	if (head > SCRATCH_DATA)
		head = SCRATCH_DATA;
	while (at + 8 <= head) {
		const unsigned char *rec = scratch.data + at;
		uint32_t hdr = __atomic_load_n((const uint32_t *)rec, __ATOMIC_ACQUIRE);
		uint32_t words = RING_HDR_WORDS(hdr);
		if (hdr == 0 || words == 0 || at + words * 8ull > head)
			break; /* reserved, never committed: a sample a fault cut */
		if (RING_HDR_TYPE(hdr) != RING_SKIP)
			sample_record_into(t, rec);
		at += words * 8ull;
	}
	uint64_t lost = atomic_exchange(&s->lost, 0);
	if (lost && t->ring)
		atomic_fetch_add(&t->ring->lost, lost);
	memset(scratch.data, 0, (size_t)head);
	atomic_store(&s->head, 0);
}
