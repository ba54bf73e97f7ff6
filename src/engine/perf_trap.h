/*
 * perf_trap.h - the perf engine's second way of delivering samples:
 * attr.sigtrap.  The kernel sends the sampled thread SIGTRAP (si_code
 * TRAP_PERF, si_perf_data = attr.sig_data) from task work, on its way
 * back to user mode, as the CPU-clock timers do; so a sample never
 * interrupts a system call in progress (fasync's signals made blocking
 * pipe writes return short: bench/perf-engine.md).  Overflows that fall
 * while the thread is in the kernel come as one signal at its return, so
 * the handler weighs each signal by the event's count (one read(2) of its
 * own descriptor, made inline: perf_trap_read()).
 *
 * Read by the signal handler (sample.c): perf_trap_base[] and
 * perf_trap_period, documented at their definitions (perf_trap.c).
 */
#ifndef PROFIL_PERF_TRAP_H
#define PROFIL_PERF_TRAP_H

#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "engine/engine.h"

/*
 * read(2) without libc: libc's read() is a cancellation point, which a
 * signal handler must not be, and sets errno.  Only where we know the
 * system call convention; elsewhere the engine never uses sigtrap.
 */
#if defined(__x86_64__)
#define PERF_TRAP_ARCH 1
static inline long perf_trap_read(int fd, void *buf, unsigned long n)
{
	long ret;
	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "0"((long)SYS_read), "D"((long)fd), "S"(buf), "d"(n)
	                 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define PERF_TRAP_ARCH 1
static inline long perf_trap_read(int fd, void *buf, unsigned long n)
{
	register long x8 __asm__("x8") = SYS_read;
	register long x0 __asm__("x0") = fd;
	register long x1 __asm__("x1") = (long)buf;
	register long x2 __asm__("x2") = (long)n;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
}
#else
#define PERF_TRAP_ARCH 0
static inline long perf_trap_read(int fd, void *buf, unsigned long n)
{
	(void)fd, (void)buf, (void)n;
	return -1;
}
#endif

/*
 * The handler's state per descriptor number: the event's count (ns of
 * the thread's CPU time) up to which its samples have been credited.
 * Set to 0 by perf_engine_open() before the event is enabled (engine
 * lock); after that written only by the handler on the event's own
 * thread.  Relaxed atomics: one writer at a time, never torn.
 */
extern _Atomic uint64_t perf_trap_base[PERF_FD_MAX] HIDDEN;
/* The events' period in ns (one rate per run); written with the engine
 * lock held before an event gets it, read by the handler. */
extern _Atomic int64_t perf_trap_period HIDDEN;

/* perf_trap.c, engine lock held, never in signal context. */
/* Whether events may deliver by sigtrap here: the architecture, a
 * kernel that sends the signal from task work with its later fixes, no
 * tracer (a debugger stops on every SIGTRAP), not under TSan. */
HIDDEN int perf_trap_usable(void);
/* A descriptor number in [low, ceiling) held by a placeholder, so the
 * event can be told its own number (sig_data) before it exists; -1 errno. */
HIDDEN int perf_trap_reserve(int low, int ceiling);
/* Puts event fd at the reserved number slot (closing fd); -1 errno, and
 * both are closed. */
HIDDEN int perf_trap_place(int fd, int slot);

#endif
