/*
 * unwind.c - the stack walk, in the sampling signal handler (unwind.h).
 *
 * CONTRACT (the same as sample.c's, checked by `make check-handler`):
 *   May call:  nothing.  Arithmetic and loads only.
 *   Reads:     the published struct uw_table and its modules (IMMUTABLE
 *              while published; the caller loaded the pointer after its
 *              profil_inflight increment, so it stays valid until the
 *              decrement, engine_drain()); this thread's unwind_stack; the
 *              interrupted thread's stack, every word checked against the
 *              bounds below; at a Go cgo call's frame, the two words of
 *              the goroutine's descriptor that bound its stack (an
 *              address the frame holds), and at Go's systemstack the
 *              thread's g (%fs:-8), its m, the goroutine m runs and its
 *              saved rsp: words of the Go runtime's, read under the same
 *              recovery.
 *   Writes:    pcs[] and *n, which the caller reserved.
 *
 * Stack reads.  A word is read only if it is 8-aligned and lies at or above
 * the current frame's stack pointer and below the stack's top: the
 * thread's own stack top when the frame is on it (unwind_stack, recorded
 * by the thread itself), else UW_STACK_GUESS above the frame (a signal
 * handler on a sigaltstack, a thread we never saw start).  A word that is
 * in bounds but unmapped still faults; sample.c arms fault recovery around
 * the walk, and a fault costs only that sample's callers.  The same holds
 * for a module's rows mapped from the cache (unwind_cache.c): a file cut
 * short under the mapping raises SIGBUS here, and only that stack ends.
 *
 * The walk ends at a frame whose return address is undefined in its CFI
 * (_start, the thread start routine's caller) or zero: complete.  At a pc
 * in no module, a rule we do not follow, a CFA that does not grow, or a
 * read out of bounds: failed.  At max pcs with frames left: truncated.
 */
#include "unwind/unwind.h"

#include <stddef.h>
#include <ucontext.h>

__thread struct uw_stack unwind_stack __attribute__((tls_model("initial-exec"))) HIDDEN;

/*
 * Binary searches.  Branch-free halvings (conditional moves) measured
 * twice as slow here (bench/unwind.c: 33 against 16 ns per frame): a
 * search that narrow is better served by predicted branches.
 */

/* The module holding pc: the last with lo <= pc, if pc < its hi. */
static const struct uw_module *find_module(const struct uw_table *t, uintptr_t pc)
{
	size_t lo = 0, hi = t->nmods;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pc < t->mods[mid]->lo)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo == 0)
		return 0;
	const struct uw_module *m = t->mods[lo - 1];
	return pc < m->hi ? m : 0;
}

/* The row in force at pc, 0 when pc is below the first.  The index
 * narrows the search to the rows of pc's 256-byte block, the first of
 * which is in force at the block's start or before.  The index may come
 * from a file nobody checked entry by entry (unwind_cache.c): entries out
 * of order or past the last row widen the search to the whole table, so
 * every row read is one of the table's (upper bound over [lo, hi) with
 * rows[0].pc <= off returns a row at or above 1, below hi). */
static const struct uw_row *find_row(const struct uw_module *m, uintptr_t pc)
{
	uint32_t off = (uint32_t)(pc - m->lo);
	size_t blk = off >> UW_INDEX_SHIFT;
	if (m->nrows == 0 || off < m->rows[0].pc)
		return 0;
	size_t lo = m->index[blk], hi = (size_t)m->index[blk + 1] + 1;
	if (lo >= hi || hi > m->nrows)
		lo = 0, hi = m->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (off < m->rows[mid].pc)
			hi = mid;
		else
			lo = mid + 1;
	}
	return &m->rows[lo - 1]; /* lo > index[blk]: that row is <= off */
}

/* Where reads may go: [lo, hi). */
struct bounds {
	uintptr_t lo, hi;
};

static void bounds_at(struct bounds *b, uintptr_t sp)
{
	uintptr_t slo = unwind_stack.lo, shi = unwind_stack.hi;
	b->lo = sp;
	if (shi && sp >= slo && sp < shi)
		b->hi = shi;
	else
		b->hi = sp + UW_STACK_GUESS > sp ? sp + UW_STACK_GUESS : UINTPTR_MAX;
}

static int load(const struct bounds *b, uintptr_t a, uintptr_t *out)
{
	if ((a & 7) || a < b->lo || a >= b->hi || b->hi - a < 8)
		return -1;
	*out = *(const volatile uintptr_t *)a;
	return 0;
}

/* A frame: its pc, the registers we follow, and whether they are known. */
struct frame {
	uintptr_t pc, sp, bp;
	const greg_t *gregs; /* the interrupted context's, in place; NULL: unknown */
	int exact;    /* pc was interrupted (not a return address) */
	int bp_ok;
	uintptr_t bx; /* rbx, followed up the stack by the rows' rbx rules */
	int bx_ok;
};

/* Goes on from rsp sp on the goroutine stack whose descriptor is at g
 * ([lo, hi) its first two words): the return address at sp, or, when the
 * function that switched stacks made a frame (row r's rbp rule
 * UW_RBP_SAVED: Go 1.21 on), the caller's rbp at sp and the return
 * address above it. */
static int onto_goroutine(struct frame *f, struct bounds *b, uintptr_t g, uintptr_t sp,
                          const struct uw_row *r)
{
	uintptr_t lo = *(const volatile uintptr_t *)g, hi = *(const volatile uintptr_t *)(g + 8), ra;
	uintptr_t bp = f->bp, framed = r->rbp == UW_RBP_SAVED;
	struct bounds gs = {sp, hi};
	if (lo >= hi || sp < lo || (framed && load(&gs, sp, &bp)) || load(&gs, sp + 8 * framed, &ra))
		return -1;
	if (ra == 0)
		return 1;
	sp += 8 + 8 * framed;
	f->pc = ra, f->sp = sp, f->bp = bp;
	f->exact = 0;
	f->bp_ok = f->bp_ok || framed;
	f->bx_ok = 0; /* Go keeps no register across calls */
	*b = (struct bounds){sp, hi};
	return 0;
}

/* Steps out of Go's asmcgocall to the goroutine that called C (row r):
 * the frame holds g, whose first two words are its stack's [lo, hi), and
 * hi minus the goroutine's stack pointer, under which asmcgocall has its
 * return address (and from Go 1.21 the rbp it pushed).  The walk goes on
 * with the goroutine's stack as its bounds; a depth that does not fit in
 * it ends the walk, nothing read. */
static int step_go_cgo(struct frame *f, struct bounds *b, const struct uw_row *r)
{
	uintptr_t g, depth;
	if (load(b, f->sp + (uintptr_t)(intptr_t)r->cfa_off, &g) ||
	    load(b, f->sp + (uintptr_t)(intptr_t)r->rbp_off, &depth) || !g || (g & 7))
		return -1;
	uintptr_t lo = *(const volatile uintptr_t *)g, hi = *(const volatile uintptr_t *)(g + 8);
	if (lo >= hi || depth > hi - lo)
		return -1;
	return onto_goroutine(f, b, g, hi - depth, r);
}

/* Steps out of Go's systemstack to the goroutine that asked for it (row
 * r): the goroutine's rsp, saved before the switch, is found from the
 * thread's running g (the thread's own stack's, g0) through its m. */
static int step_go_systemstack(struct frame *f, struct bounds *b, const struct uw_row *r)
{
#if defined(__x86_64__)
	uintptr_t g0, m, g, sp;
	__asm__ volatile("movq %%fs:-8, %0" : "=r"(g0));
	if (!g0 || (g0 & 7))
		return -1;
	m = *(const volatile uintptr_t *)(g0 + (uint16_t)(r->rbp_off & 0xff));
	if (!m || (m & 7))
		return -1;
	g = *(const volatile uintptr_t *)(m + (uint32_t)r->cfa_off);
	if (!g || (g & 7))
		return -1;
	sp = *(const volatile uintptr_t *)(g + (uint16_t)((uint16_t)r->rbp_off >> 8));
	return onto_goroutine(f, b, g, sp, r);
#else
	(void)f, (void)b, (void)r;
	return -1;
#endif
}

/* Steps out of Go's cgocallback to the C code that called Go: rbp, saved
 * by the Go code it called on the goroutine's stack, points at its frame
 * on the thread's own stack (the caller's rbp there, the return address
 * above).  The walk goes on in that stack's bounds. */
static int step_go_callback(struct frame *f, struct bounds *b)
{
	struct bounds tb;
	uintptr_t bp, ra;
	if (!f->bp_ok || f->bp > UINTPTR_MAX - 16)
		return -1;
	bounds_at(&tb, f->bp);
	if (load(&tb, f->bp, &bp) || load(&tb, f->bp + 8, &ra))
		return -1;
	if (ra == 0)
		return 1;
	f->sp = f->bp + 16;
	f->pc = ra, f->bp = bp;
	f->exact = 0, f->bp_ok = 1, f->bx_ok = 0;
	*b = (struct bounds){f->sp, tb.hi};
	return 0;
}

/* Steps out of a signal trampoline: the interrupted registers are in the
 * ucontext at the trampoline's stack pointer. */
static int step_signal(struct frame *f, struct bounds *b)
{
	uintptr_t g = f->sp + offsetof(ucontext_t, uc_mcontext.gregs);
	uintptr_t pc, sp, bp;
	if (load(b, g + 8 * REG_RIP, &pc) || load(b, g + 8 * REG_RSP, &sp) ||
	    load(b, g + 8 * REG_RBP, &bp))
		return -1;
	f->bx_ok = load(b, g + 8 * REG_RBX, &f->bx) == 0;
	/* the registers are read in place later (UW_CFA_GPR): all of
	 * them inside the bounds that held the ucontext */
	uintptr_t last;
	f->gregs = load(b, g + 8 * (NGREG - 1), &last) == 0 ? (const greg_t *)g : NULL;
	f->pc = pc, f->sp = sp, f->bp = bp;
	f->exact = 1, f->bp_ok = 1;
	bounds_at(b, sp);
	return 0;
}

enum { DWARF_RBX = 3 };

/*
 * Whether DWARF register n is one a callee must give back (rbx, r12-r15),
 * and so saves where it uses it.  A frame above the interrupted one whose
 * CFA is on such a register finds it only where its callees saved it.
 * The rows keep that for rbx (glibc's _dl_runtime_resolve keeps its frame
 * in rbx and calls _dl_fixup, C code that saves and uses rbx): the walk
 * follows it in struct frame's bx.  For r12-r15 they do not, and the
 * interrupted value is likely a callee's, so the walk ends there.  A
 * register the ABI lets a callee clobber (rax, r11 ...) that a frame
 * still keeps its base in across a call is one its callees leave alone
 * by the frame's own convention (OpenSSL's), and is taken as it was
 * interrupted.
 */
static int callee_saved(int n)
{
	return n == DWARF_RBX || n >= 12;
}

/* The value of DWARF register n (a GPR CFA's) in frame f; -1 when not
 * known there. */
static int gpr_value(const struct frame *f, int n, uintptr_t *v)
{
	if (n == DWARF_RBX) {
		*v = f->bx;
		return f->bx_ok ? 0 : -1;
	}
	if (!f->gregs || (!f->exact && callee_saved(n)))
		return -1;
	*v = (uintptr_t)f->gregs[unwind_greg_of_dwarf[n]];
	return 0;
}

/* Computes the caller's CFA by row r (0: by frame pointer), reading in
 * b; -1 if it can't. */
static int cfa_of(const struct frame *f, const struct uw_row *r, uintptr_t look,
                  const struct bounds *b, uintptr_t *cfa)
{
	uintptr_t saved;
	struct bounds rb;
	switch (r ? r->cfa : UW_CFA_NONE) {
	case UW_CFA_RSP_DEREF:
	case UW_CFA_RBP_DEREF:
		/* An interrupted frame owns the 128 bytes below its rsp (the
		 * ABI's red zone, which a signal frame skips): OpenSSL's
		 * SHA-512 loop keeps the saved rsp at rsp - 8 */
		rb = *b;
		if (f->exact && rb.lo >= 128 && rb.lo == f->sp)
			rb.lo -= 128;
		if ((r->cfa == UW_CFA_RBP_DEREF && !f->bp_ok) ||
		    load(&rb, (r->cfa == UW_CFA_RSP_DEREF ? f->sp : f->bp) + (uintptr_t)(intptr_t)r->cfa_off,
		         &saved) != 0)
			return -1;
		*cfa = saved + 8;
		return 0;
	case UW_CFA_RSP:
	case UW_CFA_RA_RDI:
	case UW_CFA_GO_INJECTED:
		*cfa = f->sp + (uintptr_t)(intptr_t)r->cfa_off;
		return 0;
	case UW_CFA_RBP:
		*cfa = f->bp + (uintptr_t)(intptr_t)r->cfa_off;
		return f->bp_ok ? 0 : -1;
	case UW_CFA_PLT:
		*cfa = f->sp + 8 + ((look & 15) >= (uintptr_t)r->cfa_off ? 8 : 0);
		return 0;
	case UW_CFA_NONE: /* no CFI here: the frame-pointer convention */
		*cfa = f->bp + 16;
		return f->bp_ok && f->bp >= f->sp ? 0 : -1;
	default:
		if (r->cfa < UW_CFA_GPR || r->cfa > UW_CFA_GPR_LAST ||
		    gpr_value(f, r->cfa - UW_CFA_GPR, &saved) != 0)
			return -1;
		*cfa = saved + (uintptr_t)(intptr_t)r->cfa_off;
		return 0;
	}
}

int unwind_covers(const struct uw_table *t, uintptr_t pc)
{
	return find_module(t, pc) != 0;
}

const struct uw_module *unwind_module_at(const struct uw_table *t, uintptr_t pc)
{
	return find_module(t, pc);
}

/* Whether f, at a pc between two FDEs of m (r, the end marker of the
 * one before), is the outermost frame by a convention no CFI states: 1,
 * or 2 for a frame made by hand at a function's entry (named at its own
 * pc, not the one before); 0 if not.  Never the interrupted frame.
 *
 * A return address that is the first byte of a function, with no code
 * of any function before it, was not pushed by a call: a frame made by
 * hand to enter code, as makecontext() pushes glibc's __start_context
 * under a coroutine's function.  Nothing of the thread lies beyond it on
 * that stack.
 *
 * The ABI marks the deepest frame by a zero frame pointer: ld.so's
 * entry, whose code has no FDE, clears rbp before it runs the
 * constructors (_dl_start_user), so a walk from a constructor ended
 * "[unknown]" there.  Not at the interrupted frame, whose rbp may be any
 * register's value, nor at a pc in no module: a frame-pointer step
 * through a frame that kept none reads a return address that is no
 * code, and that walk failed. */
static int ends_by_convention(const struct uw_module *m, const struct uw_row *r,
                              const struct frame *f)
{
	if (!r || r->cfa != UW_CFA_NONE || f->exact)
		return 0;
	if (r + 1 < m->rows + m->nrows && r[1].pc == (uint32_t)(f->pc - m->lo) &&
	    r[1].cfa != UW_CFA_NONE)
		return 2;
	return f->bp_ok && f->bp == 0;
}

/* Go's runtime preempts a goroutine by a signal whose handler makes the
 * interrupted context call asyncPreempt, pushing the interrupted pc.  A
 * sample signal that was pending meanwhile (the handler blocks every
 * signal; both come at a tick) is delivered at asyncPreempt's first
 * instruction, which has not run: the goroutine is at the pushed pc, an
 * interrupted one.  0, or -1 when it cannot be read. */
static int step_injected(struct frame *f, struct bounds *b)
{
	uintptr_t pc;
	if (load(b, f->sp, &pc) != 0)
		return -1;
	f->pc = pc, f->sp += 8;
	b->lo = f->sp;
	return 0;
}

/* The caller's rbx by row r (NULL: a frame-pointer step, which says
 * nothing of it), the caller's CFA cfa: read from its slot, or kept.  Not
 * knowing rbx fails no walk: only a frame whose CFA is on it needs it. */
static void step_rbx(struct frame *f, const struct uw_row *r, uintptr_t cfa,
                     const struct bounds *b)
{
	if (!r || r->rbx == UW_RBX_UNKNOWN) {
		f->bx_ok = 0;
	} else if (r->rbx >= UW_RBX_SLOT_FIRST) {
		uintptr_t at = cfa - 8 * (uintptr_t)(r->rbx - 1);
		/* below the stack pointer: popped already, rbx holds it */
		if (at >= f->sp)
			f->bx_ok = load(b, at, &f->bx) == 0;
	}
}

/* Steps f to its caller; returns 1 when f was the outermost frame (2 when
 * it is a frame made by hand at a function's entry; 3 when f, the
 * interrupted frame, was replaced by the one it stands for), -1 when it
 * cannot be unwound, 0 on success. */
static int step(const struct uw_table *t, struct frame *f, struct bounds *b)
{
	uintptr_t look = f->exact ? f->pc : f->pc - 1, cfa, ra, bp = f->bp;
	/* A pc in no module: code made at run time (a JIT's), or a library
	 * loaded since the table was published.  JITs keep the frame-pointer
	 * convention (V8 on every frame, HotSpot with -XX:+PreserveFramePointer),
	 * so it is followed, as at a pc of a module that has no CFI there.
	 * Where rbp is no frame pointer, the bounds on every read and the rule
	 * that the CFA grow end the walk, failed, a frame or two later. */
	const struct uw_module *m = find_module(t, look);
	const struct uw_row *r = m ? find_row(m, look) : 0;
	if (r && r->cfa == UW_CFA_END)
		return 1;
	int end = ends_by_convention(m, r, f);
	if (end)
		return end;
	if (r && r->cfa == UW_CFA_SIGNAL)
		return step_signal(f, b);
	if (r && r->cfa == UW_CFA_GO_CGO)
		return f->exact ? -1 : step_go_cgo(f, b, r);
	if (r && r->cfa == UW_CFA_GO_SYSTEMSTACK)
		return f->exact ? -1 : step_go_systemstack(f, b, r);
	if (r && r->cfa == UW_CFA_GO_CALLBACK)
		return f->exact ? -1 : step_go_callback(f, b);
	if (r && r->cfa == UW_CFA_GO_INJECTED && f->exact)
		return step_injected(f, b) == 0 ? 3 : -1;
	if (r && r->cfa == UW_CFA_RA_RDI) {
		/* vfork popped its return address into rdi: the caller's
		 * stack pointer is this frame's (the CFA need not grow) */
		if (!f->exact || !f->gregs || cfa_of(f, r, look, b, &cfa) != 0 || cfa < f->sp)
			return -1;
		ra = (uintptr_t)f->gregs[REG_RDI];
	} else if (cfa_of(f, r, look, b, &cfa) != 0 || cfa <= f->sp || load(b, cfa - 8, &ra) != 0) {
		return -1;
	}
	int bp_ok = f->bp_ok;
	/* By frame pointer (no row, or a gap between FDEs: the end marker
	 * says nothing of rbp), the caller's rbp is where the convention
	 * pushed it.  Taking the marker's "unknown" for rbp ended every walk
	 * one frame after the first in code built without unwind tables but
	 * with frame pointers (Chromium: "[unknown];...", 80% of a run). */
	int by_fp = !r || r->cfa == UW_CFA_NONE;
	if (by_fp || r->rbp == UW_RBP_SAVED) {
		uintptr_t at = by_fp ? cfa - 16 : cfa + (uintptr_t)(intptr_t)r->rbp_off;
		/* A slot below the stack pointer was popped already (GCC's
		 * epilogues keep the rule until the return): rbp holds it. */
		if (at >= f->sp) {
			if (load(b, at, &bp) != 0)
				return -1;
			bp_ok = 1;
		}
	} else if (r->rbp == UW_RBP_UNKNOWN) {
		bp_ok = 0;
	}
	if (ra == 0)
		return 1;
	step_rbx(f, by_fp ? NULL : r, cfa, b);
	f->pc = ra, f->sp = cfa, f->bp = bp;
	f->exact = 0, f->bp_ok = bp_ok;
	b->lo = cfa;
	return 0;
}

enum uw_end unwind_walk(const struct uw_table *t, uintptr_t pc, uintptr_t sp, uintptr_t bp,
                        const greg_t *gregs, uint64_t *pcs, uint32_t max,
                        volatile uint32_t *n)
{
	struct frame f = {pc, sp, bp, gregs, 1, 1, gregs ? (uintptr_t)gregs[REG_RBX] : 0, gregs != NULL};
	struct bounds b;
	uint32_t k = 0, replaced = 0;
	bounds_at(&b, sp);
	pcs[k++] = pc;
	*n = k;
	for (;;) {
		int s = step(t, &f, &b);
		if (s == 2) /* written + 1, as an interrupted pc: read at itself */
			pcs[k - 1] = f.pc + 1;
		if (s == 3) { /* replaced: the leaf written as it is, else + 1 */
			pcs[k - 1] = k == 1 ? f.pc : f.pc + 1;
			if (++replaced > 2) /* a stack of such pcs: no loop down it */
				return UW_END_FAILED;
			continue;
		}
		if (s != 0)
			return s > 0 ? UW_END_COMPLETE : UW_END_FAILED;
		if (k == max)
			return UW_END_TRUNCATED;
		/* An interrupted pc is written + 1: readers take 1 from callers. */
		pcs[k++] = f.exact ? f.pc + 1 : f.pc;
		*n = k;
	}
}
