/*
 * perf_probe.c - what the system allows the perf engine, and the events
 * themselves as the kernel makes them (perf_engine.c chooses and keeps
 * them).  Engine lock held for all of these; never in signal context.
 *
 * Probe, never assume: perf_event_paranoid, seccomp filters (EPERM or
 * ENOSYS), containers and kernels without the event all make the probe
 * at start fail, and the run uses timers for every thread (auto does not
 * even probe under a seccomp filter: see engine_seccomp_filtered()); a
 * thread whose event cannot be made later (no descriptor to spare, an exotic failure)
 * gets a timer instead.  The reason is kept for profil_get_stats().
 *
 * The tick is read as
 * the resolution of CLOCK_MONOTONIC_COARSE, which is one jiffy (TICK_NSEC)
 * on every Linux since 2.6.32, unprivileged and without a measurement;
 * sysconf(_SC_CLK_TCK) is USER_HZ (100), not the tick.
 *
 * Descriptors: one per sampled thread, O_CLOEXEC, moved at once to the
 * upper half of the numbers we may use (F_DUPFD_CLOEXEC from half the
 * ceiling below): the kernel hands out the lowest free number, so the
 * program's next open() gets the number it would get without us (a
 * program that closes its standard streams and reopens them expects
 * 0-2; CPython's test_pass_fds found ours at 3 in its children).  Only
 * while RLIMIT_NOFILE leaves a reserve of a quarter of it (16 to 1024)
 * free above the descriptor: beyond that, threads get timers (with the
 * usual soft limit of 1024: descriptors 384-767, so 384 threads on
 * events).  The low number perf_event_open() returned is held only
 * between that call and the move.  (Each descriptor is one the program
 * can see and close: why the events are not the default, perf_engine.c.)
 */
#include "engine/perf_engine.h"
#include "engine/perf_trap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/resource.h>
#include <sys/syscall.h>

unsigned int perf_engine_tick_hz(void)
{
	static _Atomic unsigned int tick;
	unsigned int t = atomic_load(&tick);
	if (!t) {
		struct timespec res;
		t = 250; /* a common CONFIG_HZ, if the clock will not say */
		/* by a system call: the vDSO's answer reads its data pages, two
		 * page faults of a process that reads no clock (base/fmt.c) */
		if (syscall(SYS_clock_getres, CLOCK_MONOTONIC_COARSE, &res) == 0 && res.tv_sec == 0 &&
		    res.tv_nsec > 0)
			t = (unsigned int)((1000000000L + res.tv_nsec / 2) / res.tv_nsec);
		atomic_store(&tick, t);
	}
	return t;
}

/*
 * One process start asks three times (the agent whether it is traced,
 * the engine's choice of delivery, the helper thread's descriptor table),
 * and each reading cost 10-15 us of every process of a build (the kernel
 * formats the whole file).  While the calling thread holds a start
 * (perf_probe_status_hold()), the first answer serves the others: that
 * is as if the three had asked at the same instant, and a tracer that
 * attaches later is the helper's to find, at its sweeps, as it always
 * was.  The sample-rate cap, asked twice (the choice, then the keep),
 * is held the same way.  Thread-local: only the starting thread's own
 * questions are answered from it.
 */
#define IE __attribute__((tls_model("initial-exec"))) /* no __tls_get_addr */
static __thread int status_held IE, status_kept IE, rate_kept IE;
static __thread unsigned int kept_rate IE;
static __thread int kept_seccomp IE;
static __thread long kept_tracer IE, kept_threads IE;

void perf_probe_status_hold(int on)
{
	status_held = on;
	status_kept = 0;
	rate_kept = 0;
}

/* The kernel's cap on samples per CPU second (it throttles above it);
 * the kernel may lower it at run time, so it is read at every start, rate
 * change and sweep. */
#define MAX_RATE_PATH "/proc/sys/kernel/perf_event_max_sample_rate"

unsigned int perf_probe_max_rate(void)
{
	if (status_held && rate_kept)
		return kept_rate;
	unsigned int v = 0;
	char buf[32];
	/* kept open by the helper (each sweep), else opened and closed; not
	 * stdio: every process start reads it */
	int kept = helper_file(HELPER_MAX_RATE, MAX_RATE_PATH, O_RDONLY);
	int fd = kept >= 0 ? kept : open(MAX_RATE_PATH, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && helper_file_read(fd, buf, sizeof buf) > 0)
		v = (unsigned int)base_strtoull(buf, NULL, 10);
	if (fd >= 0 && kept < 0)
		close(fd);
	v = v ? v : 100000; /* the kernel's default */
	if (status_held)
		kept_rate = v, rate_kept = 1;
	return v;
}

/* The number after "\nName:" in buf, or -1. */
static long status_number(const char *buf, const char *name)
{
	const char *at = status_field(buf, name);
	return at && *at >= '0' && *at <= '9' ? base_strtoll(at, NULL, 10) : -1;
}


/* Read whole and searched, not stdio's line-by-line sscanf: this runs in
 * every process and forked child at start.  16 KiB: a long Groups: line
 * comes before the fields. */
#define STATUS_BYTES 16384

static void status_read(char *buf, int *seccomp, long *tracer, long *threads)
{
	/* kept open by the helper (each sweep), else opened and closed */
	if (helper_read_status(buf, STATUS_BYTES) < 0)
		return;
	*seccomp = status_number(buf, "\nSeccomp:") == 2;
	*tracer = status_number(buf, "\nTracerPid:");
	*threads = status_number(buf, "\nThreads:");
}

/* Its own frame: the buffer's far end is four pages down the stack, a
 * fresh page at a process's start (the kernel writes the text there). */
__attribute__((noinline)) static void status_read_on_stack(int *seccomp, long *tracer,
                                                           long *threads)
{
	char buf[STATUS_BYTES];
	status_read(buf, seccomp, tracer, threads);
}

/* What /proc/self/status says about us: whether a seccomp filter is in
 * force ("Seccomp: 2") and which process traces us ("TracerPid", 0 for
 * none; -1 when it cannot be read); a held start also keeps its thread
 * count ("Threads"), for perf_probe_alone().  The agent asks it at load
 * too (agent/traced.c).  Read into the free space of the strings kept
 * from the start (base_keep_try_open(): a page a start has written
 * anyway), else onto the stack. */
void perf_probe_status(int *seccomp, long *tracer)
{
	if (status_held && status_kept) {
		*seccomp = kept_seccomp;
		*tracer = kept_tracer;
		return;
	}
	*seccomp = 0;
	*tracer = -1;
	long threads = -1;
	size_t room;
	char *free_space = base_keep_try_open(&room);
	if (free_space && room >= STATUS_BYTES) {
		status_read(free_space, seccomp, tracer, &threads);
		base_keep_close(0);
	} else {
		if (free_space)
			base_keep_close(0);
		status_read_on_stack(seccomp, tracer, &threads);
	}
	if (status_held) {
		kept_seccomp = *seccomp, kept_tracer = *tracer, kept_threads = threads;
		status_kept = 1;
	}
}

int perf_probe_alone(void)
{
	return status_held && status_kept && kept_threads == 1;
}

/*
 * Whether a seccomp filter is in force.  A filter may answer
 * perf_event_open with SECCOMP_RET_KILL or _TRAP rather than an error
 * (browsers' sandboxes do), and a guest in the process must not risk
 * that: auto then keeps the timers without trying.
 */
int engine_seccomp_filtered(void)
{
	int seccomp;
	long tracer;
	perf_probe_status(&seccomp, &tracer);
	return seccomp;
}

/* Highest descriptor number we may hold, exclusive. */
static int fd_ceiling(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= PERF_FD_MAX + 1024)
		return PERF_FD_MAX;
	rlim_t reserve = rl.rlim_cur / 4;
	reserve = reserve < 16 ? 16 : reserve > 1024 ? 1024 : reserve;
	return rl.rlim_cur > reserve ? (int)(rl.rlim_cur - reserve) : 0;
}

/* A disabled task-clock event on tid (0: the caller), close-on-exec;
 * with sigtrap, its sig_data is its own descriptor number, reserved
 * before the event exists (perf_trap_reserve()). */
int perf_probe_event(pid_t tid, int64_t per, int excl_kernel, int trap, long sig_data)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = (uint64_t)per;
	a.disabled = 1;
	a.exclude_kernel = (unsigned)excl_kernel;
	a.exclude_hv = 1;
	if (trap) {
		a.sigtrap = 1;
		a.remove_on_exec = 1; /* the kernel requires it with sigtrap */
		a.sig_data = (uint64_t)sig_data;
	}
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	int ceiling = fd_ceiling(), low = ceiling / 2 > 3 ? ceiling / 2 : 3;
	/* A sigtrap event's descriptor is mapped and closed at once
	 * (perf_mapped.c): any number will do, but not one from the
	 * program's reserve below, which a concurrent open() of its own may
	 * need this very moment (then the thread gets a timer). */
	if (fd >= 0 && fd < low && !trap) { /* leave the low numbers to the program */
		int high = fcntl(fd, F_DUPFD_CLOEXEC, low);
		int e = errno;
		close(fd);
		errno = e;
		fd = high;
	}
	if (fd >= 0 && fd >= ceiling) {
		close(fd);
		errno = EMFILE; /* the program's reserve, not ours to take */
		return -1;
	}
	return fd;
}

/*
 * The owner of the descriptor (F_SETOWN_EX, F_OWNER_TID) is a reference
 * to the thread's struct pid, which a new thread with the same number
 * does not share, and F_GETOWN_EX reads pid 0 once that thread is gone
 * (fs/fcntl.c f_getown_ex(), "fcntl: make F_GETOWN(EX) return 0 on dead
 * owner task", 5.14, and 5.10.151 in its stable series; checked on 6.18).
 * Not poll(): POLLHUP does mean "the task exited" (perf_poll(),
 * is_event_hup()), but an event without a ring buffer, as ours are,
 * polls POLLHUP all its life (perf_poll() starts from EPOLLHUP and only a
 * buffer replaces it): checked on 6.18 with a live thread's event.
 */
int perf_engine_task_gone(int fd)
{
	if (perf_engine_trap())
		return perf_mapped_task_gone(fd);
	struct f_owner_ex own;
	return fcntl(fd, F_GETOWN_EX, &own) == 0 && own.type == F_OWNER_TID && own.pid == 0;
}
