/*
 * test-unwind-go.c - the walk through a Go program's stacks
 * (src/unwind/unwind_go.c, and the Go steps of src/unwind/unwind.c): on a
 * hand-made module of Go's shapes, and the rows made from the machine
 * code of Go's runtime as its linkers emitted it (test/unwind/go-code.h).
 * Whole Go programs are test/cli/record.t's (test/rec/recgo.go).
 */
#include "runner.h"
#include "unwind/go-code.h"

#include "../src/unwind/unwind_go.c"

#include <stdlib.h>

/*
 * A hand-made module of Go's shapes (src/unwind/unwind_go.c): a C leaf at
 * +0x100 (CFA rsp + 8), asmcgocall's call at +0x200 (UW_CFA_GO_CGO: g at
 * +0x30, depth at +0x28), a Go function at +0x300 (CFA rsp + 8),
 * runtime.goexit at +0x400 (outermost), asyncPreempt's first instruction
 * at +0x500 (UW_CFA_GO_INJECTED), Go 1.22's asmcgocall call at +0x600
 * (framed: g at +0x8, depth at +0; UW_RBP_SAVED), cgocallback's call of
 * Go at +0x700 (UW_CFA_GO_CALLBACK), a Go function that saved rbp at
 * +0x710, and from +0x720 on no rows (a frame-pointer step).
 */
#define GO_LO ((uintptr_t)0x7f0000000000)
static struct uw_table *go_table(void)
{
	static struct uw_row rows[] = {
		{0x100, 8, 0, UW_CFA_RSP, UW_RBP_SAME, UW_RBX_UNKNOWN}, {0x110, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN},
		{0x200, 0x30, 0x28, UW_CFA_GO_CGO, UW_RBP_SAME, UW_RBX_UNKNOWN},
		{0x202, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN},
		{0x300, 8, 0, UW_CFA_RSP, UW_RBP_SAME, UW_RBX_UNKNOWN}, {0x310, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN},
		{0x400, 0, 0, UW_CFA_END, UW_RBP_SAME, UW_RBX_UNKNOWN}, {0x410, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN},
		{0x500, 8, 0, UW_CFA_GO_INJECTED, UW_RBP_SAME, UW_RBX_UNKNOWN},
		{0x501, 16, -16, UW_CFA_RSP, UW_RBP_SAVED, UW_RBX_UNKNOWN},
		{0x510, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN},
		{0x600, 0x8, 0, UW_CFA_GO_CGO, UW_RBP_SAVED, UW_RBX_UNKNOWN},
		{0x605, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN},
		{0x700, 0, 0, UW_CFA_GO_CALLBACK, UW_RBP_SAME, UW_RBX_UNKNOWN},
		{0x702, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN},
		{0x710, 16, -16, UW_CFA_RSP, UW_RBP_SAVED, UW_RBX_UNKNOWN},
		{0x720, 0, 0, UW_CFA_NONE, UW_RBP_UNKNOWN, UW_RBX_UNKNOWN},
	};
	enum { NROWS = sizeof rows / sizeof rows[0], NIDX = (0x1000 >> UW_INDEX_SHIFT) + 2 };
	static uint32_t index[NIDX];
	static struct uw_module m;
	for (size_t i = 0, r = 0; i < NIDX; i++) { /* as unwind_table.c's */
		while (r + 1 < NROWS && rows[r + 1].pc <= (uint32_t)(i << UW_INDEX_SHIFT))
			r++;
		index[i] = (uint32_t)r;
	}
	m = (struct uw_module){.lo = GO_LO, .hi = GO_LO + 0x1000, .nrows = NROWS, .rows = rows,
	                       .index = index};
	struct uw_table *table = malloc(sizeof *table + sizeof table->mods[0]);
	ASSERT(table != NULL);
	table->nmods = 1;
	table->mods[0] = &m;
	return table;
}

/*
 * Go's asmcgocall calls C on the thread's own stack, after saving the
 * goroutine g (whose first words are its stack's [lo, hi)) and hi minus
 * the goroutine's stack pointer in its frame.  The walk from the C leaf
 * must cross to the goroutine's stack, a separate block, and end there
 * complete; with the depth past the goroutine's stack it fails at
 * asmcgocall, reading nothing outside either stack.
 */
static enum uw_end walk_cgo(uintptr_t depth_bias, uint64_t *pcs, volatile uint32_t *n)
{
	static uintptr_t thread_stack[64], goroutine[64], g[2];
	struct uw_table *table = go_table();
	g[0] = (uintptr_t)&goroutine[0], g[1] = (uintptr_t)&goroutine[64];
	uintptr_t *sp = &thread_stack[8];
	sp[0] = GO_LO + 0x202;                  /* the leaf's return, into asmcgocall */
	sp[1 + 0x28 / 8] = (uintptr_t)&goroutine[64] - (uintptr_t)&goroutine[40] + depth_bias;
	sp[1 + 0x30 / 8] = (uintptr_t)g;
	goroutine[40] = GO_LO + 0x302;          /* asmcgocall's return, into Go */
	goroutine[41] = GO_LO + 0x401;          /* the Go function's, into goexit */
	enum uw_end end = unwind_walk(table, GO_LO + 0x100, (uintptr_t)sp, 0, 0, pcs, 8, n);
	free(table);
	return end;
}

TEST_IMPL(unwind_go_cgo_back_to_goroutine)
{
	uint64_t pcs[8];
	volatile uint32_t n = 0;
	enum uw_end end = walk_cgo(0, pcs, &n);
	printf("cgo walk: %u frames, end %d\n", (unsigned)n, (int)end);
	ASSERT_EQ(end, UW_END_COMPLETE);
	ASSERT_EQ(n, 4u);
	ASSERT_EQ(pcs[0], (uint64_t)GO_LO + 0x100);
	ASSERT_EQ(pcs[1], (uint64_t)GO_LO + 0x202);
	ASSERT_EQ(pcs[2], (uint64_t)GO_LO + 0x302);
	ASSERT_EQ(pcs[3], (uint64_t)GO_LO + 0x401);
	/* a depth past the goroutine's stack: no read below it */
	end = walk_cgo(64 * 8, pcs, &n);
	ASSERT_EQ(end, UW_END_FAILED);
	ASSERT_EQ(n, 2u);
	return 0;
}

/*
 * A sample delivered at asyncPreempt's first instruction, a call Go's
 * preemption handler injected (the instruction has not run): the leaf is
 * the pc the call pushed, in the Go function at +0x300, interrupted there
 * (an exact pc, not a return address), and the walk goes on from it.
 * Before the row kind, the leaf was asyncPreempt's entry and its caller
 * the Go function (10% to 28% of a busy Go program's samples).
 */
TEST_IMPL(unwind_go_injected_call_is_not_a_frame)
{
	static uintptr_t stack[16];
	uint64_t pcs[8];
	volatile uint32_t n = 0;
	struct uw_table *table = go_table();
	stack[4] = GO_LO + 0x308;  /* pushed by the injected call: the resume pc */
	stack[5] = GO_LO + 0x401;  /* the Go function's return, into goexit */
	enum uw_end end = unwind_walk(table, GO_LO + 0x500, (uintptr_t)&stack[4], 0, 0, pcs, 8, &n);
	printf("injected call: %u frames, end %d\n", (unsigned)n, (int)end);
	ASSERT_EQ(end, UW_END_COMPLETE);
	ASSERT_EQ(n, 2u);
	ASSERT_EQ(pcs[0], (uint64_t)GO_LO + 0x308);
	ASSERT_EQ(pcs[1], (uint64_t)GO_LO + 0x401);
	/* at its second instruction asyncPreempt is a frame like any other,
	 * the resume pc its caller's (a return address) */
	stack[2] = 0x1111;         /* the rbp it pushed */
	stack[3] = GO_LO + 0x308;
	stack[4] = GO_LO + 0x401;
	end = unwind_walk(table, GO_LO + 0x501, (uintptr_t)&stack[2], 0, 0, pcs, 8, &n);
	ASSERT_EQ(end, UW_END_COMPLETE);
	ASSERT_EQ(n, 3u);
	ASSERT_EQ(pcs[0], (uint64_t)GO_LO + 0x501);
	ASSERT_EQ(pcs[1], (uint64_t)GO_LO + 0x308);
	ASSERT_EQ(pcs[2], (uint64_t)GO_LO + 0x401);
	/* a stack of asyncPreempt entries is not followed down */
	for (int i = 0; i < 16; i++)
		stack[i] = GO_LO + 0x500;
	end = unwind_walk(table, GO_LO + 0x500, (uintptr_t)&stack[0], 0, 0, pcs, 8, &n);
	ASSERT_EQ(end, UW_END_FAILED);
	ASSERT_EQ(n, 1u);
	free(table);
	return 0;
}

/*
 * From Go 1.21 asmcgocall pushes rbp: the goroutine's rsp it saved
 * points at the caller's rbp, the return address 8 above.  The walk
 * from C took the rbp for a return address ("[unknown];0xc000...;
 * runtime.asmcgocall" on every sample in C); it must go on at the
 * return address, with that rbp as the caller's frame pointer (its
 * caller at +0x800 is walked by it).
 */
TEST_IMPL(unwind_go_framed_cgo_back_to_goroutine)
{
	static uintptr_t thread_stack[64], goroutine[64], g[2];
	uint64_t pcs[8];
	volatile uint32_t n = 0;
	struct uw_table *table = go_table();
	g[0] = (uintptr_t)&goroutine[0], g[1] = (uintptr_t)&goroutine[64];
	uintptr_t *sp = &thread_stack[8];
	sp[0] = GO_LO + 0x605;                   /* the leaf's return, into asmcgocall */
	sp[1] = (uintptr_t)&goroutine[64] - (uintptr_t)&goroutine[40]; /* depth, at +0 */
	sp[2] = (uintptr_t)g;                    /* g, at +8 */
	goroutine[40] = (uintptr_t)&goroutine[50]; /* the rbp asmcgocall pushed */
	goroutine[41] = GO_LO + 0x802;           /* its return, into Go code without rows */
	goroutine[50] = 0x1111;                  /* that code's caller's rbp */
	goroutine[51] = GO_LO + 0x401;           /* its return, into goexit */
	enum uw_end end = unwind_walk(table, GO_LO + 0x100, (uintptr_t)sp, 0, 0, pcs, 8, &n);
	printf("framed cgo walk: %u frames, end %d\n", (unsigned)n, (int)end);
	ASSERT_EQ(end, UW_END_COMPLETE);
	ASSERT_EQ(n, 4u);
	ASSERT_EQ(pcs[0], (uint64_t)GO_LO + 0x100);
	ASSERT_EQ(pcs[1], (uint64_t)GO_LO + 0x605);
	ASSERT_EQ(pcs[2], (uint64_t)GO_LO + 0x802);
	ASSERT_EQ(pcs[3], (uint64_t)GO_LO + 0x401);
	free(table);
	return 0;
}

/*
 * C calling Go: cgocallback made its frame on the thread's stack, then
 * ran Go on a goroutine's, whose first frame saved cgocallback's rbp.
 * The walk from Go must step by that rbp back onto the thread's stack
 * (a block of its own, far from the goroutine's) and on through the C
 * code there; it ended "[unknown];runtime.cgocallback;..." when that
 * step's reads were bounded by the goroutine's stack.
 */
TEST_IMPL(unwind_go_callback_back_to_c)
{
	/* the thread's stack below the goroutine's: no read from the one is
	 * in the other's bounds (apart, as 0x7ff... and 0xc000... are) */
	static uintptr_t stacks[128];
	uintptr_t *thread_stack = &stacks[0], *goroutine = &stacks[64];
	uint64_t pcs[8];
	volatile uint32_t n = 0;
	struct uw_table *table = go_table();
	uintptr_t *frame = &thread_stack[20];      /* cgocallback's, on the thread's stack */
	frame[0] = (uintptr_t)&thread_stack[30];   /* its caller's rbp */
	frame[1] = GO_LO + 0x802;                  /* its return, into C without rows */
	thread_stack[31] = GO_LO + 0x401;          /* that C code's return, into goexit */
	goroutine[10] = (uintptr_t)frame;          /* rbp, saved by the Go function */
	goroutine[11] = GO_LO + 0x702;             /* its return, into cgocallback */
	enum uw_end end =
	    unwind_walk(table, GO_LO + 0x714, (uintptr_t)&goroutine[10], 0, 0, pcs, 8, &n);
	printf("callback walk: %u frames, end %d\n", (unsigned)n, (int)end);
	ASSERT_EQ(end, UW_END_COMPLETE);
	ASSERT_EQ(n, 4u);
	ASSERT_EQ(pcs[1], (uint64_t)GO_LO + 0x702);
	ASSERT_EQ(pcs[2], (uint64_t)GO_LO + 0x802);
	ASSERT_EQ(pcs[3], (uint64_t)GO_LO + 0x401);
	free(table);
	return 0;
}

/* The rows cgo_call_row() ('c'), systemstack_row() ('s') or
 * callback_row() ('b') makes for the function
 * code (len bytes) placed at +0x20 of a buffer of int3, with pad (if
 * any) at +0; their number, the first two in out[] as offsets from the
 * function. */
static size_t runtime_rows(int kind, const uint8_t *code, size_t len, const uint8_t *pad,
                           size_t padlen, struct uw_row out[2])
{
	static uint8_t buf[0x20 + 512];
	ASSERT(len <= sizeof buf - 0x20 && padlen <= 0x20);
	memset(buf, 0xcc, sizeof buf);
	memcpy(buf, pad, padlen);
	memcpy(buf + 0x20, code, len);
	uintptr_t entry = (uintptr_t)buf + 0x20;
	struct trows t = {.text_lo = (uintptr_t)buf, .text_hi = (uintptr_t)buf + sizeof buf,
	                  .origin = entry};
	if (kind == 'c')
		cgo_call_row(&t, entry, entry + len);
	else if (kind == 's')
		systemstack_row(&t, entry, entry + len);
	else
		callback_row(&t, entry, entry + len);
	ASSERT(!t.oom);
	size_t n = t.n;
	for (size_t i = 0; i < n && i < 2; i++)
		out[i] = t.v[i];
	mem_free(t.v);
	return n;
}

static void assert_row(const struct uw_row *r, uint32_t pc, uint8_t cfa, int32_t cfa_off,
                       int16_t rbp_off, uint8_t rbp)
{
	printf("  row +%#x: cfa %u %#x, rbp_off %#x, rbp %u\n", r->pc, r->cfa, (unsigned)r->cfa_off,
	       (unsigned)(uint16_t)r->rbp_off, r->rbp);
	ASSERT_EQ(r->pc, pc);
	ASSERT_EQ(r->cfa, cfa);
	ASSERT_EQ(r->cfa_off, cfa_off);
	ASSERT_EQ(r->rbp_off, rbp_off);
	ASSERT_EQ(r->rbp, rbp);
}

/*
 * The rows at the calls of asmcgocall and systemstack, from the code of
 * Go 1.19, 1.21 and 1.23 (and cgocallback's call of Go): where the call is, where g and the depth are
 * kept, and whether the function made a frame (UW_RBP_SAVED: 1.21 on).
 * 1.22's call into C by way of a landing pad is matched only with the
 * pad's code at the call's target.  Before, 1.21's rows were made as
 * 1.19's (no frame), and 1.23's asmcgocall had none.
 */
TEST_IMPL(unwind_go_rows_at_runtime_calls)
{
	static const uint8_t none[1];
	struct uw_row r[2];
	const uint8_t saved = UW_RBP_SAVED, same = UW_RBP_SAME;
	ASSERT_EQ(runtime_rows('c', go119_asmcgocall, sizeof go119_asmcgocall, none, 0, r), 2u);
	assert_row(&r[0], 0x62, UW_CFA_GO_CGO, 0x30, 0x28, same);
	assert_row(&r[1], 0x64, UW_CFA_NONE, 0, 0, UW_RBP_UNKNOWN);
	ASSERT_EQ(runtime_rows('c', go121_asmcgocall, sizeof go121_asmcgocall, none, 0, r), 2u);
	assert_row(&r[0], 0x66, UW_CFA_GO_CGO, 0x30, 0x28, saved);
	ASSERT_EQ(runtime_rows('c', go123_asmcgocall, sizeof go123_asmcgocall, go123_landingpad,
	                       sizeof go123_landingpad, r), 2u);
	assert_row(&r[0], 0x5f, UW_CFA_GO_CGO, 0x8, 0, saved);
	assert_row(&r[1], 0x64, UW_CFA_NONE, 0, 0, UW_RBP_UNKNOWN);
	/* a call to anything but the landing pad is not the call into C */
	ASSERT_EQ(runtime_rows('c', go123_asmcgocall, sizeof go123_asmcgocall, none, 0, r), 0u);
	ASSERT_EQ(runtime_rows('s', go119_systemstack, sizeof go119_systemstack, none, 0, r), 2u);
	assert_row(&r[0], 0x47, UW_CFA_GO_SYSTEMSTACK, 0xc0, 0x30 | 0x38 << 8, same);
	assert_row(&r[1], 0x49, UW_CFA_NONE, 0, 0, UW_RBP_UNKNOWN);
	ASSERT_EQ(runtime_rows('s', go121_systemstack, sizeof go121_systemstack, none, 0, r), 2u);
	assert_row(&r[0], 0x48, UW_CFA_GO_SYSTEMSTACK, 0xc0, 0x30 | 0x38 << 8, saved);
	ASSERT_EQ(runtime_rows('b', go123_cgocallback, sizeof go123_cgocallback, none, 0, r), 2u);
	assert_row(&r[0], 0xca, UW_CFA_GO_CALLBACK, 0, 0, same);
	assert_row(&r[1], 0xcc, UW_CFA_NONE, 0, 0, UW_RBP_UNKNOWN);
	return 0;
}
