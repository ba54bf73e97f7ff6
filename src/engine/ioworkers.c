/*
 * ioworkers.c - io_uring's worker threads are not sampled, but their CPU
 * time is counted, on them.
 *
 * A program's io_uring requests that cannot complete at once run in
 * kernel threads of its own process (io-wq's "iou-wrk-PID", SQPOLL's
 * "iou-sqp-PID"): they are listed in /proc/self/task, their CPU time is
 * the process's, and they never run user code.  They are made with every
 * signal blocked but SIGKILL and SIGSTOP, so a sample sent to one is
 * never delivered: a timer or event on one costs interrupts for nothing
 * (on perf events an hrtimer every period of its CPU), and what it ran
 * was counted at its process's exit.  So the sweep (timers_scan.c) gives
 * them no timer; it lists them here, by the kernel's PF_IO_WORKER flag in
 * their stat, and each sweep credits the CPU time each ran since the last
 * at the [io_uring worker] marker on its thread (ring tables only), in periods
 * at the current rate, rounded at random by their fraction (cpugrid.h) so
 * that the sum is unbiased, and once more at the process's exit() or
 * _exit() (engine_ioworkers_settle(), agent/account.c).  What a worker
 * runs after the last sweep before it ends on its own (io-wq ends idle
 * workers after 5 s), or after that last credit, is counted at its
 * process's exit, as before.
 *
 * Engine lock held for all of these (the sweeper, timers_start(),
 * timers_stop(), the fork child's reset, engine_ioworkers_settle()).
 */
#include "engine/registry.h"
#include "base/ring.h"

#include <stdlib.h>

#define PF_IO_WORKER_FLAG 0x10u /* include/linux/sched.h, since 5.12 */

struct worker {
	pid_t tid;
	int64_t counted_ns; /* its CPU time up to the last credit */
	unsigned char seen; /* listed by the scan under way */
};

static struct worker *workers; /* engine lock */
static size_t nworkers, capworkers;

int ioworker_is(pid_t tid)
{
	const char *f = NULL;
	char buf[512];
	if (engine_thread_stat(tid, buf, sizeof buf) == 0)
		f = engine_stat_field(buf, 9);
	return f && (base_strtoull(f, NULL, 10) & PF_IO_WORKER_FLAG) != 0;
}

static int find(pid_t tid)
{
	for (size_t i = 0; i < nworkers; i++)
		if (workers[i].tid == tid)
			return (int)i;
	return -1;
}

int ioworkers_known(pid_t tid)
{
	int i = find(tid);
	if (i >= 0)
		workers[i].seen = 1;
	return i >= 0;
}

int ioworkers_note(pid_t tid, int64_t from_ns)
{
	if (nworkers == capworkers) {
		size_t cap = capworkers ? capworkers * 2 : 8;
		struct worker *n = mem_realloc(workers, cap * sizeof *n);
		if (!n)
			return -1;
		workers = n, capworkers = cap;
	}
	workers[nworkers++] = (struct worker){tid, from_ns, 1};
	return 0;
}

void ioworkers_unsee(void)
{
	for (size_t i = 0; i < nworkers; i++)
		workers[i].seen = 0;
}

void ioworkers_settle(int listed)
{
	for (size_t i = nworkers; i-- > 0;) {
		int64_t now;
		/* gone; or its number is a new thread's that a hook covered */
		if ((listed && !workers[i].seen) || timers_find(workers[i].tid) >= 0 ||
		    cpugrid_clock_of(workers[i].tid, &now) != 0) {
			workers[i] = workers[--nworkers];
			continue;
		}
		timers_credit_ns(workers[i].tid, (uintptr_t)RING_PC_IO_WORKER,
		                 now - workers[i].counted_ns);
		workers[i].counted_ns = now;
	}
}

void ioworkers_forget(void)
{
	nworkers = 0; /* a fork's child: the parent's workers are not its own */
}

void engine_ioworkers_settle(void)
{
	if (engine_lock_bounded() != 0)
		return;
	ioworkers_settle(0);
	engine_unlock();
}
