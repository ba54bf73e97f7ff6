/*
 * perf_engine.h - the second sampling engine: one perf_event per thread
 * (software event task-clock, sampled every 1/hz of the thread's CPU
 * time by a high-resolution timer), whose every overflow sends the
 * sampling signal to that thread (O_ASYNC, F_SETSIG, F_SETOWN_EX).
 *
 * timers.c keeps the per-thread registry for both engines and calls in
 * here at its create/delete points; perf_engine.c says whether the
 * engine may be used (perf_engine_choose()) and keeps the descriptors
 * the handler recognises.  Everything but perf_sig_tid() runs with the
 * engine lock held, never in signal context.
 */
#ifndef PROFIL_PERF_ENGINE_H
#define PROFIL_PERF_ENGINE_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine/engine.h"

/* The highest rate the events sample at (perf_engine.c, rate_ok()):
 * above it, or above the kernel's perf_event_max_sample_rate, the run
 * uses timers and perf_error is ERANGE.  Issue 13 asked for the events'
 * resolution up to 10 kHz. */
#define PERF_ENGINE_HZ_MAX 10000u

/* At timers_start(): whether threads get events (1) or timers (0) for
 * this run, from PROFIL_ENGINE, the rate, the tick and a probe on the
 * calling thread.  The outcome is kept for the statistics. */
HIDDEN int perf_engine_choose(unsigned int hz, int sig);
/* Before the run's signal is chosen: whether its events should deliver
 * by sigtrap (perf_trap.h), so the signal must be SIGTRAP. */
HIDDEN int perf_engine_wants_trap(unsigned int hz);
/* The current run's events deliver by sigtrap. */
HIDDEN int perf_engine_trap(void);
HIDDEN int perf_engine_on(void);        /* chosen for the current run */
HIDDEN void perf_engine_off(void);      /* the run ended (timers_stop()) */
/* No thread gets an event from now on in this run, for the reason err
 * (kept for the statistics): a seccomp filter about to be installed
 * would refuse the events' calls (engine_events_forbid()). */
HIDDEN void perf_engine_refuse(int err);
/* At a rate change: whether the run's events may go on at hz (at most
 * PERF_ENGINE_HZ_MAX and below the kernel's cap, read again); if not, the engine is given up for the run
 * (perf_error ERANGE) and the caller moves every thread to a timer. */
HIDDEN int perf_engine_keep(unsigned int hz);

/* An enabled event on thread tid sending sig every per ns of its CPU
 * time, cpu_now its CPU time now, hooked when our pthread_create hook
 * made it (its exit is seen too): its descriptor (or slot), or -1 (errno)
 * and the thread gets a timer. */
HIDDEN int perf_engine_open(pid_t tid, int sig, int64_t per, int64_t cpu_now, int hooked);
HIDDEN void perf_engine_close(int fd);
/* After fork, in the child: the descriptor is the parent's event. */
HIDDEN void perf_engine_forget(int fd);
HIDDEN int perf_engine_resignal(int fd, int sig);
HIDDEN int perf_engine_set_period(int fd, int64_t per);
/* Whether the thread event fd samples has exited (1), from the event
 * itself, whatever thread has its tid now; 0 if alive or unknown. */
HIDDEN int perf_engine_task_gone(int fd);

/* perf_probe.c: what the system allows, and the events themselves. */
/* The kernel's cap on samples per CPU second, read afresh each time. */
HIDDEN unsigned int perf_probe_max_rate(void);
/* Whether a seccomp filter is in force, and the pid of the process
 * tracing us (0: none; -1 when /proc/self/status cannot be read), in one
 * read of it. */
HIDDEN void perf_probe_status(int *seccomp, long *tracer);
/* 1: until called with 0, the calling thread's perf_probe_status() reads
 * the file once and answers from that reading (a process's start). */
HIDDEN void perf_probe_status_hold(int on);
/* 1 when the calling thread holds a start whose reading of the file said
 * the process has one thread (its "Threads:"), 0 otherwise. */
HIDDEN int perf_probe_alone(void);
/* A disabled task-clock event on tid (0: the caller) with period per
 * ns, close-on-exec, numbered high; with trap, delivering by sigtrap
 * with sig_data.  Its descriptor, or -1 (errno). */
HIDDEN int perf_probe_event(pid_t tid, int64_t per, int excl_kernel, int trap, long sig_data);

/* perf_mapped.c: sigtrap events held by a mapping, not a descriptor;
 * each known by a slot number in place of a descriptor's. */
HIDDEN int perf_mapped_open(pid_t tid, int64_t per, int64_t cpu_now, int hooked);
HIDDEN void perf_mapped_close(int slot);
HIDDEN void perf_mapped_forget(int slot);
HIDDEN int perf_mapped_set_period(int slot, int64_t per);
HIDDEN int perf_mapped_task_gone(int slot);

/* For profil_get_stats(): the engine of the run (PROFIL_ENGINE_*), the
 * distinct samples per CPU second it delivers at rate hz, and why perf
 * events were not used (an errno value; 0 if they were, or not tried). */
HIDDEN enum profil_engine perf_engine_kind(void);
HIDDEN unsigned int perf_engine_real_hz(unsigned int hz);
HIDDEN int perf_engine_error(void);
/* The kernel tick (CONFIG_HZ), as the coarse clocks' resolution shows. */
HIDDEN unsigned int perf_engine_tick_hz(void);

#endif
