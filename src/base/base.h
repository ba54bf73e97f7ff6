/*
 * base.h - what every part shares: the range table every interface form
 * compiles to (ptable.c), the address-space checks (probe.c, copyin.c),
 * the process's executable mappings (maps.c), a loaded object's functions
 * by name (dynsym.c),
 * and the signal handler's in-flight window (inflight.c).  Depends on no
 * other part.  Nothing here is exported: the library is built with
 * -fvisibility=hidden and only PROFIL_API names leave it.
 *
 * The parts, lowest first (make check-layout keeps calls going down):
 *   base/     this
 *   unwind/   the stack walk and its tables (unwind.h)
 *   engine/   publishing, timers, the sampling signal and its one
 *             handler, fault recovery, the sweeper (engine.h)
 *   process/  the program's fork, exec, pthread_create, sigaction (process.h)
 *   gmon/     gmon.out output and the publish every form goes through (gmon.h)
 *   forms/    the public calls: profil, sprofil, pcsample, monitor, ... (forms.h)
 */
#ifndef PROFIL_BASE_H
#define PROFIL_BASE_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "profil.h"

struct ring_file;

#define HIDDEN __attribute__((visibility("hidden")))

/*
 * For a large static array of which a process touches little or nothing
 * (a table indexed by descriptor or thread, a path buffer, the scratch
 * ring): it goes in .lbss, which the linker places after .bss, so the
 * small variables stay together in a few pages instead of between
 * these.  Every page the agent writes is a page fault at a process's
 * start and a copy-on-write fault after each fork, in the child and the
 * parent alike; the small variables a start or a fork writes were spread
 * over about twenty pages.  GCC makes .lbss a NOBITS section as .bss is;
 * clang 14 would give it file contents (zeros), so elsewhere the arrays
 * stay in .bss.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LARGE_STATIC __attribute__((section(".lbss")))
#else
#define LARGE_STATIC
#endif

/* How a range turns a pc into a counter. */
enum prange_kind {
	PRANGE_HIST = 0, /* counter index from the bin formula */
	PRANGE_TICK = 1  /* every sample counts in counter 0 (scale 2) */
};

/*
 * One histogram: samples with lowpc <= pc < highpc count in
 *   buf[floor(floor((pc - offset) >> shift) * scale / 65536)]
 * when that index is below nbins.  shift is 1 for 16-bit forms (2 bytes of
 * text per counter at scale 0x10000) and 2 for Tru64's 32-bit counters.
 * width is the counter size in bytes: 2 or 4.  buf is aligned to width.
 */
struct prange {
	uintptr_t lowpc;
	uintptr_t highpc;
	uintptr_t offset;
	void *buf;
	size_t nbins;
	uint32_t scale;
	uint8_t shift;
	uint8_t width;
	uint8_t kind;
};

enum ptable_mode {
	PTABLE_HIST = 0,    /* ranges[] histograms */
	PTABLE_PCSAMPLE = 1, /* raw pcs into pcbuf (Solaris pcsample) */
	PTABLE_RING = 2      /* records into a shared sample ring (ring.h) */
};

/* Which public form built the table; kept for profil_write_gmon(). */
enum ptable_form {
	PFORM_CLASSIC = 0,
	PFORM_TRU64,
	PFORM_AIX,
	PFORM_SPROFIL,
	PFORM_PCSAMPLE,
	PFORM_MONITOR,
	PFORM_RING
};

/*
 * The configuration the signal handler reads.  Built by a caller, then
 * published by engine_publish(); from then on IMMUTABLE except the fields
 * marked atomic, until engine_publish() of a successor has returned, after
 * which no handler can still be reading it and it is freed.
 *
 * ranges[] is sorted by ascending lowpc and does not overlap, so the
 * handler finds a pc's range by binary search.  overflow, when set, points
 * at a counter that receives samples outside every range (sprofil's
 * overflow bin).
 */
struct ptable {
	enum ptable_mode mode;
	enum ptable_form form;
	void *overflow;      /* NULL, or a counter of overflow_width bytes */
	uint8_t overflow_width;

	uintptr_t *pcbuf;    /* PTABLE_PCSAMPLE: caller's array */
	size_t pccap;        /* its length */
	_Atomic size_t pcnext; /* atomic: next free slot (may pass pccap) */

	struct ring_file *ring; /* PTABLE_RING: control block (ring.h) */
	unsigned char *ring_data; /* its record area, ring->data_size bytes */
	uint32_t stack_depth;   /* PTABLE_RING: most frames per sample (leaf
	                           included, <= RING_MAX_DEPTH); 0 or 1: the
	                           leaf only (unwind.h) */

	size_t nranges;
	struct prange ranges[];
};

/* Largest number of ranges one table may hold (documented in profil(3)). */
#define PTABLE_MAX_RANGES (1u << 20)

/* ptable.c */
HIDDEN struct ptable *ptable_new(size_t nranges);
HIDDEN void ptable_free(struct ptable *t);
/* Sort ranges by lowpc; EINVAL if two overlap or one is empty. */
HIDDEN int ptable_sort_check(struct ptable *t);
/* Highest pc + 1 that bin arithmetic can map below nbins (for HIST). */
HIDDEN uintptr_t prange_end(const struct prange *r);

/* envget.c: the value of environment variable name in environ, as libc's
 * getenv finds it even where the program defines a getenv of its own;
 * NULL if unset.  Every setting of ours is read through it. */
HIDDEN const char *profil_getenv(const char *name);

/* probe.c: 0 if [p, p+len) is entirely mapped writable, else -1 EFAULT.
 * Reads /proc/self/maps; touches no byte of the range. */
HIDDEN int probe_writable(const void *p, size_t len);

/* copyin.c: copies up to len bytes from src (our own address space) into
 * dst and returns how many leading bytes were readable and copied.  Never
 * faults: an unmapped or unreadable byte ends the copy. */
HIDDEN size_t copyin_prefix(void *dst, const void *src, size_t len);

/*
 * probe.c: a snapshot of the mappings that have one permission ('r' or
 * 'w'), merged into ascending disjoint spans.  Loading reads
 * /proc/self/maps once, so checking n buffers costs O(n log m), not n
 * reads of the maps file.  Without /proc every range counts as covered
 * (like probe_writable(): faults are still caught at sampling time).
 */
struct probe_map {
	struct probe_span {
		uintptr_t lo, hi;
	} *spans;
	size_t n, cap;
	int everything; /* no /proc: trust the caller */
};
HIDDEN int probe_map_load(struct probe_map *m, char perm); /* -1 ENOMEM */
/* How many bytes from p on are covered (at most len). */
HIDDEN size_t probe_map_prefix(const struct probe_map *m, const void *p, size_t len);
HIDDEN void probe_map_free(struct probe_map *m);

/*
 * maps.c: the executable mappings of files in /proc/self/maps.
 * maps_list_code(): every such mapping, in address order,
 * into *l (0; -1 if the maps could not be read, *l empty), asked of the
 * kernel by PROCMAP_QUERY when may_query and the kernel has it, else
 * parsed from the text; free with maps_list_free().  may_query 0 where a
 * seccomp filter may refuse the ioctl (agent/seccomp.c).
 * maps_program_file(): the path of the file the main program (main, the
 * first object dl_iterate_phdr lists) was loaded from, into buf: that of
 * /proc/self/exe, or, where the dynamic loader was run as the program
 * (ld.so PROG), the file the program's code is mapped from; "" if unknown.
 * maps_loader_was_run(): whether that was so (no interpreter was loaded
 * by the kernel, AT_BASE 0: a static program answers yes too).
 */
struct maps_code {
	uint64_t start, end, offset; /* the mapping, its offset in the file */
	dev_t dev;
	uint64_t ino;
	const char *path;            /* as /proc/self/maps names the file */
};
struct maps_list {
	struct maps_code *code;
	size_t n;
	char *text; /* where the paths lie */
};
struct dl_phdr_info;
HIDDEN int maps_list_code(struct maps_list *l, int may_query);
HIDDEN void maps_list_free(struct maps_list *l);
/* dynsym.c: the function the loaded object defines as name, by its
 * dynamic symbol table's GNU hash: its size, and its address in *addr;
 * 0 when the object has no such table or no such function. */
struct dl_phdr_info;
HIDDEN size_t dynsym_function(const struct dl_phdr_info *info, const char *name, uintptr_t *addr);
HIDDEN void maps_program_file(const struct dl_phdr_info *main, char *buf, size_t size);
HIDDEN int maps_loader_was_run(void);

/*
 * alloc.c: the library's own allocator, for base/, unwind/, engine/,
 * process/ and the agent: never the program's malloc (why: alloc.c).
 * malloc's contract: NULL with errno ENOMEM on failure, blocks aligned to
 * 16, free and realloc of NULL allowed; a size of 0 gives a block too
 * (realloc to 0 does not free).  Never in signal context.  The atfork
 * calls are process/fork.c's: the last of its prepare steps, the first of
 * its parent and child steps.
 */
HIDDEN void *mem_alloc(size_t n);
HIDDEN void *mem_calloc(size_t n, size_t size);
HIDDEN void *mem_realloc(void *p, size_t n);
HIDDEN void mem_free(void *p);
HIDDEN char *mem_strdup(const char *s);
HIDDEN void alloc_atfork_prepare(void);
HIDDEN void alloc_atfork_parent(void);
HIDDEN void alloc_atfork_child(void);

/* sort.c: sorts n elements of size bytes in place, as qsort() does but
 * with no allocation (glibc's qsort mallocs above 1 KiB) and in
 * O(n log n) at worst.  Not stable. */
HIDDEN void sort_inplace(void *base, size_t n, size_t size,
                         int (*cmp)(const void *, const void *));

/* tasklist.c: calls fn(tid, arg) for each thread of this process, from a
 * listing of /proc/self/task read with getdents64 into a stack buffer (no
 * opendir: it mallocs).  Stops at the first fn that returns non-zero and
 * returns that value; 0 after the last thread; -1 (errno) if the
 * directory cannot be read.  One descriptor, open only during the call. */
HIDDEN int tasklist_each(int (*fn)(pid_t tid, void *arg), void *arg);
/* tasklist.c: the number /proc gives this process (getpid(), unless /proc
 * was mounted for another PID namespace), 0 without /proc; the number it
 * gives thread tid (a gettid() of ours), 0 where /proc is another
 * namespace's and tid is not the main thread (no number for it there is
 * known); and the path of file in that thread's /proc directory into
 * buf: 0, or -1 with errno ENOTSUP where it has no number.
 * Async-signal-safe. */
HIDDEN pid_t proc_self_pid(void);
HIDDEN pid_t proc_task_number(pid_t tid);
HIDDEN int proc_task_path(char *buf, size_t size, pid_t tid, const char *file);

/* inflight.c: handlers between their increment and decrement, atomic
 * (sample.c counts itself in; publishers wait for zero). */
extern _Atomic unsigned int profil_inflight HIDDEN;
/* inflight.c: waits until no handler is between its profil_inflight
 * increment and decrement. */
HIDDEN void inflight_drain(void);

/*
 * fmt.c: snprintf(), strtoull() and strtoll() (bases 10 and 16) and a
 * clock read, in the library's own code: a process touching the C
 * library's for them took page faults it would not otherwise (fmt.c says
 * which conversions base_fmt() knows).
 */
int base_fmt(char *buf, size_t size, const char *f, ...) __attribute__((format(printf, 3, 4)));
int base_vfmt(char *buf, size_t size, const char *f, va_list ap);
unsigned long long base_strtoull(const char *s, char **end, int base);
long long base_strtoll(const char *s, char **end, int base);
/* The clock by a system call, not the vDSO (whose data pages a process
 * that never reads a clock has not touched): clock_gettime()'s 0 or -1,
 * and the clock in ns, 0 if it fails. */
int base_clock_read(clockid_t clock, struct timespec *ts);
int64_t base_clock_ns(clockid_t clock);

/*
 * keep.c: strings kept from a process's start to its end, packed into one
 * array so that a start writes one page for all of them (keep.c says
 * why).  Never freed or moved.  KEEP_BYTES holds every user's longest
 * value at once (the command line 8 KiB, the PROFIL_* variables 8 KiB,
 * three paths of 4 KiB) and a reading of /proc/self/status (16 KiB) past
 * them.
 *
 * base_keep(): a copy of s, or NULL when s is not shorter than max or
 * there is no room.  base_keep_open(): the free space and its size in
 * *room, held until base_keep_close(n) keeps its first n bytes (0: none,
 * NULL returned) and lets it go; NULL (nothing held, nothing to close)
 * when another thread held it too long.  base_keep_try_open(): the same
 * without waiting.  Not async-signal-safe.
 */
#define KEEP_BYTES (48u << 10)
const char *base_keep(const char *s, size_t max);
char *base_keep_open(size_t *room);
char *base_keep_try_open(size_t *room);
const char *base_keep_close(size_t n);
void base_keep_forked_child(void); /* process/fork.c */

#endif /* PROFIL_BASE_H */
