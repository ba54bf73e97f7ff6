/*
 * lazy_helper.c - the profil agent's helper thread, made when a process
 * has lived long enough to need it, not when it starts.
 *
 * The helper (sweeper.c) first sweeps SWEEP_MS after it is made; a
 * process that ends or execs sooner had no use for it.  Most processes of
 * a build are such: a forked child that execs at once (a shell running a
 * command, make running a shell), /bin/true, sed, the compiler driver.
 * Making the thread and ending it cost them more than the rest of the
 * agent's start on a virtual machine (the thread's creation, an exec or
 * exit that must first kill it, and an address space torn down by a
 * thread on another CPU: 1.1 ms of a profiled /bin/true's 3 ms on a PVM
 * guest, 1.9 ms of a forked child that execs).  So, in the agent only
 * (helper_lazy), a start or a fork defers the helper (sweeper_begin()),
 * and it is made at the first safe point:
 *
 *   - a call that is itself not async-signal-safe, made by the program:
 *     pthread_create() (threads.c), dlclose() (agent/modpoll.c) and
 *     dlopen() (agent/dlopen.c: the helper polls for a load the agent
 *     cannot follow at once, and a sample in a new library's
 *     constructors wakes it to), which make the helper first, at any
 *     time (lazy_helper_now());
 *   - once the main thread has used LAZY_HELPER_CPU_NS of CPU time (or
 *     sooner, when a thread waits to move off its perf event because it
 *     blocks and wakes often: switchwatch.h), a sample
 *     whose interrupted stack proves the thread is in the program's own
 *     code (lazy_helper_sample(), from dispatch() after the sample is
 *     recorded).  In a forked child the agent samples into a scratch ring
 *     until the helper makes its ring file (agent/defer.c), after
 *     LAZY_HELPER_SOON_NS (lazy_helper_soon), so that a few samples, not
 *     50 ms of them, are what a kill could take from it.
 *
 * The proof.  pthread_create() from a signal handler is unsafe only
 * because the interrupted code may be inside the C library or the loader
 * holding what it needs (malloc's arena, the loader's and the stack
 * cache's locks) or in the middle of changing it, or inside this library
 * holding its own locks.  A sample proves none of that is so when its
 * stack, walked whole by the CFI unwinder, is the main thread's from
 * _start: the outermost frame in the executable (_start), one or two C
 * library frames above it (__libc_start_main and the call of main), and
 * every frame above those in a module of the unwind table that is not
 * the C library, the loader, the vDSO or this library.  The thread's
 * signal handlers would show as the C library's __restore_rt frame, and
 * a callback from the C library (qsort, dl_iterate_phdr, an atexit
 * handler) as the C library frame that called it.  Further conditions,
 * checked when the helper is deferred (not in signal context): malloc,
 * calloc, realloc and free are the C library's (a program's own
 * allocator, or a sanitizer's, may be what the interrupted frame is in:
 * there the helper is made at once, as before); the unwind tables are on.
 * In the handler: the thread is the process's main thread (gettid() ==
 * the pid noted at the deferral: not a vfork child, which shares our
 * memory), and no seccomp filter is being installed (lazy_helper_block()).
 *
 * What a process without its helper lacks, until it is made: threads made
 * by a raw clone() are not found (a program's pthread_create makes the
 * helper first), modules dlopen()ed are logged at exit or dlclose()
 * rather than within SWEEP_MS, a debugger attaching or a recording ended
 * is noticed later.  A process that never passes a safe point (its main
 * thread asleep, or always inside a C library callback) keeps it so.
 *
 * Signal context: lazy_helper_sample() runs in the sampling signal's
 * handler, after the sample, while lazy_pending is set.  It makes system
 * calls (gettid, the thread's CPU clock) and, once the proof holds,
 * calls sweeper_start(), which is pthread_create(): safe there by the
 * proof above, and only there.  State read by it: lazy_pending, owner
 * and due_ns (atomic; written outside signal context by the deferral,
 * before lazy_pending is set), the range tables (IMMUTABLE once
 * ranges_ready is set: written once per process image, inherited by
 * forks).
 */
#include "engine/engine_int.h"
#include "engine/sampling.h"
#include "engine/perf_trap.h"
#include "engine/switchwatch.h"
#include "unwind/unwind.h"

#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/syscall.h>

/* Frames walked for the proof: a deeper stack is not proved (yet). */
#define LAZY_FRAMES 128
/* The handler must run on the interrupted thread's own stack, within
 * this distance below its stack pointer, or on its alternate signal
 * stack with LAZY_ALT_ROOM left: on one of a few KiB (SIGSTKSZ is 8),
 * pthread_create() could overflow it.  The proof's walk and the making
 * wrote 5.1 KiB below the kernel's frame (test/rec/rec-lazy.c altstack);
 * three times that. */
#define LAZY_SAME_STACK ((uintptr_t)1 << 20)
#define LAZY_ALT_ROOM ((size_t)16 << 10)
#define RANGES_MAX 16

_Atomic int helper_lazy;

struct range {
	uintptr_t lo, hi;
};
enum kind { K_EXE, K_LIBC, K_BANNED, K_KINDS };
static struct range ranges[K_KINDS][RANGES_MAX]; /* IMMUTABLE once ready */
static int nranges[K_KINDS];
static atomic_int ranges_ready; /* 1: usable, -1: cannot prove here */

static atomic_int lazy_pending;
static _Atomic pid_t owner;
static _Atomic long long due_ns;
static atomic_int blocked, under_way;

static int in_kind(enum kind k, uintptr_t pc)
{
	for (int i = 0; i < nranges[k]; i++)
		if (pc >= ranges[k][i].lo && pc < ranges[k][i].hi)
			return 1;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/*
 * The C library's system call wrappers, which hold nothing pthread_create()
 * needs: a sample whose interrupted pc is in one of them (called from the
 * program's own code) proves the rest as well as one in that code.  A
 * program that spends its time in system calls (`head` and `wc` in a
 * pipeline) is seldom sampled anywhere else, and its helper, which moves
 * a thread that blocks and wakes often off its perf event
 * (switchwatch.h), was never made.  No wrapper of the stdio or pthread
 * kind: those hold locks.  IMMUTABLE once ranges_ready is set.
 */
static const char *const wrapper_names[] = {
	"read", "write", "readv", "writev", "pread64", "pwrite64", "recv", "recvfrom",
	"recvmsg", "send", "sendto", "sendmsg", "poll", "ppoll", "select", "pselect",
	"epoll_wait", "epoll_pwait", "nanosleep", "clock_nanosleep", "accept", "accept4",
	"connect", "wait4", "waitpid"};
#define WRAPPERS_MAX (sizeof wrapper_names / sizeof *wrapper_names)
static struct range wrappers[WRAPPERS_MAX];
static int nwrappers;

static void note_wrappers(const struct dl_phdr_info *libc);

static int note_object(struct dl_phdr_info *info, size_t size, void *self)
{
	(void)size;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *base = base_name(name);
	enum kind k = K_KINDS;
	if (!*name)
		k = K_EXE;
	else if (strncmp(base, "libc.so", 7) == 0)
		k = K_LIBC;
	else if (strncmp(base, "ld-linux", 8) == 0 || strncmp(name, "linux-vdso", 10) == 0 ||
	         strncmp(base, "libpthread.so", 13) == 0)
		k = K_BANNED;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		enum kind at = (uintptr_t)self >= lo && (uintptr_t)self < hi ? K_BANNED : k;
		if (at == K_KINDS || nranges[at] == RANGES_MAX)
			continue;
		ranges[at][nranges[at]++] = (struct range){lo, hi};
	}
	if (k == K_LIBC && nwrappers == 0)
		note_wrappers(info);
	return 0;
}

/* Each wrapper as the C library defines it (its address and size), from
 * libc's own dynamic symbol table (base/dynsym.c): dladdr1() for the
 * sizes walked all of libc's symbols once a name, 0.3 ms of every process
 * image's start.  The C library's definition even where another library
 * interposes the name first: a pc inside libc's wrapper is in code that
 * holds nothing, whoever called it, and the frames above it are checked
 * one by one (program_code()).  Not by dlopen("libc.so.6", RTLD_NOLOAD)
 * and dlsym: a dlopen runs the initializers of what it opens that are not
 * yet initialized, with the program's arguments as the C library keeps
 * them, and this runs in the agent's constructor, before the C library's
 * own (the agent is INITFIRST): glibc ran libc's with argc 0 and argv
 * NULL, every library dlopen()ed later got those in its constructors (a
 * Go library built -buildmode=c-shared crashed reading its argv), and
 * program_invocation_name was "".  A C library without a GNU hash table
 * names no wrapper: its helper waits for a sample in the program's code. */
static void note_wrappers(const struct dl_phdr_info *libc)
{
	for (size_t i = 0; i < WRAPPERS_MAX; i++) {
		uintptr_t at;
		size_t size = dynsym_function(libc, wrapper_names[i], &at);
		if (size && in_kind(K_LIBC, at))
			wrappers[nwrappers++] = (struct range){at, at + size};
	}
}

static int in_wrapper(uintptr_t pc)
{
	for (int i = 0; i < nwrappers; i++)
		if (pc >= wrappers[i].lo && pc < wrappers[i].hi)
			return 1;
	return 0;
}

/* Whether the allocator pthread_create() uses is the C library's. */
static int libc_allocator(void)
{
	static const char *const names[] = {"malloc", "calloc", "realloc", "free"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		void *f = dlsym(RTLD_DEFAULT, names[i]);
		if (!f || !in_kind(K_LIBC, (uintptr_t)f))
			return 0;
	}
	return 1;
}

/* Once per process image (a fork keeps them: the same mappings). */
static int ranges_usable(void)
{
	int r = atomic_load(&ranges_ready);
	if (r)
		return r > 0;
	dl_iterate_phdr(note_object, (void *)&lazy_helper_sample);
	r = nranges[K_EXE] && nranges[K_LIBC] && libc_allocator() ? 1 : -1;
	atomic_store(&ranges_ready, r);
	return r > 0;
}

static int defer(int soon)
{
	if (atomic_load(&blocked) || !atomic_load(&unwind_published) || !ranges_usable())
		return -1;
	threads_real_create(); /* resolved now, not in the handler */
	long long now = perf_trap_thread_ns(); /* -1 where not inline: no deferral */
	if (now < 0)
		return -1;
	atomic_store(&owner, getpid());
	atomic_store(&due_ns, now + (soon ? LAZY_HELPER_SOON_NS : LAZY_HELPER_CPU_NS));
	atomic_store(&lazy_pending, 1);
	return 0;
}

_Atomic int lazy_helper_soon;

int sweeper_begin(void)
{
	int soon = atomic_exchange(&lazy_helper_soon, 0);
	if (atomic_load(&helper_lazy) && defer(soon) == 0)
		return 0;
	return sweeper_start();
}

void lazy_helper_clear(void)
{
	atomic_store(&lazy_pending, 0);
}

void lazy_helper_now(void)
{
	if (atomic_exchange(&lazy_pending, 0))
		sweeper_start();
}

/* Dekker with make(): either it sees blocked, or this sees it under way.
 * A deferred helper is made here, outside signal context, as it was at
 * every start before. */
void lazy_helper_block(void)
{
	int was = atomic_exchange(&lazy_pending, 0);
	atomic_store(&blocked, 1);
	while (atomic_load(&under_way) > 0)
		sched_yield();
	if (was)
		sweeper_start();
}

static void make(void)
{
	atomic_fetch_add(&under_way, 1);
	if (!atomic_load(&blocked) && atomic_exchange(&lazy_pending, 0))
		sweeper_start();
	atomic_fetch_sub(&under_way, 1);
}

/* Whether a whole walk (pcs[0] the interrupted pc, then return addresses,
 * each + 1 but the first: unwind.c) is the main thread's, in the
 * program's own code (the proof above). */
static int program_code(const uint64_t *pcs, uint32_t n)
{
	if (n < 3 || !in_kind(K_EXE, pcs[n - 1] - 1))
		return 0;
	uint32_t i = n - 1, libc = 0;
	while (i > 0 && in_kind(K_LIBC, pcs[i - 1] - (i - 1 ? 1 : 0)))
		i--, libc++;
	if (libc == 0 || libc > 2 || i == 0)
		return 0;
	for (uint32_t k = 0; k < i; k++) {
		uintptr_t pc = pcs[k] - (k ? 1 : 0);
		if (k == 0 && i > 1 && in_wrapper(pc))
			continue; /* a system call of the program's own */
		if (in_kind(K_LIBC, pc) || in_kind(K_BANNED, pc))
			return 0;
	}
	return 1;
}

static int stack_enough(const void *ucontext)
{
#if !defined(__x86_64__)
	(void)ucontext;
	return 0; /* and no walk there either (sample_walk_whole()) */
#else
	const ucontext_t *uc = ucontext;
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	if (here < sp && sp - here < LAZY_SAME_STACK)
		return 1;
	size_t room = signal_alt_room(ucontext);
	return room != SIZE_MAX && room >= LAZY_ALT_ROOM;
#endif
}

void lazy_helper_sample(const void *uc)
{
	static __thread unsigned int calls __attribute__((tls_model("initial-exec")));
	if ((++calls & 3) != 0) /* a try every fourth sample of a thread */
		return;
	if (!uc || !stack_enough(uc))
		return;
	if ((pid_t)syscall(SYS_gettid) != atomic_load(&owner))
		return;
	long long now = perf_trap_thread_ns();
	if (now < 0 || (now < atomic_load(&due_ns) && !switch_wish_waiting()))
		return;
	uint64_t pcs[LAZY_FRAMES];
	uint32_t n = sample_walk_whole(uc, pcs, LAZY_FRAMES);
	if (n && program_code(pcs, n))
		make();
}

int lazy_helper_pending(void)
{
	return atomic_load_explicit(&lazy_pending, memory_order_relaxed);
}
