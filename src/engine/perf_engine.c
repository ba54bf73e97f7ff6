/*
 * perf_engine.c - per-thread perf events as the sampling clock, when the
 * system allows them and they sample finer than the timers.
 *
 * Why: the kernel checks CPU-time timers only at its tick (CONFIG_HZ, 250
 * here), so above that rate one timer signal stands for several expiries
 * at one pc (timers.c credits them as overruns): totals are right, the
 * resolution is the tick's.  The software event PERF_COUNT_SW_TASK_CLOCK
 * with sample_period = 1e9/hz ns is driven by a high-resolution timer
 * that runs only while the thread is on a CPU, so each sample is a real pc
 * at its own instant, up to the kernel's perf_event_max_sample_rate.
 *
 * Delivery, one signal per sample, no ring buffer and no system call in
 * the handler: the event's descriptor has O_ASYNC, F_SETSIG = the sampling
 * signal and F_SETOWN_EX = (F_OWNER_TID, thread).  On each overflow the
 * kernel (kernel/events/core.c, __perf_event_overflow) sets pending_kill =
 * POLL_IN and, the descriptor having a fasync entry, queues its pending
 * irq_work, whose perf_event_wakeup() calls kill_fasync(): the signal goes
 * to that thread with si_code POLL_IN and si_fd the descriptor.  Nothing
 * there depends on an mmap'ed buffer (with none, the sample record is
 * simply not written) nor on PERF_EVENT_IOC_REFRESH: the event is only
 * disabled after an overflow when a refresh armed event_limit, which we
 * never do.  (async-profiler re-arms with IOC_REFRESH in its handler
 * because it arms its events with a limit of one; we have no reason to.)
 * Checked here: 1000.2, 4004 and 9998 signals per CPU second at 1, 4 and
 * 10 kHz on one thread, every one with POLL_IN and our descriptor.
 *
 * Probe, never assume: perf_probe.c says what the system allows (the
 * tick, the kernel's sample-rate cap, seccomp and a tracer, descriptor
 * numbers) and opens the events; a failure at start makes the run use
 * timers for every thread, a failure later gives that thread a timer.
 * The reason is kept for profil_get_stats().
 *
 * The engine is chosen when profiling starts: PROFIL_ENGINE=timer forbids
 * events, PROFIL_ENGINE=perf uses them whenever the probe succeeds, and
 * PROFIL_ENGINE=auto, the default (env_choice()), uses them when the rate
 * is above the tick and sigtrap delivery is possible.  Never
 * above the kernel's perf_event_max_sample_rate, forced or not: there the
 * kernel throttles the events and the totals would fall short.  The kernel
 * lowers that cap at run time when its interrupts run long, so a rate
 * change and every sweep (timers_rescan(), 100 ms) read it again, and the
 * threads move from their events to timers when it has fallen below the
 * rate (perf_engine_keep()).
 *
 * Events count user and kernel CPU time, as the timers' CPU clocks do.
 * Where the kernel allows only user-space events (perf_event_paranoid 2
 * without CAP_PERFMON) time spent in system calls would not be sampled,
 * so auto falls back to timers; PROFIL_ENGINE=perf accepts the user-only
 * event (documented in profil(3)).
 */
#include "engine/perf_engine.h"
#include "engine/perf_trap.h"
#include "engine/switchwatch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

struct perf_fd_state perf_fd_state[PERF_FD_MAX] LARGE_STATIC;

/* All under the engine lock. */
static int chosen;       /* events for the current run */
static int user_only;    /* the run's events exclude the kernel */
static int last_error;   /* why the run does not use events; 0 if it does */
static unsigned int cap; /* perf_event_max_sample_rate at the start */
static int trap;         /* the run's events deliver by sigtrap (SIGTRAP) */
static unsigned int trap_probed; /* rate a sigtrap probe just passed at */

enum choice { FORBID = -1, AUTO = 0, FORCE = 1 };

static enum choice env_choice(void)
{
	static _Atomic int warned;
	const char *s = profil_getenv("PROFIL_ENGINE");
	/* Unset: auto.  Events were opt-in while their signals came by
	 * fasync, raised while a thread ran in the kernel (a blocking pipe
	 * write returned short: CPython's test_subprocess), and while each
	 * held a descriptor the program could see and close (CPython's
	 * test_pass_fds_redirected).  Auto uses them only with sigtrap
	 * delivery, which waits for the return to user mode as the timers'
	 * signals do (perf_trap.c), with the events held by mappings
	 * (perf_mapped.c); everywhere else, the timers. */
	if (!s || !*s)
		return AUTO;
	if (strcasecmp(s, "auto") == 0)
		return AUTO;
	if (strcasecmp(s, "perf") == 0 || strcasecmp(s, "perf-events") == 0)
		return FORCE;
	if (strcasecmp(s, "timer") == 0 || strcasecmp(s, "timers") == 0 ||
	    strcasecmp(s, "thread-cputime-timers") == 0)
		return FORBID;
	if (!atomic_exchange(&warned, 1))
		env_warning("PROFIL_ENGINE", s, "is none of perf, timer, auto; using auto");
	return AUTO;
}

/* What /proc/self/status says, read once per start (perf_probe_status()):
 * perf_engine_wants_trap() fills it, may_try() and
 * perf_engine_choose() use it, and the choice clears it (engine lock). */
static struct status_facts {
	int seccomp, traced;
} start_facts;
static int start_facts_ok;

static const struct status_facts *facts(void)
{
	if (!start_facts_ok) {
		long tracer;
		perf_probe_status(&start_facts.seccomp, &tracer);
		start_facts.traced = tracer != 0; /* unreadable: assume the worst */
		start_facts_ok = 1;
	}
	return &start_facts;
}

/* Whether an event may overflow at hz.  The kernel throttles one that
 * overflows more than ceil(cap / tick) times in one tick, and ours
 * overflows ceil(hz / tick) times, or once more by phase.  (Measured with
 * cap 1250 and tick 250: 1000 Hz loses nothing, 1250 Hz 5%.)  And never
 * above PERF_ENGINE_HZ_MAX, whatever the kernel allows: a signal per
 * sample costs 13-26 us of the thread's CPU on a VM (bench/perf-engine.md),
 * so at the kernel's default cap of 100 kHz a thread spent all its time
 * taking samples and made no progress (safety_concurrent_callers hung at
 * 91784 Hz).  Above it the timers credit the rate exactly, at the tick's
 * resolution. */
static int rate_ok(unsigned int hz)
{
	unsigned int tick = perf_engine_tick_hz();
	return hz <= PERF_ENGINE_HZ_MAX &&
	       (hz + tick - 1) / tick + 1 <= (cap + tick - 1) / tick;
}

int perf_engine_keep(unsigned int hz)
{
	if (!chosen)
		return 0;
	cap = perf_probe_max_rate();
	if (rate_ok(hz))
		return 1;
	perf_engine_refuse(ERANGE);
	return 0;
}

/* The checks every choice makes before its probe: 0 when events may not
 * be tried at hz (last_error says why, if anything failed). */
static int may_try(enum choice c, unsigned int hz)
{
	if (c == FORBID)
		return 0;
	if (c == AUTO && hz <= perf_engine_tick_hz())
		return 0; /* no finer than the timers: nothing to gain */
	/* Even when forced: a throttled event loses samples, and the totals
	 * would fall short. */
	cap = perf_probe_max_rate();
	if (!rate_ok(hz)) {
		last_error = ERANGE;
		return 0;
	}
	if (c == AUTO && facts()->seccomp) {
		last_error = EPERM;
		return 0;
	}
	return 1;
}

static int64_t period_of(unsigned int hz)
{
	int64_t per = 1000000000 / (int64_t)hz;
	return per > 0 ? per : 1;
}

/*
 * Sigtrap delivery needs the run's signal to be SIGTRAP, which is chosen
 * before the run starts (engine.c): so this asks first, probing a sigtrap
 * event on the calling thread.  Not when PROFIL_SIGNAL names a signal:
 * then the events signal through fasync, on that one.
 */
int perf_engine_wants_trap(unsigned int hz)
{
	const char *named = profil_getenv("PROFIL_SIGNAL");
	start_facts_ok = 0; /* read afresh for this start */
	trap_probed = 0;
	if ((named && *named) || env_choice() == FORBID)
		return 0;
	if (!perf_trap_usable(facts()->traced) || !may_try(env_choice(), hz))
		return 0;
	trap = 1;
	int fd = perf_probe_event(0, period_of(hz), 0, trap, 0);
	trap = 0;
	if (fd < 0)
		return 0;
	close(fd);
	trap_probed = hz; /* perf_engine_choose() need not probe again */
	return 1;
}

static int choose(unsigned int hz, int sig);

int perf_engine_choose(unsigned int hz, int sig)
{
	int rc = choose(hz, sig);
	start_facts_ok = 0;
	trap_probed = 0;
	/* Forced, the events are what was asked for, whatever a switch costs */
	atomic_store(&switch_watch_on, chosen && env_choice() == AUTO);
	return rc;
}

static int choose(unsigned int hz, int sig)
{
	chosen = user_only = last_error = trap = 0;
	enum choice c = env_choice();
	if (!may_try(c, hz))
		return 0;
	/* SIGTRAP is the run's signal only when perf_engine_wants_trap()
	 * said so; a failure here leaves timers on it.  Fasync delivery
	 * cuts blocking system calls short: only when forced. */
	trap = sig == SIGTRAP;
	if (!trap && c == AUTO) {
		last_error = EOPNOTSUPP;
		return 0;
	}
	if (trap && trap_probed == hz) {
		chosen = 1;
		return 1;
	}
	int fd = perf_probe_event(0, period_of(hz), 0, trap, 0);
	/* sigtrap events count the kernel too: the kernel warns about
	 * user-only ones whose trap is still pending at the next overflow */
	if (fd < 0 && errno == EACCES && c == FORCE && !trap)
		fd = perf_probe_event(0, period_of(hz), user_only = 1, trap, 0);
	if (fd < 0) {
		/* EACCES: perf_event_paranoid; EPERM/ENOSYS: seccomp or a
		 * container; ENOENT/EOPNOTSUPP: no such event; EMFILE/ENFILE:
		 * no descriptor to spare */
		last_error = errno ? errno : EINVAL;
		user_only = trap = 0;
		return 0;
	}
	close(fd);
	chosen = 1;
	return 1;
}

int perf_engine_trap(void)
{
	return chosen && trap;
}

int perf_engine_on(void)
{
	return chosen;
}

void perf_engine_off(void)
{
	chosen = trap = 0;
	atomic_store(&switch_watch_on, 0);
}

void perf_engine_refuse(int err)
{
	if (chosen) {
		chosen = 0;
		last_error = err;
		atomic_store(&switch_watch_on, 0);
	}
}

int perf_engine_open(pid_t tid, int sig, int64_t per, int64_t cpu_now, int hooked)
{
	if (trap)
		return perf_mapped_open(tid, per, cpu_now, hooked);
	int fd = perf_probe_event(tid, per, user_only, 0, 0);
	if (fd < 0)
		return -1;
	if (fd >= PERF_FD_MAX) {
		close(fd);
		errno = EMFILE;
		return -1;
	}
	/* Recognised by the handler before the first overflow can occur. */
	atomic_store(&perf_fd_state[fd].base, cpu_now);
	atomic_store(&perf_trap_period, per);
	atomic_store(&perf_fd_state[fd].tid, (int)tid);
	/* The owner also tells perf_engine_task_gone() the thread's fate. */
	struct f_owner_ex own = {F_OWNER_TID, tid};
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETOWN_EX, &own) != 0 || fcntl(fd, F_SETSIG, sig) != 0 ||
	    fcntl(fd, F_SETFL, fl | O_ASYNC) != 0 || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
		int e = errno;
		perf_engine_close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static void forget(int fd)
{
	if (fd < 0)
		return;
	/* Marked closed first: a signal it queued is still known as ours. */
	if (fd < PERF_FD_MAX)
		atomic_store(&perf_fd_state[fd].tid, -1);
	close(fd);
}

/*
 * Closing our descriptor ends the event only if no process holds a copy:
 * a child forked without our atfork handler (a raw fork), or a vfork
 * child until its exec, does, and the event went on signalling its thread
 * after the stop had given the program back the signal's default action
 * (SIGPROF killed it: test engine_perf_stop_with_child_holding_copies).
 * So the open file description, which every copy shares, is silenced
 * first: O_ASYNC cleared (the kernel removes its fasync entry, and a
 * wakeup already on its way finds none) and the event disabled.
 */
void perf_engine_close(int fd)
{
	if (trap) {
		perf_mapped_close(fd);
		return;
	}
	if (fd < 0)
		return;
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_ASYNC);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	forget(fd);
}

/* The child's copy of the parent's event: closed only, as the file
 * description and the event are the parent's too and must keep running. */
void perf_engine_forget(int fd)
{
	if (trap)
		perf_mapped_forget(fd);
	else
		forget(fd);
}

int perf_engine_resignal(int fd, int sig)
{
	if (trap) { /* SIGTRAP it is, for good */
		errno = EINVAL;
		return -1;
	}
	return fcntl(fd, F_SETSIG, sig);
}

/* Never a period the engine would refuse as a rate (rate_ok()): see
 * timers_set_hz() for what one costs. */
int perf_engine_set_period(int fd, int64_t per)
{
	if (per < 1000000000 / (int64_t)PERF_ENGINE_HZ_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (trap)
		return perf_mapped_set_period(fd, per);
	uint64_t p = (uint64_t)per;
	atomic_store(&perf_trap_period, per);
	return ioctl(fd, PERF_EVENT_IOC_PERIOD, &p);
}

enum profil_engine perf_engine_kind(void)
{
	return chosen ? PROFIL_ENGINE_PERF_EVENTS : PROFIL_ENGINE_THREAD_TIMERS;
}

unsigned int perf_engine_real_hz(unsigned int hz)
{
	unsigned int most = chosen ? cap : perf_engine_tick_hz();
	if (chosen && most > PERF_ENGINE_HZ_MAX)
		most = PERF_ENGINE_HZ_MAX;
	return hz < most ? hz : most;
}

int perf_engine_error(void)
{
	return last_error;
}
