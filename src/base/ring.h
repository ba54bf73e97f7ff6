/*
 * ring.h - the sample ring: a record stream in memory shared between a
 * profiled process (the engine writes it from the signal handler) and a
 * reader in another process (`profil record`).  This header is the
 * format; the writer is in sample.c, the reader in cli/record/.
 *
 * A ring file (one per process image, created by the agent) is laid out
 * as: struct ring_file (the control block, RING_HEADER_SIZE bytes), the
 * record area (data_size bytes, a power of two), then the module log
 * (modlog_size bytes).  Every field the two sides both change is an
 * atomic, and both sides treat the other as hostile: the reader checks
 * every size it reads; the writer only ever reads head and tail.
 *
 * Records.  Writers are the threads of one process (several at once, in
 * signal handlers).  A writer reserves space by compare-and-swap on head,
 * fills the record, then stores its first word (hdr) with release
 * semantics: a nonzero hdr is the commit.  The reader consumes records in
 * order from tail, stops at the first hdr still zero, zeroes what it
 * consumed and advances tail with release semantics (at a page boundary,
 * after giving the whole pages consumed back to the file system: they
 * read as zeros again; cli/record/records.c).  Records never wrap:
 * a writer that would cross the end first fills the rest with a SKIP
 * record.  A writer that finds no room drops the sample and adds its
 * weight to `lost`: the profiled program never waits for the reader.
 *
 *   hdr     bits 31..24 type (RING_SAMPLE, RING_SKIP, RING_THREAD: a
 *           thread's name, struct ring_thread below; RING_REAPED: a
 *           child's CPU, struct ring_reaped; RING_FORKED: a forked
 *           child without a ring file, struct ring_forked; RING_REPEAT:
 *           weight for a thread's last sample's stack, struct
 *           ring_repeat), 23..0 size in
 *           8-byte words, header included (so never 0 once committed)
 *   tid     thread that was sampled
 *   weight  timer expiries this sample stands for (1 + overrun)
 *   modgen  the module log's generation when the sample was taken, so a
 *           pc is looked up among the modules loaded at that moment
 *   pcs[]   size - 2 words: pcs[0] is the interrupted pc, then callers
 *           (return addresses), when stacks are recorded (the agent's
 *           PROFIL_STACK_DEPTH > 1: src/unwind.h).  A frame interrupted
 *           by a signal (below a signal trampoline) is written as its pc
 *           + 1, so that every entry after pcs[0], minus one, lies inside
 *           the instruction that was executing or calling.  A stack that
 *           does not end at the outermost frame ends with a marker in
 *           place of a pc: RING_PC_TRUNCATED (cut at the depth limit) or
 *           RING_PC_UNKNOWN (the unwind could not go on: no CFI for a
 *           frame, a bad stack, a fault).  A marker is never a pc: user
 *           space ends far below.  Markers live in pcs[] rather than in
 *           the record type so that the reader's aggregation key (the
 *           pcs) keeps a cut stack apart from a complete one with no
 *           further change to it.
 *
 *           The writer reserves room for the deepest stack, unwinds into
 *           it, and turns the unused tail into a SKIP record, committed
 *           before the sample's own hdr.
 *
 * Bounds: data_size <= 2^30, so positions (head, tail: byte counts that
 * only grow) cannot wrap a 64-bit counter in any real run.
 */
#ifndef PROFIL_RING_H
#define PROFIL_RING_H

#include <stdint.h>

#define RING_MAGIC "PRFRING1"
#define RING_VERSION 1u
#define RING_HEADER_SIZE 4096u
#define RING_DATA_MAX (1u << 30)

/* The header's flags.  RING_FLAG_SWITCHED: on perf events, a thread of
 * the process blocked and woke so often that it was moved to a timer
 * (src/engine/switchwatch.h); the recorder's note on switching costs
 * says so instead of advising the timers (cli/record/enginehint.c). */
#define RING_FLAG_SWITCHED 1u
/* RING_FLAG_FAULTED: a write into the ring faulted in the handler (its
 * file system full: a page the reader gave back could not be had again)
 * and the process's sampling stopped there (src/engine/fault.c); the
 * recorder says so (cli/record/summary.c). */
#define RING_FLAG_FAULTED 2u

enum ring_type {
	RING_SAMPLE = 1,
	RING_SKIP = 2,
	RING_THREAD = 3,
	RING_REAPED = 4,
	RING_FORKED = 5,
	RING_REPEAT = 6
};

#define RING_HDR(type, words) (((uint32_t)(type) << 24) | ((uint32_t)(words) & 0xffffffu))
#define RING_HDR_TYPE(h) ((h) >> 24)
#define RING_HDR_WORDS(h) ((h) & 0xffffffu)

struct ring_record {
	uint32_t hdr;
	uint32_t tid;
	uint32_t weight;
	uint32_t modgen;
	uint64_t pcs[];
};

/* A thread's name (its comm: at most 15 bytes, NUL-padded), written
 * outside signal context when a thread made through pthread_create ends
 * (src/process/threads.c), so that a thread gone before the reader
 * looked at /proc, or renamed since, is shown by its last name. */
struct ring_thread {
	uint32_t hdr;            /* RING_HDR(RING_THREAD, 3) */
	uint32_t tid;
	char name[16];
};

/* Weight a thread is credited at its end (its expiries never sent:
 * src/process/threads.c) on the stack of its last sample record in this
 * ring, which the reader keeps (cli/record/records.c); at [unsampled]
 * when it has none there (the sample was lost).  Written outside signal
 * context. */
struct ring_repeat {
	uint32_t hdr;            /* RING_HDR(RING_REPEAT, 2) */
	uint32_t tid;
	uint32_t weight;
	uint32_t modgen;         /* written (sample_records.c), not read */
};

/* A child this process reaped (wait4() and the calls made of it:
 * agent/reap.c) and the CPU time the kernel counted for it and its own
 * reaped descendants (the rusage wait4 returns), so that the reader can
 * credit what no sample of the child covered: its exit, above all.
 * Written outside signal context, or in a SIGCHLD handler. */
struct ring_reaped {
	uint32_t hdr;            /* RING_HDR(RING_REAPED, 2) */
	uint32_t pid;            /* as this process sees it; 0: children no
	                          * hook saw reaped (an image before this
	                          * exec with no agent in it, waitid(),
	                          * system(), a raw wait4), together
	                          * (agent/reap.c reaps_settle()) */
	uint64_t cpu_ns;
};

/* A forked child sampled into memory of its own until it needs a ring
 * file (agent/defer.c) says so, in the ring of its nearest ancestor that
 * has one: at the fork (RING_FORKED_DEFERRED), and if it execs with
 * nothing sampled, no file made (RING_FORKED_EXECING; DEFERRED again if
 * the exec failed).  The last record of a pid wins.  A child with no
 * image whose last word is DEFERRED ended before its first sample (or was
 * killed): its parent's reap is all of its time, credited at the
 * [unsampled] marker; one whose last word is EXECING and has no image
 * after became a program no agent entered (statically linked, set-uid),
 * and its time is that program's (cli/record/reaped.c).  Written by the
 * child, async-signal-safe (an exec may run in a signal handler).
 *
 * The word written at the fork carries where the child came from when
 * stacks are recorded: pcs[] (size - 2 words) are the callers of the
 * fork, return addresses only, from the first frame outside the agent
 * and the C library (the fork() call's caller) out, a marker last when
 * the walk did not reach the outermost frame; looked up among the
 * ancestor's modules of generation modgen.  The reader shows an
 * unsampled child's time under them.  Other words carry none. */
enum ring_forked_state {
	RING_FORKED_DEFERRED = 1,
	RING_FORKED_EXECING = 2
};

struct ring_forked {
	uint32_t hdr;            /* RING_HDR(RING_FORKED, 2 + callers) */
	uint32_t pid;            /* as the child sees it */
	uint32_t state;          /* enum ring_forked_state */
	uint32_t modgen;         /* the ring's module generation at the fork */
	uint64_t pcs[];          /* the fork's callers, at the fork only */
};

/* Most pcs one record may carry (the stack depth limit's ceiling). */
#define RING_MAX_PCS 1024u

/* Stack end markers in pcs[] (see Records above). */
#define RING_PC_TRUNCATED UINT64_C(0xffffffffffffffff)
#define RING_PC_UNKNOWN UINT64_C(0xfffffffffffffffe)
/* Alone in pcs[]: CPU time this process image spent before its sampling
 * began (exec, the dynamic loader, constructors before the agent's, the
 * agent's own start; in a forked child, the fork hook), measured on the
 * thread's CPU clock and written once by the agent (agent.c). */
#define RING_PC_STARTUP UINT64_C(0xfffffffffffffffd)
/* Alone in pcs[]: expiries a thread passed but was never sent, credited
 * when it exits or execs, for a thread no sample ever reached (one that
 * was is credited at its last sampled pc): agent/account.c, exec.c. */
#define RING_PC_UNSAMPLED UINT64_C(0xfffffffffffffffc)
/* Alone in pcs[]: the part of an image's start-up that was the agent's
 * own (its constructor, up to the timers' start), so that its cost is
 * not read as the program's. */
#define RING_PC_AGENT UINT64_C(0xfffffffffffffffb)
/* Never in a ring: the reader's own location for CPU time the kernel
 * counted for a process after its agent's last account (its exit), from
 * its parent's RING_REAPED (cli/record/reaped.c). */
#define RING_PC_EXIT UINT64_C(0xfffffffffffffffa)
/* Alone in pcs[]: CPU time of one of io_uring's worker threads, kernel
 * threads of the process that no sample can reach, credited by the
 * helper's sweeps (src/engine/ioworkers.c). */
#define RING_PC_IO_WORKER UINT64_C(0xfffffffffffffff9)
#define RING_PC_IS_MARKER(pc) ((pc) >= RING_PC_IO_WORKER)

/* ring_file.done while the image execs (agent/agent.c agent_mark_exec()):
 * a process whose last image says so, with no image after it, ran on in
 * a program no agent entered (statically linked, set-uid, LD_PRELOAD
 * removed), and the rest of its CPU time is that program's, not its
 * exit's (cli/record/reaped.c). */
#define RING_EXECING 1u
/* Most frames a stack may hold: a marker must still fit. */
#define RING_MAX_DEPTH (RING_MAX_PCS - 1u)

/*
 * Module log: an append-only sequence of struct ring_module records
 * written by the agent outside signal context (under its own lock).
 * modlog_len (release) says how many bytes are complete; modgen is bumped
 * (release) after each event is complete, and samples carry it.  A load
 * event has gen = the new generation; the module is valid for samples
 * whose modgen >= gen, until an unload event for the same (base, start)
 * with a later gen.
 */
enum ring_module_event {
	RING_MODULE_LOAD = 1,
	RING_MODULE_UNLOAD = 2
};

struct ring_module {
	uint32_t size;           /* bytes of this record, 8-aligned */
	uint16_t event;          /* enum ring_module_event */
	uint16_t build_id_len;   /* bytes used in build_id[] */
	uint32_t gen;
	uint32_t path_len;       /* bytes of path[], NUL not counted */
	uint64_t base;           /* load bias (dl_iterate_phdr's dlpi_addr) */
	uint64_t start, end;     /* executable segment [start, end) */
	uint64_t file_offset;    /* its p_offset */
	int64_t time_ns;         /* CLOCK_REALTIME of the event */
	uint8_t build_id[32];
	char path[];             /* NUL-terminated; "[vdso]" for the vDSO */
};

/* The control block at offset 0 of a ring file. */
struct ring_file {
	_Alignas(8) char magic[8]; /* RING_MAGIC, stored last (release) */
	uint32_t version;        /* RING_VERSION */
	uint32_t header_size;    /* RING_HEADER_SIZE */
	uint64_t data_offset, data_size;
	uint64_t modlog_offset, modlog_size;
	uint32_t pid, ppid;
	uint32_t hz;             /* sampling rate, samples per CPU second */
	_Atomic uint32_t flags;  /* RING_FLAG_*, set by the agent's sweeps */
	int64_t start_ns;        /* CLOCK_REALTIME at creation */
	_Atomic uint64_t head;   /* writers: bytes reserved */
	_Atomic uint64_t tail;   /* reader: bytes consumed */
	_Atomic uint64_t lost;   /* weight of samples dropped: ring full, or
	                            signals on threads without libc's thread
	                            pointer (Go without cgo) */
	_Atomic uint64_t modlog_len;
	_Atomic uint32_t modgen;
	_Atomic uint32_t done;   /* RING_EXECING from just before an exec
	                            until it fails (never after it succeeds):
	                            the process went on in another program */
	char cmdline[2048];      /* NUL-separated arguments, truncated */
	char comm[16];
	_Atomic int32_t signal;  /* sampling signal now (the agent updates it);
	                            -sig: the program took sig by a raw system
	                            call and sampling ended (no signal free) */
	char engine[28];         /* engine name, NUL-terminated */
};

#endif
