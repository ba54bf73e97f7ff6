/*
 * timers_scan.c - the registry kept in step with the threads no hook
 * reports: threads made some other way than through our pthread_create (a
 * raw clone, a runtime's own threads, threads that existed before
 * profiling started) are covered, within the budget of timers we may
 * hold (timers_budget()), with what they ran before credited on them
 * (credit_unseen()); io_uring's workers are handed to ioworkers.c; and
 * entries whose thread has exited are dropped.  Called as profiling
 * starts and by the sweeper every 100 ms, engine lock held.
 *
 * What a sweep costs.  Listing /proc/self/task makes the kernel look up
 * an entry per thread, and asking a timer whether its thread lives takes
 * that thread's runqueue lock: with 1,000 idle threads the sweeps cost 4%
 * of a CPU (bench/, "idle").  So a sweep lists the threads only when
 * something no hook reported may have changed:
 *  - the kernel's thread count (num_threads, from the /proc/self/stat the
 *    sweeper reads anyway) is not the last listing's;
 *  - a thread was made or ended through our hooks since
 *    (sweeper_thread_events());
 *  - an entry the hooks do not look after was found gone: a raw clone's
 *    exit, whose number the next thread may get at once (test-tidreuse.c);
 *  - a second has passed, or a thousand times what the last listing
 *    cost if that is longer, but never more than 10 s (threads refused for want of budget are tried
 *    again; a raw clone that exits while another is made between two
 *    sweeps is found).  The listing itself costs about 3 us per thread
 *    (3 ms with 1,000 threads): without that stretch, the once-a-second
 *    listing alone kept 1,000 idle threads at 0.3% of a CPU; with it,
 *    forced listings never cost more than 0.1% of a CPU.
 * An entry made by its own thread (self_drops) is not asked at all: the
 * thread drops it as it exits.  An entry whose thread a listing did not
 * name is asked, and dropped if gone (a listing can miss a live thread
 * while others exit: proc_task_readdir() resumes by position).  Covered
 * threads are found in an index sorted once per listing, not by a search
 * of the registry per listed thread.
 */
#include "engine/sampling.h"
#include "engine/perf_engine.h"
#include "engine/registry.h"
#include "engine/switchwatch.h"
#include "base/ring.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#define RELIST_NS 1000000000LL
#define RELIST_COST_FACTOR 1000
#define RELIST_MAX_NS 10000000000LL /* the stated bound, whatever the cost */

/*
 * Whether the thread entry e samples has exited.  Asked of the entry's
 * own timer or event, not of its number: a thread no hook saw (a raw
 * clone) can exit and a new one get the same tid before this sweep, and
 * an entry kept for the number (the old test, tgkill's ESRCH) ties a
 * timer or event to the dead task while cover() takes the new thread for
 * covered: it was never sampled (issue 9).  Timers and events hold the
 * task's struct pid, not its number, so they can tell.
 *
 * A timer: timer_gettime() reads it_interval 0 once its task is gone
 * (posix_cpu_timer_get() finds no task and leaves the zeroed result; so
 * on 6.18, and in 6.1's source, Debian 12's kernel, likewise), while the
 * timer of a live thread always reads its interval, all of ours being
 * periodic.  Not "it_value reads 0": a periodic CPU timer also reads
 * disarmed from its expiry until its signal is delivered (the kernel
 * rearms it then), which lasts as long as the thread waits for a CPU or
 * blocks the signal; dropping such a timer lost samples under load.
 *
 * An event: perf_engine_task_gone() (its descriptor's owner).
 *
 * The tid's ESRCH stays as a last resort: kernels that kept a task, not
 * a pid, in the timer (before 5.7) report the interval of a dead
 * thread's timer, and those before 5.14 (5.10.151 in its stable series)
 * the owner of a dead thread's descriptor.  There a tid reused before a
 * sweep is handled only by timers_add_self(), for threads made by
 * pthread_create.  (test-tidreuse.c makes the reuse happen.)
 */
static int entry_gone(const struct entry *e)
{
	if (e->fd >= 0) {
		if (perf_engine_task_gone(e->fd))
			return 1;
	} else {
		struct itimerspec its;
		if (timer_gettime(e->timer, &its) == 0 && its.it_interval.tv_sec == 0 &&
		    its.it_interval.tv_nsec == 0)
			return 1;
	}
	return syscall(SYS_tgkill, (pid_t)getpid(), e->tid, 0) != 0 && errno == ESRCH;
}

/*
 * How many timers we may hold: RLIMIT_SIGPENDING less a reserve of a
 * quarter of it (at least 16, at most 1024) for the program's own queued
 * signals.  Read at every scan, so a limit lowered later is honoured.
 */
size_t timers_budget(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_SIGPENDING, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return SIZE_MAX;
	rlim_t reserve = rl.rlim_cur / 4;
	reserve = reserve < 16 ? 16 : reserve > 1024 ? 1024 : reserve;
	return rl.rlim_cur > reserve ? (size_t)(rl.rlim_cur - reserve) : 0;
}

/* The sweeper's own thread is not the program's and is not sampled. */
static _Atomic pid_t excluded_tid; /* atomic: set by the sweeper itself */

void timers_exclude(pid_t tid)
{
	atomic_store(&excluded_tid, tid);
}


struct slot {
	pid_t tid;
	size_t i;
};

struct scan {
	struct slot *index; /* the entries before the listing, by tid; or NULL */
	size_t nindex;
	unsigned int listed, refused;
	int at_start;       /* timers_start()'s listing */
};

unsigned long long timers_start_tick;
int timers_lapsed;

/* Now, in /proc's starttime unit (clock ticks after boot, rounded down as
 * the kernel rounds a task's start). */
static unsigned long long boot_tick(void)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0 || base_clock_read(CLOCK_BOOTTIME, &ts) != 0)
		return ~0ULL; /* unknown: no thread counts as born after */
	return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
	       (unsigned long long)ts.tv_nsec / (1000000000ULL / (unsigned long long)hz);
}

/*
 * A thread a sweep finds, made after profiling started (by a raw clone,
 * or with the sampling signal blocked, or when its hook could not cover
 * it), ran unsampled until its timer was made: that CPU time, cpu_ns, is
 * credited on it at the [unsampled] marker (ring tables only) as the
 * count of a grid of random phase over it (cpugrid.h: expected cpu_ns /
 * P).  Without it the time went to the process's exit, on its main
 * thread (cli/record/reaped.c), or nowhere for a process no parent
 * reaped.  Not for the threads of the start's listing, nor one whose
 * /proc start is before the start's tick (one the start's listing
 * refused or missed: its CPU before was the program's before profiling),
 * nor after a live thread's entry was dropped (timers_lapsed: a thread
 * found may then have been sampled before), nor ever for the main
 * thread: covered at the start, it is found again only after its own
 * exit (a main thread that ended by the exit system call, as a program
 * under strict seccomp must, is listed while the process lives), and was
 * credited its whole CPU time a second time (cli_record_122, one run in
 * two).  A thread born in the start's own tick before the start and
 * missed by its listing would be credited its few milliseconds: accepted.
 */
static int born_after_start(const struct scan *sc, pid_t tid)
{
	return !sc->at_start && !timers_lapsed && !ending_overflowed() && tid != getpid() &&
	       engine_thread_start(tid) >= timers_start_tick;
}

void timers_credit_ns(pid_t tid, uintptr_t marker, int64_t ns)
{
	if (ns <= 0 || !timers_hz())
		return;
	int64_t per = cpugrid_period(timers_hz());
	struct cpugrid g = {0, per, 0};
	cpugrid_restart(&g, 0, per, cpugrid_phase(per));
	uint64_t w = cpugrid_passed(&g, ns);
	if (w)
		sample_credit_startup(tid, marker, (unsigned long)w);
}

static void credit_unseen(const struct scan *sc, pid_t tid, int64_t cpu_ns)
{
	if (cpu_ns > 0 && born_after_start(sc, tid))
		timers_credit_ns(tid, (uintptr_t)RING_PC_UNSAMPLED, cpu_ns);
}

static int by_tid(const void *a, const void *b)
{
	pid_t x = ((const struct slot *)a)->tid, y = ((const struct slot *)b)->tid;
	return (x > y) - (x < y);
}

static int covered(const struct scan *sc, pid_t tid)
{
	if (!sc->index)
		return timers_find(tid);
	struct slot key = {tid, 0};
	const struct slot *s = bsearch(&key, sc->index, sc->nindex, sizeof key, by_tid);
	return s ? (int)s->i : -1;
}

/* Cover tid unless it is covered or excluded; a thread that exited between
 * the listing and timer_create (EINVAL) is not an error, nor one refused
 * for want of signal-queue room (EAGAIN: counted). */
static int cover(pid_t tid, void *arg)
{
	struct scan *sc = arg;
	sc->listed++;
	if (tid == atomic_load(&excluded_tid))
		return 0;
	int i = covered(sc, tid);
	if (i >= 0) {
		timers_reg[i].seen = 1;
		return 0;
	}
	if (ioworkers_known(tid))
		return 0;
	if (ending_listed(tid))
		return 0;
	int64_t cpu_ns = -1; /* read first: what the timer sees is not owed */
	if (cpugrid_clock_of(tid, &cpu_ns) != 0)
		return 0; /* gone */
	if (ioworker_is(tid)) { /* no timer; no memory to list it: not credited */
		(void)ioworkers_note(tid, born_after_start(sc, tid) ? 0 : cpu_ns);
		return 0;
	}
	if (timers_add(tid, 0) == 0) {
		credit_unseen(sc, tid, cpu_ns);
		return 0;
	}
	if (errno == EINVAL || errno == ESRCH)
		return 0;
	if (errno == EAGAIN) {
		sc->refused++;
		return 0;
	}
	return -1;
}

/* What the last listing saw (engine lock). */
static unsigned int listed_count;
static unsigned long listed_events;
static int64_t listed_ns;
static int64_t relist_after_ns = RELIST_NS;

static int64_t mono_ns(void)
{
	return base_clock_ns(CLOCK_MONOTONIC_COARSE); /* not the vDSO: base/fmt.c */
}

/* The next forced listing waits a second, or a thousand times the CPU
 * this one cost (the sweeper's thread time: the kernel's work for it). */
static void price_listing(int64_t cpu_before)
{
	int64_t cost = base_clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_before;
	relist_after_ns = RELIST_NS;
	if (cost > RELIST_MAX_NS / RELIST_COST_FACTOR)
		relist_after_ns = RELIST_MAX_NS;
	else if (cost > RELIST_NS / RELIST_COST_FACTOR)
		relist_after_ns = cost * RELIST_COST_FACTOR;
}

/* Covers every thread not covered yet; recounts the refused ones; drops
 * the entries of threads it did not list that have gone. */
int timers_cover_all(int at_start)
{
	struct scan sc = {NULL, timers_nreg, 0, 0, at_start};
	if (at_start) {
		timers_start_tick = boot_tick();
		timers_lapsed = 0;
		ending_forget();
	}
	listed_events = sweeper_thread_events(); /* before: later ones relist */
	listed_ns = mono_ns();
	int64_t cpu_before = base_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	sc.index = mem_alloc((timers_nreg ? timers_nreg : 1) * sizeof *sc.index);
	for (size_t i = 0; i < timers_nreg; i++) {
		timers_reg[i].seen = 0;
		if (sc.index)
			sc.index[i] = (struct slot){timers_reg[i].tid, i};
	}
	if (sc.index)
		sort_inplace(sc.index, sc.nindex, sizeof *sc.index, by_tid);
	timers_max = timers_budget();
	ioworkers_unsee();
	/* A start whose reading of /proc/self/status (moments ago, under
	 * perf_probe_status_hold()) found this the process's only thread:
	 * none other can have come since, as none but this one runs, and it
	 * runs the start.  The listing would find this thread alone, and
	 * its directory's first open is 30-60 us of every process's start
	 * on a VM. */
	int rc = at_start && perf_probe_alone() ? cover(timers_my_tid(), &sc)
	                                        : tasklist_each(cover, &sc);
	mem_free(sc.index);
	timers_refused = sc.refused;
	listed_count = rc == 0 ? sc.listed : 0;
	if (rc == 0)
		ending_after_listing();
	if (rc == 0)
		for (size_t i = timers_nreg; i-- > 0;)
			if (!timers_reg[i].seen && entry_gone(&timers_reg[i]))
				timers_drop(i);
	price_listing(cpu_before);
	return rc;
}

static int relist_due(unsigned int nthreads)
{
	return nthreads == 0 || nthreads != listed_count || ending_any() ||
	       sweeper_thread_events() != listed_events || mono_ns() - listed_ns >= relist_after_ns;
}

/* Whether entry e's thread has exited.  The main thread's is answered by
 * the state the sweeper read from its stat (leader_ended): its number
 * cannot go to another thread while the process lives, so the stat is as
 * sure as entry_gone(), which costs five system calls a sweep. */
static int rescan_gone(const struct entry *e, pid_t leader, int leader_ended)
{
	if (leader > 0 && e->tid == leader)
		return leader_ended;
	return entry_gone(e);
}

int timers_rescan(unsigned int nthreads, int leader_ended)
{
	if (!timers_signal())
		return 0;
	/* the kernel lowers its sample-rate cap at run time */
	int demote = perf_engine_on() && !perf_engine_keep(timers_hz());
	int gone = 0;
	pid_t leader = leader_ended >= 0 ? getpid() : 0;
	for (size_t i = timers_nreg; i-- > 0;) {
		if (!timers_reg[i].self_drops &&
		    rescan_gone(&timers_reg[i], leader, leader_ended)) {
			timers_drop(i);
			gone = 1;
		} else if (demote && timers_reg[i].fd >= 0) {
			timers_to_timer(i);
		}
	}
	timers_check_backlog();
	timers_check_switches();
	int listed = gone || relist_due(nthreads);
	int rc = listed ? timers_cover_all(0) : 0;
	ioworkers_settle(listed && rc == 0);
	return rc;
}
