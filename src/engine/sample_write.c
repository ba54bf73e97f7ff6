/*
 * sample_write.c - what a sample writes, and where: saturating counters
 * of a histogram, pcsample slots, or records into a sample ring with the
 * interrupted stack; and the weight credited outside sampling as samples
 * (at a thread's end, before sampling began).  The ring's reservation and
 * commit are shared with the other records' writers (sample_records.c).
 *
 * Signal context: held to sample.c's CONTRACT (no calls but compiler
 * atomics and __builtin_setjmp; `make check-handler` checks this object
 * against tools/handler-allow.txt as it checks sample.o).  Every writer
 * runs between an increment and a decrement of profil_inflight, so the
 * table it writes is not freed under it (engine_publish()).
 *
 * Fixed point: the histogram's bin arithmetic is bin_index()'s
 * (base/bin.h), with its bounds written there; the counters saturate at
 * their width and the excess is counted in profil_pstats.saturated.
 */
#include "engine/sampling.h"
#include "base/bin.h"
#include "base/ring.h"
#include "unwind/unwind.h"
#include "engine/engine_int.h"
#include "engine/perf_trap.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <ucontext.h>

#define ADD(field, n) atomic_fetch_add_explicit(&profil_pstats.field, (n), memory_order_relaxed)

/* Saturating add of w to a 16- or 32-bit counter; returns what was added. */
static unsigned long bump16(unsigned short *p, unsigned long w)
{
	unsigned short old = __atomic_load_n(p, __ATOMIC_RELAXED), neu;
	do {
		if (old == 0xffffu)
			return 0;
		neu = (unsigned long)old + w > 0xffffu ? 0xffffu : (unsigned short)(old + w);
	} while (!__atomic_compare_exchange_n(p, &old, neu, 1, __ATOMIC_RELAXED,
	                                      __ATOMIC_RELAXED));
	return (unsigned long)(neu - old);
}

static unsigned long bump32(unsigned int *p, unsigned long w)
{
	unsigned int old = __atomic_load_n(p, __ATOMIC_RELAXED), neu;
	do {
		if (old == 0xffffffffu)
			return 0;
		neu = (unsigned long)old + w > 0xffffffffu ? 0xffffffffu : (unsigned int)(old + w);
	} while (!__atomic_compare_exchange_n(p, &old, neu, 1, __ATOMIC_RELAXED,
	                                      __ATOMIC_RELAXED));
	return (unsigned long)(neu - old);
}

static unsigned long bump(void *counter, unsigned width, unsigned long w)
{
	return width == 4 ? bump32(counter, w) : bump16(counter, w);
}

/* The range holding pc, by binary search over ranges sorted by lowpc. */
static const struct prange *find_range(const struct ptable *t, uintptr_t pc)
{
	size_t lo = 0, hi = t->nranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pc < t->ranges[mid].lowpc)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0)
		return 0;
	const struct prange *r = &t->ranges[lo - 1];
	return pc < r->highpc ? r : 0;
}

static void count_hist(const struct ptable *t, uintptr_t pc, unsigned long w)
{
	const struct prange *r = find_range(t, pc);
	size_t i = 0;
	if (r && r->kind == PRANGE_HIST &&
	    !bin_index(pc, r->offset, r->shift, r->scale, r->nbins, &i))
		r = 0;
	if (!r) {
		ADD(out_of_range, w);
		if (t->overflow)
			ADD(saturated, w - bump(t->overflow, t->overflow_width, w));
		return;
	}
	unsigned long added = bump((char *)r->buf + i * r->width, r->width, w);
	ADD(in_range, added);
	ADD(saturated, w - added);
}

static void count_pc(struct ptable *t, uintptr_t pc, unsigned long w)
{
	size_t slot = atomic_fetch_add_explicit(&t->pcnext, w, memory_order_relaxed);
	size_t end = slot + w < t->pccap ? slot + w : t->pccap;
	for (size_t k = slot; k < end; k++)
		__atomic_store_n(&t->pcbuf[k], pc, __ATOMIC_RELAXED);
	ADD(in_range, end > slot ? end - slot : 0);
	if (slot + w >= t->pccap)
		atomic_store_explicit(&profil_pstats.stopped, PROFIL_STOP_PCSAMPLE_FULL,
		                      memory_order_relaxed);
}

/*
 * Reserves len bytes of the ring (plus a SKIP filler when they would cross
 * the end), or returns 0 when the reader is too far behind.  Writers race
 * only on head; the reader moves tail, which only frees space, so a
 * reservation checked against an older tail is still safe.  *at: the
 * record's position (a byte count, like head).
 */
unsigned char *sample_ring_reserve(const struct ptable *t, uint32_t len, uint64_t *at)
{
	struct ring_file *rf = t->ring;
	uint64_t size = rf->data_size, h, pad;
	h = atomic_load_explicit(&rf->head, memory_order_relaxed);
	do {
		uint64_t tail = atomic_load_explicit(&rf->tail, memory_order_acquire);
		uint64_t off = h & (size - 1);
		pad = size - off < len ? size - off : 0;
		if (h + pad + len - tail > size)
			return 0;
	} while (!atomic_compare_exchange_weak_explicit(&rf->head, &h, h + pad + len,
	                                                memory_order_relaxed,
	                                                memory_order_relaxed));
	if (pad)
		__atomic_store_n((uint32_t *)(t->ring_data + (h & (size - 1))),
		                 RING_HDR(RING_SKIP, pad / 8), __ATOMIC_RELEASE);
	*at = h + pad;
	return t->ring_data + ((h + pad) & (size - 1));
}

/*
 * The interrupted thread's stack into pcs[] (unwind.c): at most max
 * frames, then a marker when it did not end at the outermost frame
 * (ring.h).  A fault in the walk comes back to the recovery point armed
 * here, and the outer one (sample_record()'s) is put back after.  Returns the
 * number of words written, at most max + 1.
 */
enum uw_end sample_walk_recovered(const struct uw_table *ut, const void *ucontext,
                                  uint64_t *pcs, uint32_t max, volatile uint32_t *n)
{
	const ucontext_t *uc = ucontext;
	void *outer[5];
	enum uw_end end;
	for (int i = 0; i < 5; i++)
		outer[i] = sample_recover[i];
	if (__builtin_setjmp(sample_recover))
		end = UW_END_FAILED;
	else
		end = unwind_walk(ut, (uintptr_t)uc->uc_mcontext.gregs[REG_RIP],
		                  (uintptr_t)uc->uc_mcontext.gregs[REG_RSP],
		                  (uintptr_t)uc->uc_mcontext.gregs[REG_RBP], uc->uc_mcontext.gregs,
		                  pcs, max, n);
	for (int i = 0; i < 5; i++)
		sample_recover[i] = outer[i];
	return end;
}

__thread volatile int sample_in_dlopen __attribute__((tls_model("initial-exec"))) HIDDEN;
atomic_int sample_load_wake;

void sample_wake_sweeper(void)
{
	atomic_fetch_add(&sweeper_wakes, 1);
	perf_trap_syscall3(SYS_futex, (long)&sweeper_wakes, FUTEX_WAKE_PRIVATE, 1);
}

/* A walk that failed inside dlopen() at a pc of no module (the new
 * library's constructors, engine.h sample_in_dlopen): the sweeper is
 * woken to poll the loader, once until its next sweep.  Whether this
 * call woke it. */
static int wake_for_load(const struct uw_table *ut, const uint64_t *pcs, uint32_t n)
{
	uint32_t k = 0;
	while (k < n && unwind_covers(ut, k ? pcs[k] - 1 : pcs[k]))
		k++;
	int idle = 0;
	if (k == n || !atomic_compare_exchange_strong(&sample_load_wake, &idle, 1))
		return 0;
	sample_wake_sweeper();
	return 1;
}

static uint32_t walk_stack(const struct uw_table *ut, const void *ucontext, uint64_t *pcs,
                           uint32_t max)
{
	const ucontext_t *uc = ucontext;
	volatile uint32_t n = 0;
	enum uw_end end = sample_walk_recovered(ut, ucontext, pcs, max, &n);
	/* One wake a mark: a walk that fails for another reason than a
	 * library not yet in the tables (code no table covers, a JIT's)
	 * must not wake the helper at every sample.  A mark the wrapper
	 * will not take off goes, or at the first walk that is whole. */
	int mark = sample_in_dlopen;
	int until_whole = mark == SAMPLE_IN_DLOPEN_UNTIL_WHOLE;
	if (end == UW_END_FAILED && (mark == SAMPLE_IN_DLOPEN_CALL || until_whole) &&
	    wake_for_load(ut, pcs, n))
		sample_in_dlopen = until_whole ? 0 : SAMPLE_IN_DLOPEN_WOKEN;
	else if (end == UW_END_COMPLETE && until_whole)
		sample_in_dlopen = 0;
	uint32_t k = n;
	if (k == 0)
		pcs[k++] = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	if (end != UW_END_COMPLETE)
		pcs[k++] = end == UW_END_TRUNCATED ? RING_PC_TRUNCATED : RING_PC_UNKNOWN;
	return k;
}

/* Most frames this sample may carry: 1 (the pc) without registers, without
 * unwind tables, or when the table wants no stacks. */
static uint32_t stack_room(const struct ptable *t, const void *uc, const struct uw_table **ut)
{
#if defined(__x86_64__)
	if (uc && t->stack_depth > 1 && (*ut = atomic_load(&unwind_published)) != 0)
		return t->stack_depth < RING_MAX_DEPTH ? t->stack_depth : RING_MAX_DEPTH;
#else
	(void)t, (void)uc;
#endif
	*ut = 0;
	return 1;
}

uint32_t sample_first_foreign(const struct uw_table *ut, const uint64_t *pcs, uint32_t n,
                              uintptr_t also)
{
	const struct uw_module *own = unwind_module_at(ut, (uintptr_t)sample_first_foreign);
	const struct uw_module *lib = also ? unwind_module_at(ut, also) : 0;
	uint32_t k = 0;
	for (; k < n && !RING_PC_IS_MARKER(pcs[k]); k++) {
		const struct uw_module *m = unwind_module_at(ut, k ? pcs[k] - 1 : pcs[k]);
		if (!m || (m != own && m != lib))
			break;
	}
	return k;
}

/* A sample at the return from a fork (engine.h sample_in_fork_return):
 * pcs[0, n) as fork() at sample_fork_pc under the first caller outside
 * this library and the C library; unchanged when there is none.  The
 * words it no longer uses are zeroed: they go back to the ring's free
 * space, which must read as no record. */
static uint32_t as_fork(const struct uw_table *ut, uint64_t *pcs, uint32_t n)
{
	uintptr_t fork_pc = sample_fork_pc;
	uint32_t k = fork_pc ? sample_first_foreign(ut, pcs, n, fork_pc) : 0;
	if (k == 0 || k == n || RING_PC_IS_MARKER(pcs[k]))
		return n;
	pcs[0] = fork_pc;
	for (uint32_t i = k; i < n; i++)
		pcs[1 + i - k] = pcs[i];
	for (uint32_t i = 1 + n - k; i < n; i++) /* stores a compiler keeps: no memset (CONTRACT) */
		__atomic_store_n(&pcs[i], 0, __ATOMIC_RELAXED);
	return 1 + n - k;
}

static void count_ring(const struct ptable *t, pid_t tid, uintptr_t pc, const void *uc,
                       unsigned long w)
{
	if (sample_in_fork_start && !RING_PC_IS_MARKER(pc)) { /* the start's cost */
		pc = (uintptr_t)RING_PC_AGENT;
		uc = NULL;
	}
	const uint32_t head = sizeof(struct ring_record) / 8;
	const struct uw_table *ut;
	uint32_t max = stack_room(t, uc, &ut);
	uint32_t want = t->stack_depth > 1; /* room for a marker */
	uint32_t room = head + max + want;
	uint64_t at;
	struct ring_record *r = (struct ring_record *)sample_ring_reserve(t, room * 8, &at);
	if (!r) {
		atomic_fetch_add_explicit(&t->ring->lost, w, memory_order_relaxed);
		ADD(out_of_range, w);
		return;
	}
	r->tid = (uint32_t)tid;
	r->weight = (uint32_t)w;
	r->modgen = atomic_load_explicit(&t->ring->modgen, memory_order_acquire);
	r->pcs[0] = pc;
	uint32_t words = head + 1;
	if (ut) {
		words = head + walk_stack(ut, uc, r->pcs, max);
		if (sample_in_fork_return)
			words = head + as_fork(ut, r->pcs, words - head);
	} else if (want && !RING_PC_IS_MARKER(pc)) /* no registers (weight credited at a thread's exit) */
		r->pcs[words++ - head] = RING_PC_UNKNOWN;
	sample_ring_commit(t, (unsigned char *)r, at, room, words, RING_SAMPLE);
	ADD(in_range, w);
}

/* The record at r (position at) of room words reserved, words of them
 * used, committed as a record of type: the rest of the reservation given
 * back when no writer reserved after it (the usual case), else made a
 * SKIP record, committed before the record so that the reader never
 * stops in front of it. */
void sample_ring_commit(const struct ptable *t, unsigned char *r, uint64_t at, uint32_t room,
                        uint32_t words, uint32_t type)
{
	uint64_t end = at + (uint64_t)room * 8;
	if (words < room &&
	    !atomic_compare_exchange_strong_explicit(&t->ring->head, &end, at + words * 8,
	                                             memory_order_relaxed, memory_order_relaxed))
		__atomic_store_n((uint32_t *)(r + (size_t)words * 8), RING_HDR(RING_SKIP, room - words),
		                 __ATOMIC_RELEASE);
	__atomic_store_n((uint32_t *)r, RING_HDR(type, words), __ATOMIC_RELEASE);
}

/* A write faulted: withdraw the table so no later sample touches it.  The
 * engine still owns t and frees it at the next publish. */
void sample_withdraw(struct ptable *t)
{
	struct ptable *expect = t;
	ADD(faults, 1);
	atomic_store_explicit(&profil_pstats.stopped, PROFIL_STOP_FAULT, memory_order_relaxed);
	atomic_compare_exchange_strong(&profil_published, &expect, (struct ptable *)0);
}

/* Out of line (sampling.h) so __builtin_setjmp's frame is this
 * function's.  uc: the interrupted registers, for a stack; 0 for the pc
 * alone. */
void sample_record(struct ptable *t, pid_t tid, uintptr_t pc, const void *uc, unsigned long w)
{
	if (__builtin_setjmp(sample_recover)) {
		sample_writing = 0;
		if (sample_abandon) /* interrupted, nothing faulted (fault.c) */
			sample_self.deferred += w;
		else
			sample_withdraw(t);
		return;
	}
	sample_writing = 1;
	if (sample_abandon) { /* writing set first: fault.c then jumps */
		sample_writing = 0;
		sample_self.deferred += w;
		return;
	}
	if (t->mode == PTABLE_PCSAMPLE)
		count_pc(t, pc, w);
	else if (t->mode == PTABLE_RING)
		count_ring(t, tid, pc, uc, w);
	else
		count_hist(t, pc, w);
	sample_writing = 0;
}

/* Weight found owed at a thread's exit (threads.c), recorded as a sample
 * would be, under the same in-flight handshake with engine_publish(). */
void sample_credit(pid_t tid, uintptr_t pc, unsigned long owed, unsigned long held)
{
	atomic_fetch_add(&profil_inflight, 1);
	struct ptable *t = atomic_load(&profil_published);
	if (t) {
		ADD(ticks, owed);
		ADD(reconciled, owed);
		sample_record(t, tid, pc, 0, owed + held);
	}
	atomic_fetch_sub(&profil_inflight, 1);
}

/* CPU time spent before sampling began (agent.c), as weight w at a
 * marker (RING_PC_STARTUP, RING_PC_AGENT): ring tables only (no histogram has a bin for
 * it).  Same in-flight handshake as sample_credit(). */
void sample_credit_startup(pid_t tid, uintptr_t marker, unsigned long w)
{
	atomic_fetch_add(&profil_inflight, 1);
	struct ptable *t = atomic_load(&profil_published);
	if (t && t->mode == PTABLE_RING) {
		ADD(ticks, w);
		sample_record(t, tid, marker, 0, w);
	}
	atomic_fetch_sub(&profil_inflight, 1);
}

