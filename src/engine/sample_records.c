/*
 * sample_records.c - the records a ring gets outside sampling (ring.h):
 * a reaped child's CPU time, a thread's name, a forked child's word with
 * the call that forked it, whole records copied from a scratch ring, and
 * a thread's last weight (on its last sample's stack, or at [unsampled]
 * under its start routine and the thread's start).
 * They share the samples' reservation (sample_write.c) and fault recovery:
 * a ring is memory the program could unmap.
 *
 * Held to sample.c's CONTRACT (`make check-handler` checks this object
 * with sample.c's and sample_write.c's): a SIGCHLD handler may reap, a
 * forked child writes its word while the locks of threads it does not
 * have may be held, and an exec may run in a signal handler.  Every
 * writer runs between an increment and a decrement of profil_inflight,
 * so the table it writes is not freed under it (engine_publish()).
 */
#include "engine/sampling.h"
#include "base/ring.h"
#include "unwind/unwind.h"
#include "engine/engine_int.h"

#include <ucontext.h>

#define ADD(field, n) atomic_fetch_add_explicit(&profil_pstats.field, (n), memory_order_relaxed)
/* record_write()'s flags: keep the last frame of ours in the walk (the
 * thread's entry); set the record's module generation. */
#define CALLERS_ENTRY 1
#define CALLERS_MODGEN 2

#if defined(__x86_64__)
/* Frames of the walk that are the writer's own or libc's (the agent's
 * fork hook, the atfork handlers and libc's fork that called them):
 * room for them beyond the depth asked. */
#define OWN_FRAMES_ROOM 16u

/* The calling thread's callers into pcs[] (room for max + 1 words), the
 * leading frames in this object or in also's module left out (but the
 * last of them with CALLERS_ENTRY), at most depth of them, then a marker
 * when the walk did not reach the outermost frame (ring.h).  Returns the
 * words kept; the words the walk wrote beyond them are zeroed again: the
 * rest of a reservation goes back to the ring, whose free space the
 * reader takes for records where it is not zero. */
static uint32_t walk_callers(const struct uw_table *ut, uint64_t *pcs, uint32_t max,
                             uint32_t depth, uintptr_t also, int flags)
{
	uintptr_t pc, sp, bp;
	/* this frame's registers at one instruction, as a signal would
	 * find them: the CFI row at pc says where the caller's frame is */
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
	                 : "=r"(pc), "=r"(sp), "=r"(bp));
	ucontext_t uc;
	uc.uc_mcontext.gregs[REG_RIP] = (greg_t)pc;
	uc.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
	uc.uc_mcontext.gregs[REG_RBP] = (greg_t)bp;
	uc.uc_mcontext.gregs[REG_RDI] = 0; /* read by the walk; no rule here needs it */
	volatile uint32_t got = 0;
	enum uw_end end = sample_walk_recovered(ut, &uc, pcs, max, &got);
	uint32_t n = got, k = sample_first_foreign(ut, pcs, n, also), w = 0;
	if ((flags & CALLERS_ENTRY) && k > 0)
		k--;
	for (; k < n && w < depth; k++)
		pcs[w++] = pcs[k];
	if (k < n || end == UW_END_TRUNCATED)
		pcs[w++] = RING_PC_TRUNCATED;
	else if (end == UW_END_FAILED)
		pcs[w++] = RING_PC_UNKNOWN;
	for (uint32_t i = w; i < n; i++) /* stores a compiler keeps: no memset (CONTRACT) */
		__atomic_store_n(&pcs[i], 0, __ATOMIC_RELAXED);
	return w;
}
#endif

/* Callers walked earlier, to be written as they are (sample_record_given()). */
struct given_callers {
	const uint64_t *pcs;
	uint32_t n;
};

/*
 * Writes rec, size bytes (a multiple of 8) whose first word is its hdr,
 * into the ring table t as a record of type, under the same fault
 * recovery as sample_record(): the ring is memory the program could
 * unmap.  With depth > 1, the calling thread's callers after it
 * (walk_callers()), or those given; with CALLERS_MODGEN, its fourth
 * 32-bit word set to the ring's module generation (struct ring_record's,
 * ring_forked's and ring_repeat's modgen), read under the same recovery.
 * Whether it was written; a record of weight w that finds no room adds w
 * to the ring's lost count, as a sample does.
 */
static __attribute__((noinline)) int record_write(struct ptable *t, const void *rec,
                                                  uint32_t size, uint32_t type,
                                                  uint32_t depth, uintptr_t also, int flags,
                                                  unsigned long w,
                                                  const struct given_callers *given)
{
	const struct uw_table *ut = 0;
	uint32_t max = 0;
#if defined(__x86_64__)
	if (!given && depth > 1 && (ut = atomic_load(&unwind_published)) != 0) {
		if (depth > RING_MAX_DEPTH)
			depth = RING_MAX_DEPTH;
		max = depth + OWN_FRAMES_ROOM;
	}
#else
	(void)also;
#endif
	/* A program's handler may write a record while this thread writes
	 * one (a SIGCHLD handler's reap): the outer writer's recovery point
	 * and flag are put back after, as sample_walk_recovered() does. */
	void *outer[5];
	int outer_writing = sample_writing;
	for (int i = 0; i < 5; i++)
		outer[i] = sample_recover[i];
	if (__builtin_setjmp(sample_recover)) {
		for (int i = 0; i < 5; i++)
			sample_recover[i] = outer[i];
		sample_writing = outer_writing;
		if (!sample_abandon)
			sample_withdraw(t);
		return 0;
	}
	sample_writing = 1;
	uint32_t head = size / 8, words = head;
	uint32_t room = head + (ut ? max + 1 : 0) + (given ? given->n : 0);
	uint64_t at;
	unsigned char *r = 0;
	if (!sample_abandon && (r = sample_ring_reserve(t, room * 8, &at)) != 0) {
		const unsigned char *from = rec;
		for (uint32_t i = sizeof(uint32_t); i < size; i++) /* no memcpy: see CONTRACT */
			r[i] = from[i];
		if (flags & CALLERS_MODGEN)
			((uint32_t *)r)[3] = atomic_load_explicit(&t->ring->modgen, memory_order_acquire);
		for (uint32_t i = 0; given && i < given->n; i++)
			((uint64_t *)(r + size))[words++ - head] = given->pcs[i];
#if defined(__x86_64__)
		if (ut)
			words += walk_callers(ut, (uint64_t *)(r + size), max, depth, also, flags);
#endif
		sample_ring_commit(t, r, at, room, words, type);
	} else if (!sample_abandon && w) {
		atomic_fetch_add_explicit(&t->ring->lost, w, memory_order_relaxed);
	}
	for (int i = 0; i < 5; i++)
		sample_recover[i] = outer[i];
	sample_writing = outer_writing;
	return r != 0;
}

/* A thread's last weight (owed expiries and held weight) as the record
 * rec, counted as sample_credit() counts it. */
static void credit_record(struct ptable *t, const void *rec, uint32_t size, uint32_t depth,
                          int flags, unsigned long owed, unsigned long held)
{
	ADD(ticks, owed);
	ADD(reconciled, owed);
	uint32_t type = RING_HDR_TYPE(*(const uint32_t *)rec);
	if (record_write(t, rec, size, type, depth, 0, flags | CALLERS_MODGEN, owed + held, 0))
		ADD(in_range, owed + held);
	else /* full (counted lost), or it faulted: as a sample */
		ADD(out_of_range, owed + held);
}

/* A child's CPU time as its parent reaped it (agent/reap.c: maybe in a
 * SIGCHLD handler), for the reader: ring tables only.  Same in-flight
 * handshake as sample_credit(). */
void sample_child_cpu(uint32_t pid, uint64_t cpu_ns)
{
	atomic_fetch_add(&profil_inflight, 1);
	struct ptable *t = atomic_load(&profil_published);
	if (t && t->mode == PTABLE_RING) {
		struct ring_reaped r = {0, pid, cpu_ns};
		record_write(t, &r, sizeof r, RING_REAPED, 0, 0, 0, 0, 0);
	}
	atomic_fetch_sub(&profil_inflight, 1);
}

/* rec, a whole record (its hdr says its type and size), written into the
 * ring table t, which need not be the published one: the agent copies a
 * forked child's scratch ring into its ring file (agent/defer.c).  Same
 * in-flight handshake as sample_credit(); async-signal-safe. */
void sample_record_into(struct ptable *t, const void *rec)
{
	uint32_t hdr = *(const uint32_t *)rec;
	uint32_t words = RING_HDR_WORDS(hdr);
	if (!t || t->mode != PTABLE_RING || words < 1)
		return;
	atomic_fetch_add(&profil_inflight, 1);
	record_write(t, rec, words * 8, RING_HDR_TYPE(hdr), 0, 0, 0, 0, 0);
	atomic_fetch_sub(&profil_inflight, 1);
}

/* A thread's name at its exit (threads.c), for the reader: ring tables
 * only.  Same in-flight handshake as sample_credit(). */
void sample_thread_name(pid_t tid, const char name[16])
{
	atomic_fetch_add(&profil_inflight, 1);
	struct ptable *t = atomic_load(&profil_published);
	if (t && t->mode == PTABLE_RING) {
		struct ring_thread r = {0, (uint32_t)tid, {0}};
		for (unsigned i = 0; i + 1 < sizeof r.name; i++)
			r.name[i] = name[i];
		record_write(t, &r, sizeof r, RING_THREAD, 0, 0, 0, 0, 0);
	}
	atomic_fetch_sub(&profil_inflight, 1);
}

/* rec, the head of a record (its hdr's type; size bytes, a multiple of
 * 8), with the calling thread's callers after it: from the first frame
 * outside this object and also's module (a function of the C library,
 * whose own frames are left out too), at most depth of them, a marker
 * last when the walk did not reach the outermost frame; no stack when
 * depth is 1 or no unwind table is published.  Into ring table t
 * (published or not); async-signal-safe. */
void sample_record_callers(struct ptable *t, const void *rec, uint32_t size, uint32_t depth,
                           uintptr_t also)
{
	if (!t || t->mode != PTABLE_RING || size < 8 || size % 8)
		return;
	atomic_fetch_add(&profil_inflight, 1);
	record_write(t, rec, size, RING_HDR_TYPE(*(const uint32_t *)rec), depth, also,
	             CALLERS_MODGEN, 0, 0);
	atomic_fetch_sub(&profil_inflight, 1);
}

/* The calling thread's callers as sample_record_callers() would write
 * them, into pcs (room words), for sample_record_given() later: the
 * words, or 0 when there are no stacks or room cut the walk short of
 * what depth asks (the caller then walks where it writes).  A sample
 * landing meanwhile holds its weight (sample.c: sample_writing), as in
 * record_write(); async-signal-safe. */
uint32_t sample_callers_walk(uint64_t *pcs, uint32_t room, uint32_t depth, uintptr_t also)
{
#if defined(__x86_64__)
	if (depth > RING_MAX_DEPTH)
		depth = RING_MAX_DEPTH;
	uint32_t w = 0, max = depth + OWN_FRAMES_ROOM, cut = room <= max;
	if (depth < 2 || room < 2)
		return 0;
	if (cut)
		max = room - 1; /* the walk writes max + 1 words at most */
	atomic_fetch_add(&profil_inflight, 1);
	const struct uw_table *ut = atomic_load(&unwind_published);
	if (ut) {
		int outer_writing = sample_writing; /* as in record_write() */
		sample_writing = 1; /* fault.c recovers a bad read */
		w = walk_callers(ut, pcs, max, depth, also, 0);
		sample_writing = outer_writing;
	}
	atomic_fetch_sub(&profil_inflight, 1);
	if (cut && w && pcs[w - 1] == RING_PC_TRUNCATED && w - 1 < depth)
		return 0;
	return w;
#else
	(void)pcs, (void)room, (void)depth, (void)also;
	return 0;
#endif
}

/* rec's head (size bytes) and pcs[0, n) after it, its module generation
 * set, into ring table t; async-signal-safe. */
void sample_record_given(struct ptable *t, const void *rec, uint32_t size,
                         const uint64_t *pcs, uint32_t n)
{
	if (!t || t->mode != PTABLE_RING || size < 8 || size % 8)
		return;
	struct given_callers given = {pcs, n};
	atomic_fetch_add(&profil_inflight, 1);
	record_write(t, rec, size, RING_HDR_TYPE(*(const uint32_t *)rec), 0, 0, CALLERS_MODGEN, 0,
	             &given);
	atomic_fetch_sub(&profil_inflight, 1);
}

/* sample_credit()'s (sample_write.c), for a thread that ends after a
 * sample of its own: on a ring, its weight for that sample's stack
 * (ring.h RING_REPEAT); elsewhere at pc, that sample's. */
void sample_credit_repeat(pid_t tid, uintptr_t pc, unsigned long owed, unsigned long held)
{
	atomic_fetch_add(&profil_inflight, 1);
	struct ptable *t = atomic_load(&profil_published);
	unsigned long w = owed + held;
	if (t && t->mode == PTABLE_RING && w <= UINT32_MAX) {
		struct ring_repeat rec = {RING_HDR(RING_REPEAT, 2), (uint32_t)tid, (uint32_t)w, 0};
		credit_record(t, &rec, sizeof rec, 0, 0, owed, held);
		atomic_fetch_sub(&profil_inflight, 1);
		return;
	}
	atomic_fetch_sub(&profil_inflight, 1);
	sample_credit(tid, pc, owed, held);
}

/* sample_credit()'s (sample_write.c), for a thread that no sample
 * reached and that ends where it began, in its start routine's caller:
 * weight at the [unsampled] marker called from pc (the start routine),
 * under the frame that called it and that frame's callers (the thread's
 * start: the library's wrapper, libc's start_thread, clone3), as its
 * samples' stacks would be.  Not at pc itself: that would show the
 * start routine's own code (CPython's pythread_wrapper, a thread pool's
 * loop) running all the time its threads were never sampled in, where
 * a forked child no sample reached is shown at [unsampled] under its
 * fork.  Ring tables that record stacks; others as sample_credit(). */
void sample_credit_entry(pid_t tid, uintptr_t pc, unsigned long owed, unsigned long held)
{
	atomic_fetch_add(&profil_inflight, 1);
	struct ptable *t = atomic_load(&profil_published);
	unsigned long w = owed + held;
	if (t && t->mode == PTABLE_RING && t->stack_depth > 1 && w <= UINT32_MAX) {
		struct { /* struct ring_record with two pcs: a caller's as a return address */
			uint32_t hdr, tid, weight, modgen;
			uint64_t pc[2];
		} rec = {RING_HDR(RING_SAMPLE, 4), (uint32_t)tid, (uint32_t)w, 0,
		         {RING_PC_UNSAMPLED, (uint64_t)pc + 1}};
		credit_record(t, &rec, sizeof rec, t->stack_depth - 2, CALLERS_ENTRY, owed, held);
	} else {
		atomic_fetch_sub(&profil_inflight, 1);
		sample_credit(tid, pc, owed, held);
		return;
	}
	atomic_fetch_sub(&profil_inflight, 1);
}
