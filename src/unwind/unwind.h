/*
 * unwind.h - call stacks in the signal handler from DWARF CFI (x86-64).
 *
 * Outside signal context, unwind_build.c turns every loaded object's
 * .eh_frame (found through PT_GNU_EH_FRAME), and a Go program's own
 * stack-pointer tables (unwind_go.c), into a compact, immutable table of
 * rows: from each row's pc on, until the next row's, the caller's frame
 * is found as
 *
 *     CFA = rsp + off | rbp + off      (the caller's rsp after the return;
 *           | another register + off     that register as interrupted;
 *           | [rsp or rbp + off] + 8       the caller's rsp saved in the frame)
 *     return address at CFA - 8        (the x86-64 ABI; in rdi where an
 *                                       interrupted frame keeps it there;
 *                                       other rules: UNKNOWN)
 *     rbp saved at CFA + rbp_off, or unchanged
 *     rbx saved at CFA - 8 * (rbx - 1), or unchanged (what a frame above
 *                                       whose CFA is on rbx needs)
 *
 * and publishes a process-wide table of modules sorted by address.  In the
 * handler, unwind.c walks the interrupted thread's stack with two binary
 * searches and a few checked reads per frame (unwind_walk()).
 *
 * Why not frame pointers, libunwind or stack copies: docs/unwinding.md.
 */
#ifndef PROFIL_UNWIND_H
#define PROFIL_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <ucontext.h>

#include "base/base.h"

/* How a row finds the CFA. */
enum uw_cfa {
	UW_CFA_NONE = 0,    /* no CFI covers the pc: try a frame-pointer step */
	UW_CFA_RSP = 1,     /* rsp + cfa_off */
	UW_CFA_RBP = 2,     /* rbp + cfa_off */
	UW_CFA_PLT = 3,     /* a PLT entry: rsp + 8, + 8 more when (pc & 15) >=
	                       cfa_off (the linker's DW_CFA_def_cfa_expression) */
	UW_CFA_SIGNAL = 4,  /* the signal trampoline: rsp points at a ucontext */
	UW_CFA_END = 5,     /* return address undefined: the outermost frame */
	UW_CFA_UNKNOWN = 6, /* a rule we do not follow: the walk fails here */
	UW_CFA_RA_RDI = 7,  /* rsp + cfa_off, the return address in rdi: glibc's
	                       vfork keeps it there across the system call
	                       (parent and child share the stack); followed in
	                       an interrupted frame only, whose rdi is known */
	UW_CFA_GO_CGO = 8,  /* Go's asmcgocall, returned to from C on the
	                       thread's stack: the goroutine g is at rsp +
	                       cfa_off, g's stack top minus the goroutine's
	                       rsp at rsp + rbp_off; that rsp + 8 (its return
	                       address below) on g's stack, or + 16 when the
	                       rbp rule is UW_RBP_SAVED (asmcgocall pushed the
	                       caller's rbp, at that rsp: Go 1.21 on) */
	UW_CFA_GO_SYSTEMSTACK = 9, /* Go's systemstack, returned to from what it
	                       ran on the thread's stack: the running g (at
	                       %fs:-8) -> its m (at g + (rbp_off & 0xff)) ->
	                       the goroutine (m + cfa_off) -> its saved rsp
	                       (+ (rbp_off >> 8)); that rsp + 8 on the
	                       goroutine's stack, + 16 and rbp at that rsp
	                       when the rbp rule is UW_RBP_SAVED (unwind_go.c) */
	UW_CFA_GO_INJECTED = 10, /* the first instruction of Go's asyncPreempt, a
	                       call its signal handler injected: interrupted
	                       there, the goroutine was at the pc at rsp, with
	                       rsp + 8 (the injected call replaces the leaf);
	                       else rsp + cfa_off, as UW_CFA_RSP */
	UW_CFA_GO_CALLBACK = 11, /* Go's cgocallback, returned to from Go on the
	                       goroutine's stack: rbp points at its frame on
	                       the thread's stack (a frame-pointer step, its
	                       reads bounded by that stack: unwind_go.c) */
	UW_CFA_RSP_DEREF = 12, /* the word at rsp + cfa_off, + 8: the caller's rsp
	                       saved in a frame whose rsp was realigned
	                       (OpenSSL's `.cfi_cfa_expression %rsp+N,deref,+8`) */
	UW_CFA_RBP_DEREF = 13, /* the same at rbp + cfa_off */
	UW_CFA_GPR = 16     /* UW_CFA_GPR + n: CFA = general register n (its
	                       DWARF number, 0-15 but rbp's and rsp's 6 and 7)
	                       + cfa_off, the register's value the interrupted
	                       context's (unwind_walk()'s gregs): OpenSSL's assembly
	                       keeps its frame's base in rax or r11 across
	                       calls to its own routines, which leave it alone.
	                       Above the interrupted frame, a register a
	                       callee may clobber keeps its value up the
	                       stack, as debuggers and the C++ unwinder take
	                       it; one callees save ends the walk there
	                       (r12-r15), but rbx, which the rows follow
	                       up the stack where callees saved it (glibc's
	                       _dl_runtime_resolve keeps its frame in rbx and
	                       calls _dl_fixup, which saves and uses it:
	                       unwind.c, docs/unwinding.md) */
};
#define UW_CFA_GPR_LAST (UW_CFA_GPR + 15)

enum uw_rbp {
	UW_RBP_SAME = 0,    /* the caller's rbp is this frame's */
	UW_RBP_SAVED = 1,   /* at CFA + rbp_off */
	UW_RBP_UNKNOWN = 2  /* somewhere we do not follow */
};

/* Where a row says the caller's rbx is: UW_RBX_UNKNOWN (0, what a row
 * made without saying gets), UW_RBX_SAME (this frame's), or a slot k of
 * UW_RBX_SLOT_FIRST..UW_RBX_SLOT_LAST: saved at CFA - 8 * (k - 1), that
 * is CFA - 8 to CFA - 496 (every push of a callee-saved register in a
 * prologue lands there; a save further off is UNKNOWN). */
enum { UW_RBX_UNKNOWN = 0, UW_RBX_SAME = 1, UW_RBX_SLOT_FIRST = 2, UW_RBX_SLOT_LAST = 63 };

#define UW_INDEX_SHIFT 8

/* One row: 12 bytes.  pc is an offset from the module's lo. */
struct uw_row {
	uint32_t pc;
	int32_t cfa_off;
	int16_t rbp_off;
	uint8_t cfa;        /* enum uw_cfa */
	uint8_t rbp : 2;    /* enum uw_rbp */
	uint8_t rbx : 6;    /* UW_RBX_* or a slot (above) */
};

/*
 * One object's rows, sorted by pc, covering [lo, hi).  Built (or mapped
 * from another process's build, unwind_cache.c) once when the object is
 * first seen, IMMUTABLE from then on, freed only after every table that
 * points at it has been retired (unwind_build.c).
 */
struct uw_module {
	uintptr_t lo, hi;
	size_t nrows;
	const struct uw_row *rows;
	/* index[i]: the row in force at lo + (i << UW_INDEX_SHIFT), so the
	 * row for a pc in that block lies in [index[i], index[i + 1]]: a
	 * search over a few rows instead of all (one entry per 256 bytes of
	 * code, ((hi - lo) >> UW_INDEX_SHIFT) + 2 entries). */
	const uint32_t *index;
	/* Identity, for reuse across rebuilds (not read by the handler). */
	uintptr_t base;
	const void *phdr;
	uintptr_t eh_frame_hdr;
	int seen;
	void *map;          /* rows and index mapped from the cache, or NULL */
	size_t maplen;
	void *heap;         /* rows and index built here (mem_alloc), or NULL */
};

/*
 * What the handler reads: modules sorted by lo, not overlapping.
 * IMMUTABLE while published (unwind_published); replaced as a whole by
 * unwind_refresh(), which frees the old one only after engine_drain().
 */
struct uw_table {
	size_t nmods;
	const struct uw_module *mods[];
};

/* unwind_build.c: read by the handler between its profil_inflight
 * increment and decrement (sample.c), written only by unwind_refresh()
 * under its own lock (sequentially consistent store). */
extern const struct uw_table *_Atomic unwind_published HIDDEN;

/*
 * The calling thread's stack, [lo, hi), read by the handler to bound its
 * reads.  Written only by the thread itself (unwind_note_stack()), outside
 * signal context; zero when unknown (the handler then bounds reads by
 * UW_STACK_GUESS above the interrupted rsp, and a fault is recovered).
 */
struct uw_stack {
	uintptr_t lo, hi;
};
extern __thread struct uw_stack unwind_stack
	__attribute__((tls_model("initial-exec"))) HIDDEN;
#define UW_STACK_GUESS ((uintptr_t)64 << 20)

/* unwind_table.c: the rows of one object (dl_iterate_phdr's info) from its
 * .eh_frame_hdr at runtime address hdr (0: none), covering at least its
 * executable segments: the module and its rows' block (heap), both
 * mem_alloc'd and freed by uw_module_free(); NULL when out of memory. */
struct dl_phdr_info;
HIDDEN struct uw_module *uw_module_build(const struct dl_phdr_info *info, uintptr_t hdr);
/* unwind_table.c: the PT_LOAD segment of info holding addr, as [*lo,
 * *hi); 0 when found. */
HIDDEN int uw_segment_of(const struct dl_phdr_info *info, uintptr_t addr, uintptr_t *lo,
                         uintptr_t *hi);

/* unwind_cache.c: tables shared by the processes of one recording, under
 * the object's build-id in a directory (uw_cache_dir(), "" or NULL: no
 * cache).  uw_cache_load() maps a table built before, or gives NULL;
 * uw_cache_store() writes one; uw_module_free() frees either kind. */
HIDDEN void uw_cache_dir(const char *dir);
HIDDEN struct uw_module *uw_cache_load(const struct dl_phdr_info *info, uintptr_t hdr);
HIDDEN void uw_cache_store(const struct dl_phdr_info *info, uintptr_t hdr,
                           const struct uw_module *m);
HIDDEN void uw_module_free(struct uw_module *m);
/* The path of the object's file into buf: its dlpi_name, or for the main
 * program /proc/self/exe (the file base/maps.c finds its code mapped from
 * where the dynamic loader was run as the program); 0, or -1. */
HIDDEN int uw_object_path(const struct dl_phdr_info *info, char *buf, size_t size);
/* unwind_go.c: whether the object carries the note Go's linker writes in
 * every Go program (owner "Go", type 4: the Go build ID), read from its
 * PT_NOTE segments, every read inside the PT_LOAD segment that holds
 * them. */
HIDDEN int uw_has_go_note(const struct dl_phdr_info *info);

/* unwind_build.c (not signal context).  unwind_start() turns unwinding on
 * (builds and publishes the table, notes this thread's stack), with tables
 * shared through cache_dir (NULL: none);
 * unwind_refresh() brings the table up to date with the objects loaded
 * now, when it is on (call it after dlopen/dlclose).  Both return 0, or
 * -1 with errno ENOMEM: an object then has no rows (or the previous
 * table stays). */
HIDDEN int unwind_start(const char *cache_dir);
HIDDEN int unwind_refresh(void);
/* Records the calling thread's stack bounds (unwind_stack) when on. */
HIDDEN void unwind_note_stack(void);
/* In a forked child: the build lock may be held by a thread that is gone. */
HIDDEN void unwind_after_fork(void);

/*
 * unwind.c: signal context.  Walks from the interrupted registers and
 * writes at most max pcs into pcs[]: pcs[0] = pc, then return addresses;
 * a frame interrupted by a signal is written as its pc + 1, so that every
 * caller entry minus one is inside the call (ring.h).  Returns the number
 * written; *end says how the walk ended.  pcs may be written before a
 * fault: the caller arms recovery and counts what *n says.
 */
enum uw_end {
	UW_END_COMPLETE = 0,  /* reached the outermost frame */
	UW_END_TRUNCATED = 1, /* max reached with frames left */
	UW_END_FAILED = 2     /* a frame could not be unwound */
};
/* Whether pc lies in a module of t (signal context, as unwind_walk()). */
HIDDEN int unwind_covers(const struct uw_table *t, uintptr_t pc);
/* The module of t holding pc, 0 if none (signal context too). */
HIDDEN const struct uw_module *unwind_module_at(const struct uw_table *t, uintptr_t pc);
/* The gregs[] index (ucontext.h's REG_*) of each DWARF register number
 * (0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15). */
static const int unwind_greg_of_dwarf[16] = {
	REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
	REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

/* gregs: the interrupted context's registers (its ucontext's
 * uc_mcontext.gregs, read in place, not copied), or NULL when not known
 * (a walk then ends at a rule that needs one, rbp and rsp aside). */
HIDDEN enum uw_end unwind_walk(const struct uw_table *t, uintptr_t pc, uintptr_t sp,
                               uintptr_t bp, const greg_t *gregs, uint64_t *pcs,
                               uint32_t max, volatile uint32_t *n);

/* unwind_cache.c: an object's GNU build-id from its notes in memory; its
 * length, 0 if none (or longer than cap). */
struct dl_phdr_info;
HIDDEN size_t object_build_id(const struct dl_phdr_info *info, uint8_t *out, size_t cap);

#endif /* PROFIL_UNWIND_H */
