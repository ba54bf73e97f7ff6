/*
 * backlog.c - events whose thread holds their signal back.
 *
 * Why: with a real-time signal (the agent's choice, and the library's
 * when the program owns SIGPROF) every overflow of a perf event queues a
 * signal of its own; nothing coalesces them as a timer's one pending
 * expiry or a standard signal would.  A thread that blocks the signal
 * behind our wrappers' back (a raw rt_sigprocmask, as runtimes make)
 * piles up one queued signal per period, charged to the user's
 * RLIMIT_SIGPENDING, shared by all of the user's processes.  At the limit
 * the kernel's send_sigio_to_task() falls back to a plain SIGIO, whose
 * default action ends the program: a thread blocking everything while it
 * spun, recorded at 4 kHz with `ulimit -i 2000`, was killed by SIGIO in
 * half a second (test engine_perf_blocked_thread_moves_to_timer).
 *
 * So each sweep reads the user's queued-signal count (SigQ of
 * /proc/self/status, one file); when it is high for the threads we have
 * on events, each such thread's blocked mask is read (its own status
 * file) and a thread that blocks our signal moves to a timer, whose
 * expiries wait as one pending signal and its overrun count.  What the
 * event queued stays queued until the thread unblocks; the handler
 * ignores it (the descriptor is closed: perf_sig_tid()).  Timers need no
 * such check, nor does a standard signal, which the kernel queues once.
 *
 * Engine lock held; the sweeper's thread; never in signal context.
 */
#include "engine/engine_int.h"
#include "engine/perf_engine.h"
#include "engine/registry.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A thread on an event keeps at most a few of our signals queued while it
 * takes them; a backlog beyond this many, or beyond a quarter of the
 * limit, is looked for. */
#define BACKLOG_BASE 256
#define BACKLOG_PER_THREAD 4

/* A status file read whole into buf (no stdio: its FILE is malloc'd, and
 * this is the helper thread, alloc.c); its length, or -1. */
static ssize_t read_status(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = helper_file_read(fd, buf, size);
	close(fd);
	return n;
}

/* The user's queued signals and their limit (SigQ: "n/limit"); 0 if
 * unreadable. */
static int user_sigq(long *queued, long *limit)
{
	char buf[16384]; /* a long Groups: line comes first */
	const char *at;
	char *end;
	if (helper_read_status(buf, sizeof buf) < 0 || !(at = status_field(buf, "\nSigQ:")))
		return 0;
	*queued = base_strtoll(at, &end, 10);
	if (end == at || *end != '/')
		return 0;
	*limit = base_strtoll(end + 1, NULL, 10);
	return 1;
}

/* Thread tid's blocked mask (SigBlk of its status file; bit 0 is signal
 * 1), tid as /proc names it (a listing's); 0 if it has gone or the file
 * cannot be read (a thread that exited meanwhile blocks nothing).
 * signals.c reads it too. */
unsigned long long engine_blocked_mask(pid_t tid)
{
	char path[64], buf[16384];
	const char *at;
	base_fmt(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
	if (read_status(path, buf, sizeof buf) < 0 || !(at = status_field(buf, "\nSigBlk:")))
		return 0;
	return base_strtoull(at, NULL, 16);
}

/* The same for a thread of the registry, known by its gettid(): 0 where
 * /proc has no number for it (another PID namespace's: tasklist.c). */
static unsigned long long registry_blocked(pid_t tid)
{
	pid_t named = proc_task_number(tid);
	return named > 0 ? engine_blocked_mask(named) : 0;
}

static int backlog_suspected(size_t on_events)
{
	long queued, limit;
	if (!user_sigq(&queued, &limit))
		return 0;
	return queued > BACKLOG_BASE + BACKLOG_PER_THREAD * (long)on_events ||
	       queued * 4 > limit;
}

void timers_check_backlog(void)
{
	int sig = timers_signal();
	if (!perf_engine_on() || sig < SIGRTMIN)
		return;
	size_t on_events = 0;
	for (size_t i = 0; i < timers_nreg; i++)
		on_events += timers_reg[i].fd >= 0;
	if (on_events == 0 || !backlog_suspected(on_events))
		return;
	for (size_t i = 0; i < timers_nreg; i++)
		if (timers_reg[i].fd >= 0 && (registry_blocked(timers_reg[i].tid) >> (sig - 1) & 1))
			timers_to_timer(i);
}
