/*
 * account.c - the CPU time of a process that its samples cannot show:
 * before sampling begins, and after the last expiry the kernel sent.
 *
 * A process's timers start in the agent's constructor, which runs before
 * any other library's (agent.c: -z initfirst).  What the process ran
 * before (exec, the dynamic loader mapping and relocating its libraries,
 * our own start) is CPU time the kernel counts and no sample ever sees;
 * likewise, at exit, the expiries of the exiting thread's grid that the
 * kernel had not sent yet (it sends them only at its tick, every 4 ms
 * here).  Both are nothing for a long program and most of a short one: a
 * shell loop of 300 /bin/true recorded 0.14 CPU s of samples for 0.80 s
 * the kernel measured (0.17).
 *
 *   Start: the thread's CPU clock just before the timers start (in a
 *   forked child, when fork.c made its timer, before the agent's hook),
 *   minus
 *   what the image before an exec already sampled (the exec hook passes
 *   its CPU time on in PROFIL_EXEC_CPU="pid:ns:children", envfix.c; another pid's
 *   value is ignored: a child spawned without our exec was not sampled
 *   before its exec), credited as weight at RING_PC_STARTUP, shown
 *   `[start-up]`; the part from the agent's constructor on is credited
 *   apart, at RING_PC_AGENT (`[profil agent start]`: reading a large
 *   program's unwind tables is ours, not the program's cost).  The weight
 *   is the expected count, gap x rate, rounded
 *   up with probability equal to its fraction so that many short
 *   processes sum to the right total.
 *
 *   Exit: the agent's destructor, which runs after the program's own (the
 *   agent was initialised first), settles the exiting thread as a
 *   pthread's exit does (threads.c): the grid points it passed but was
 *   never sent, at its last sampled pc (`[unsampled]` if none was);
 *   _exit() and _Exit() are interposed to do the same.  Not on a
 *   signal's death, nor for other threads still running.  exec.c settles
 *   an exec'ing thread the same way (the library's own rule).
 */
#include "agent.h"
#include "../src/base/base.h"
#include "../src/engine/engine.h"
#include "../src/process/process.h"
#include "../src/base/ring.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>
#include <sys/syscall.h>

int64_t account_cpu_now(void)
{
	struct timespec ts;
	if (base_clock_read(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) /* not the vDSO: fmt.c */
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What the exec hook of the image before this exec said (PROFIL_EXEC_CPU
 * "pid:ns:children", envfix.c), if that image was this process's: its
 * CPU time, which it sampled, and its process's reaped children's
 * total then.  0 and 0 otherwise. */
static void before_exec(int64_t *cpu_ns, uint64_t *children_ns)
{
	const char *v = profil_getenv("PROFIL_EXEC_CPU");
	char *end;
	*cpu_ns = 0;
	*children_ns = 0;
	if (!v)
		return;
	long pid = base_strtoll(v, &end, 10);
	if (*end != ':' || pid != (long)getpid())
		return;
	long long ns = base_strtoll(end + 1, &end, 10);
	unsigned long long kids = 0;
	if (*end == ':')
		kids = base_strtoull(end + 1, &end, 10);
	if (*end != '\0')
		return;
	*cpu_ns = ns > 0 ? (int64_t)ns : 0;
	*children_ns = kids;
}

/* A uniform draw in [0, 1e9) without shared state: a hash of the clock. */
static uint64_t draw_billion(void)
{
	uint64_t x = (uint64_t)base_clock_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 17);
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x % 1000000000ull;
}

unsigned long account_periods(uint64_t gap, unsigned int hz)
{
	/* gap < 2^63 ns and hz <= 1e6: gap / 1e9 * hz cannot overflow, and
	 * the remainder's product stays below 1e9 * 1e6 */
	uint64_t w = gap / 1000000000ull * hz;
	uint64_t rest = gap % 1000000000ull * hz;
	w += rest / 1000000000ull;
	if (draw_billion() < rest % 1000000000ull)
		w++;
	return (unsigned long)w;
}

/* Weight gap x hz at marker, rounded at random by its fraction. */
static void credit(uintptr_t marker, uint64_t gap, unsigned int hz)
{
	unsigned long w = account_periods(gap, hz);
	if (w)
		sample_credit_startup((pid_t)syscall(SYS_gettid), marker, w);
}

void account_startup(int64_t cpu_at_agent, int64_t cpu_at_start, int after_exec,
                     unsigned int hz)
{
	int64_t before = 0;
	uint64_t children_then = 0; /* a forked child's sum starts at 0 */
	if (after_exec)
		before_exec(&before, &children_then);
	/* Children reaped since the last exec an agent saw, by an image no
	 * agent entered (a static or set-uid program that ran children, then
	 * exec'd one we enter) or, for a process that began as no child of
	 * ours, before this image, were told by no hook: they are written
	 * now, as one reap (reap.c).  Without it, a static program that ran
	 * a 150 ms child, then exec'd a profiled one, was credited 1.83
	 * times the CPU the kernel counted. */
	filter_note_start();
	reaps_begin(children_then);
	reaps_settle();
	if (cpu_at_start <= before || hz == 0)
		return;
	/* the agent's own part, when known: from its constructor's entry */
	if (cpu_at_agent < before || cpu_at_agent > cpu_at_start)
		cpu_at_agent = cpu_at_start;
	if (cpu_at_agent > before)
		credit((uintptr_t)RING_PC_STARTUP, (uint64_t)(cpu_at_agent - before), hz);
	if (cpu_at_start > cpu_at_agent)
		credit((uintptr_t)RING_PC_AGENT, (uint64_t)(cpu_at_start - cpu_at_agent), hz);
}

/* The end of a process, at exit() or _exit(): the exiting thread is
 * settled, and a forked child still sampled into its scratch ring
 * (defer.c) gets a ring file for what it holds then.  One that holds
 * nothing (no sample, no reap no hook saw) leaves no file and is not
 * settled: its parent's reap of it is all of its time, which the
 * recorder credits at [unsampled], as the settling would have
 * (cli/record/reaped.c). */
static void settle_at_end(void)
{
	if (!agent_running())
		return;
	reaps_settle();
	if (defer_active() && defer_empty())
		return;
	engine_ioworkers_settle();
	threads_settle_self((uintptr_t)RING_PC_UNSAMPLED);
	agent_defer_final(1); /* nothing when not deferred */
}

/* exit(): our destructor, after the program's.  A thread no sample
 * reached is credited at the [unsampled] marker: at exit() itself it
 * would read as exit()'s own cost, which it is not. */
__attribute__((destructor)) static void account_exit(void)
{
	settle_at_end();
}

/* _exit() and _Exit(), which run no destructor (Python's os._exit, a
 * forked child's end, a shell's subshell): the same, then libc's.  Not
 * in a vfork child (its memory is ours: sigstate_mine()).  glibc's exit()
 * ends through an internal call, not these. */
typedef void exit_fn(int);
static exit_fn *real_exit, *real_Exit;

__attribute__((constructor(101))) static void account_resolve(void)
{
	real_exit = (exit_fn *)dlsym(RTLD_NEXT, "_exit");
	real_Exit = (exit_fn *)dlsym(RTLD_NEXT, "_Exit");
}

static __attribute__((noreturn)) void leave(exit_fn *real, int status)
{
	if (real && sigstate_mine())
		settle_at_end();
	if (real)
		real(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

__attribute__((visibility("default"), noreturn)) void _exit(int status)
{
	leave(real_exit, status);
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
	leave(real_Exit ? real_Exit : real_exit, status);
}

/* The exec hook's value for PROFIL_EXEC_CPU (envfix.c): "pid:ns:children",
 * our CPU time and our reaped children's total (before_exec()), once the
 * reaps no hook saw are written (not in a vfork child, whose memory and
 * ring are its parent's). */
int account_exec_value(char *buf, size_t size)
{
	/* a deferred child that sampled nothing has no file: the exec'd
	 * program's start-up is all of this process's time, its reaps too */
	int none = agent_exec_unsampled();
	if (sigstate_mine() && !none)
		reaps_settle();
	int64_t ns = none ? 0 : account_cpu_now();
	long pid = (long)syscall(SYS_getpid);
	if (ns < 0 || pid <= 0 || size < 64) /* 3 numbers of at most 20 digits */
		return -1;
	/* base_fmt(), not snprintf: a vfork child runs the exec hook on our
	 * memory, and base_fmt takes no lock and allocates nothing */
	int k = base_fmt(buf, size, "%ld:%llu", pid, (unsigned long long)ns);
	if (filter_enter()) { /* not where a sandbox filters it (seccomp.c) */
		base_fmt(buf + k, size - (size_t)k, ":%llu",
		         (unsigned long long)(none ? 0 : reaps_children_ns()));
		filter_leave();
	}
	return 0;
}
