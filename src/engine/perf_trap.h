/*
 * perf_trap.h - the perf engine's second way of delivering samples:
 * attr.sigtrap.  The kernel sends the sampled thread SIGTRAP (si_code
 * TRAP_PERF, si_perf_data = attr.sig_data) from task work, on its way
 * back to user mode, as the CPU-clock timers do; so a sample never
 * interrupts a system call in progress (fasync's signals made blocking
 * pipe writes return short: bench/perf-engine.md).  Overflows that fall
 * while the thread is in the kernel come as one signal at its return, so
 * the handler weighs each signal by the thread's CPU time since the last
 * (one clock_gettime system call, made inline: perf_trap_thread_ns()).
 * Not by the event's count: task-clock runs from the thread's switch-in
 * to its switch-out, which on a VM includes time stolen by the host that
 * the thread's CPU clock leaves out (CONFIG_PARAVIRT_TIME_ACCOUNTING, as
 * on this VM: a thread was credited 12 ms more than its CPU time under
 * load, test classic_thread_no_hook_saw, when each signal counted one),
 * and the totals are defined against the CPU clocks, as the timers'
 * are.  The fasync signals are weighed the same way (sample.c).
 *
 * Read by the signal handler (sample.c): perf_trap_period, documented
 * below; perf_fd_state[] (.base, .gen) in engine_int.h.
 */
#ifndef PROFIL_PERF_TRAP_H
#define PROFIL_PERF_TRAP_H

#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "engine/engine_int.h"

/*
 * The calling thread's CPU time in ns, from the kernel without libc:
 * clock_gettime(CLOCK_THREAD_CPUTIME_ID) is a system call (the vDSO does
 * not serve thread clocks), and libc's wrapper sets errno.  Only where
 * we know the system call convention; elsewhere the engine never uses
 * sigtrap.  Returns -1 on failure.
 */
#if defined(__x86_64__)
#define PERF_TRAP_ARCH 1
static inline long perf_trap_syscall2(long n, long a, long b)
{
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "0"(n), "D"(a), "S"(b) : "rcx", "r11", "memory");
	return ret;
}
static inline long perf_trap_syscall3(long n, long a, long b, long c)
{
	long ret;
	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "0"(n), "D"(a), "S"(b), "d"(c)
	                 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define PERF_TRAP_ARCH 1
static inline long perf_trap_syscall2(long n, long a, long b)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
	return x0;
}
static inline long perf_trap_syscall3(long n, long a, long b, long c)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
	return x0;
}
#else
#define PERF_TRAP_ARCH 0
static inline long perf_trap_syscall2(long n, long a, long b)
{
	(void)n, (void)a, (void)b;
	return -1;
}
static inline long perf_trap_syscall3(long n, long a, long b, long c)
{
	(void)n, (void)a, (void)b, (void)c;
	return -1;
}
#endif

static inline int64_t perf_trap_thread_ns(void)
{
	struct timespec ts;
	if (perf_trap_syscall2(SYS_clock_gettime, CLOCK_THREAD_CPUTIME_ID, (long)&ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The events' period in ns (one rate per run); written with the engine
 * lock held before an event gets it, read by the handler. */
extern _Atomic int64_t perf_trap_period HIDDEN;

/* perf_trap.c, engine lock held, never in signal context. */
/* Whether events may deliver by sigtrap here: the architecture, a
 * kernel that sends the signal from task work with its later fixes, no
 * tracer (traced: a debugger stops on every SIGTRAP), not under TSan or
 * valgrind, not in a Go program (its runtime takes SIGTRAP behind our
 * back and dies of ours). */
HIDDEN int perf_trap_usable(int traced);
#endif
