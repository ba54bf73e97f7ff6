/*
 * perf-delivery.c - how a per-thread sampling signal is delivered, and
 * what that does to the program's system calls (issue 13).
 *
 * The perf-events engine is opt-in because its signal (O_ASYNC on the
 * event's descriptor: irq_work, then kill_fasync) is raised while the
 * thread runs in the kernel, so a blocking write to a full pipe sees a
 * pending signal and returns short.  This program measures three ways of
 * getting one signal per 1/hz of a thread's CPU time, alone, without the
 * library:
 *
 *   timer    a POSIX timer on the thread's CPU clock (the timer engine);
 *   fasync   a task-clock event with O_ASYNC/F_SETSIG/F_SETOWN_EX (the
 *            perf engine today);
 *   sigtrap  a task-clock event with attr.sigtrap (Linux 5.13+): the
 *            kernel sends SIGTRAP (si_code TRAP_PERF) to the thread.
 *
 * Two workloads per mode and rate: a spin (signals per CPU second, which
 * must be the rate) and 100 blocking 1 MiB writes to a pipe whose reader
 * takes 4 KiB every 50 us (short writes; signals against the periods the
 * event counted, i.e. how many overflows one signal stands for).  The
 * periods come from the event's count (read(2) on its descriptor, here in
 * the handler, which the library's handler may not do today) or, for the
 * timer, from si_overrun.
 *
 * Usage: perf-delivery [HZ...]   (default 1000 4000); prints a markdown
 * table.  Needs perf events (perf_event_paranoid <= 1 or root).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef TRAP_PERF
#define TRAP_PERF 6 /* <asm-generic/siginfo.h>, Linux 5.13 */
#endif

enum mode { BY_TIMER, BY_FASYNC, BY_SIGTRAP };
static const char *const mode_name[] = {"timer", "fasync", "sigtrap"};

/* Handler state: written by the handler of the one sampled thread. */
static volatile long signals, periods;
static int event_fd = -1;
static uint64_t period_ns, last_count;

static void on_sample(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if (si->si_code == SI_TIMER) {
		signals++;
		periods += 1 + (si->si_overrun > 0 ? si->si_overrun : 0);
		return;
	}
	if (si->si_code != POLL_IN && si->si_code != TRAP_PERF)
		return;
	int saved = errno;
	uint64_t count;
	signals++;
	if (read(event_fd, &count, sizeof count) == (ssize_t)sizeof count) {
		periods += (long)((count - last_count) / period_ns);
		last_count = count - (count - last_count) % period_ns;
	}
	errno = saved;
}

static int open_event(enum mode m)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = period_ns;
	a.disabled = 1;
	if (m == BY_SIGTRAP) {
		a.sigtrap = 1;
		a.remove_on_exec = 1; /* the kernel requires it with sigtrap */
	}
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (m == BY_FASYNC) {
		struct f_owner_ex o = {F_OWNER_TID, (pid_t)syscall(SYS_gettid)};
		if (fcntl(fd, F_SETFL, O_ASYNC) < 0 || fcntl(fd, F_SETSIG, SIGPROF) < 0 ||
		    fcntl(fd, F_SETOWN_EX, &o) < 0)
			return close(fd), -1;
	}
	return fd;
}

static timer_t timer;

static int start(enum mode m)
{
	signals = periods = 0;
	last_count = 0;
	if (m == BY_TIMER) {
		struct sigevent ev = {.sigev_notify = SIGEV_THREAD_ID, .sigev_signo = SIGPROF};
		ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
		struct itimerspec its = {{0, (long)period_ns}, {0, (long)period_ns}};
		return timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &timer) == 0 &&
		               timer_settime(timer, 0, &its, NULL) == 0
		               ? 0
		               : -1;
	}
	if ((event_fd = open_event(m)) < 0)
		return -1;
	return ioctl(event_fd, PERF_EVENT_IOC_ENABLE, 0);
}

static void stop(enum mode m)
{
	if (m == BY_TIMER) {
		timer_delete(timer);
		return;
	}
	ioctl(event_fd, PERF_EVENT_IOC_DISABLE, 0);
	close(event_fd);
	event_fd = -1;
}

static double thread_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void spin(double secs)
{
	double end = thread_cpu() + secs;
	volatile unsigned long x = 0;
	while (thread_cpu() < end)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
}

/* 100 blocking 1 MiB writes to a slow reader; returns the short ones. */
static int pipe_writes(void)
{
	static char block[1 << 20];
	int p[2], shorts = 0;
	if (pipe(p) < 0)
		return -1;
	pid_t reader = fork();
	if (reader == 0) {
		char buf[4096];
		close(p[1]);
		for (;;) {
			usleep(50);
			if (read(p[0], buf, sizeof buf) <= 0)
				_exit(0);
		}
	}
	close(p[0]);
	for (int i = 0; i < 100; i++)
		if (write(p[1], block, sizeof block) != (ssize_t)sizeof block)
			shorts++;
	close(p[1]);
	waitpid(reader, NULL, 0);
	return shorts;
}

static void run(enum mode m, unsigned hz)
{
	period_ns = 1000000000ull / hz;
	if (start(m) < 0) {
		printf("| %s | %u | not available: %s | | | | |\n", mode_name[m], hz, strerror(errno));
		return;
	}
	double c0 = thread_cpu();
	spin(0.5);
	double spin_cpu = thread_cpu() - c0;
	long spin_signals = signals;
	signals = periods = 0;
	c0 = thread_cpu();
	int shorts = pipe_writes();
	double pipe_cpu = thread_cpu() - c0;
	long pipe_signals = signals, pipe_periods = periods;
	stop(m);
	printf("| %s | %u | %.0f | %d of 100 | %.3f | %ld | %ld |\n", mode_name[m], hz,
	       spin_signals / spin_cpu, shorts, pipe_cpu, pipe_signals, pipe_periods);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sample;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	unsigned rates[8] = {1000, 4000}, n = 2;
	if (argc > 1)
		for (n = 0; n < 8 && (int)n + 1 < argc; n++)
			rates[n] = (unsigned)strtoul(argv[n + 1], NULL, 10);
	printf("| mode | Hz | spin: signals / CPU s | pipe: short writes | pipe: CPU s | "
	       "pipe: signals | pipe: periods |\n|---|---|---|---|---|---|---|\n");
	for (unsigned r = 0; r < n; r++)
		for (int m = BY_TIMER; m <= BY_SIGTRAP; m++)
			run((enum mode)m, rates[r]);
	return 0;
}
