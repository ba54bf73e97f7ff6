/*
 * filtercheck.c - which of the agent's system calls a seccomp filter
 * about to be installed would refuse.
 *
 * Why: a program that installs a filter allowing only the calls it makes
 * itself (a sandbox built on libseccomp with a default of KILL or TRAP)
 * was killed under profil at the agent's next call it had not listed:
 * the sampling handler's read of its thread's CPU clock on perf events,
 * perf_event_open() for a thread made after the install, timer_create()
 * for one on timers, the helper thread's sweep.  The filter's own program
 * says what it refuses (bpf.c), so it is asked, before the install,
 * about each call below, with the arguments the agent passes:
 *
 *   EVENTS  what the perf engine needs beyond the rest: a thread's event
 *           (perf_event_open, fcntl, ioctl, the event's page) and the
 *           handler's clock read.  Refused: every thread moves to a timer
 *           (engine_events_forbid()), which the kernel sends without a
 *           call of ours.
 *   AGENT   everything else the agent and the engine may do after a
 *           start, in any thread: a new thread's timer and its end, the
 *           helper's sweeps (its /proc reads, the recorder's lock, the
 *           module log), a forked child's ring file, signal masks.
 *           Refused: sampling ends in the process before the install
 *           (seccomp.c).
 *
 * Harmless answers: SECCOMP_RET_ALLOW, _LOG, _ERRNO (the call fails and
 * the agent copes, as with any failure) and _TRACE (no tracer: we are not
 * sampled under one, so the call fails with ENOSYS), except for what a
 * start needs, a ring file, signal handlers, a timer (record[] below,
 * counted with AGENT).  Refusals: _KILL_*,
 * _TRAP (the program's SIGSYS handler would get our call),
 * _USER_NOTIF (another process decides), any other value, and a program
 * bpf.c cannot run.  getrusage(RUSAGE_CHILDREN) is not asked: that call
 * is made only where no filter is in force (filter_enter()).
 *
 * The lists are of system call numbers as the kernel sees them (glibc's
 * fstat is newfstatat, a thread's creation clone3 and clone).  What a
 * list misses is a call the program may be killed for, as before; what
 * it holds needlessly ends sampling where it could have gone on.
 */
#include "agent.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define OUR_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define OUR_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define OUR_ARCH AUDIT_ARCH_I386
#elif defined(__riscv) && __riscv_xlen == 64
#define OUR_ARCH AUDIT_ARCH_RISCV64
#endif

/* An argument the filter may compare but we cannot know (an address, a
 * descriptor): a plausible value. */
#define ANY_PTR 0x7f0000001000ull
#define ANY_FD 3
/* An int argument as the kernel sees it: glibc's system call macros
 * pass each argument as a long, so a negative int arrives sign-extended
 * (AT_FDCWD is 0xffffffffffffff9c, not 0xffffff9c), and a filter that
 * compares all 64 bits (libseccomp's rules do) sees that. */
#define INT_ARG(v) ((uint64_t)(int64_t)(int)(v))
#define AT_CWD INT_ARG(AT_FDCWD)
/* Another thread's CPU clock, made from the calling thread's id when
 * asked (refuses()). */
#define THREAD_CLOCK ((uint64_t)-2)

/* What glibc calls on this architecture for rename(), unlink(),
 * readlink() and poll(): the old calls where the kernel has them. */
#ifdef SYS_rename
#define RENAME {SYS_rename, {ANY_PTR, ANY_PTR}}
#define UNLINK {SYS_unlink, {ANY_PTR}}
#define READLINK {SYS_readlink, {ANY_PTR, ANY_PTR, 4096}}
#define POLL {SYS_poll, {ANY_PTR, 1, 100}}
#else
#define RENAME {SYS_renameat2, {AT_CWD, ANY_PTR, AT_CWD, ANY_PTR, 0}}
#define UNLINK {SYS_unlinkat, {AT_CWD, ANY_PTR, 0}}
#define READLINK {SYS_readlinkat, {AT_CWD, ANY_PTR, ANY_PTR, 4096}}
#define POLL {SYS_ppoll, {ANY_PTR, 1, ANY_PTR, 0, 8}}
#endif

struct call {
	long nr;
	uint64_t arg[6];
};

/* The perf engine's own (perf_engine.c, perf_probe.c, perf_mapped.c,
 * perf_trap.h). */
static const struct call events[] = {
	{SYS_perf_event_open, {ANY_PTR, 0, (uint64_t)-1, (uint64_t)-1, 0}},
	{SYS_perf_event_open, {ANY_PTR, 0, (uint64_t)-1, (uint64_t)-1, PERF_FLAG_FD_CLOEXEC}},
	{SYS_clock_gettime, {CLOCK_THREAD_CPUTIME_ID, ANY_PTR}},
	{SYS_fcntl, {ANY_FD, F_DUPFD_CLOEXEC, 512}},
	{SYS_fcntl, {ANY_FD, F_GETFL}},
	{SYS_fcntl, {ANY_FD, F_SETFL, O_RDWR | O_ASYNC}},
	{SYS_fcntl, {ANY_FD, F_SETSIG, SIGTRAP}},
	{SYS_fcntl, {ANY_FD, F_SETOWN_EX, ANY_PTR}},
	{SYS_fcntl, {ANY_FD, F_GETOWN_EX, ANY_PTR}},
	{SYS_ioctl, {ANY_FD, PERF_EVENT_IOC_ENABLE, 0}},
	{SYS_ioctl, {ANY_FD, PERF_EVENT_IOC_DISABLE, 0}},
	{SYS_ioctl, {ANY_FD, PERF_EVENT_IOC_PERIOD, ANY_PTR}},
	{SYS_mmap, {0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, ANY_FD, 0}},
	{SYS_munmap, {ANY_PTR, 4096}},
	{SYS_close, {ANY_FD}},
};

/* Everything else, after a start. */
static const struct call agent[] = {
	/* clocks: a thread's, the process's, another thread's (filled in) */
	{SYS_clock_gettime, {CLOCK_THREAD_CPUTIME_ID, ANY_PTR}},
	{SYS_clock_gettime, {CLOCK_PROCESS_CPUTIME_ID, ANY_PTR}},
	{SYS_clock_gettime, {CLOCK_MONOTONIC, ANY_PTR}},
	{SYS_clock_gettime, {CLOCK_REALTIME, ANY_PTR}},
	{SYS_clock_gettime, {THREAD_CLOCK, ANY_PTR}},
	/* the sweeps' (timers_scan.c), by system calls, not the vDSO (fmt.c) */
	{SYS_clock_gettime, {CLOCK_BOOTTIME, ANY_PTR}},
	{SYS_clock_gettime, {CLOCK_MONOTONIC_COARSE, ANY_PTR}},
	{SYS_clock_getres, {CLOCK_MONOTONIC_COARSE, ANY_PTR}},
	/* a thread's timer */
	{SYS_timer_create, {THREAD_CLOCK, ANY_PTR, ANY_PTR}},
	{SYS_timer_settime, {0, TIMER_ABSTIME, ANY_PTR, 0}},
	{SYS_timer_settime, {0, 0, ANY_PTR, 0}},
	{SYS_timer_gettime, {0, ANY_PTR}},
	{SYS_timer_delete, {0}},
	/* signals */
	{SYS_rt_sigprocmask, {SIG_BLOCK, ANY_PTR, 0, 8}},
	{SYS_rt_sigprocmask, {SIG_SETMASK, ANY_PTR, ANY_PTR, 8}},
	{SYS_rt_sigprocmask, {SIG_UNBLOCK, ANY_PTR, 0, 8}},
	{SYS_rt_sigaction, {SIGSEGV, ANY_PTR, ANY_PTR, 8}},
	{SYS_rt_sigaction, {SIGSEGV, 0, ANY_PTR, 8}},
	{SYS_rt_sigtimedwait, {ANY_PTR, ANY_PTR, ANY_PTR, 8}},
	{SYS_tgkill, {0, 0, SIGSEGV}},
	{SYS_getpid, {0}},
	{SYS_gettid, {0}},
	{SYS_getppid, {0}},
	{SYS_getuid, {0}},
	{SYS_getrusage, {RUSAGE_SELF, ANY_PTR}},
	{SYS_getrusage, {RUSAGE_THREAD, ANY_PTR}},
	{SYS_prlimit64, {0, RLIMIT_NOFILE, 0, ANY_PTR}},
	{SYS_prlimit64, {0, RLIMIT_SIGPENDING, 0, ANY_PTR}},
	/* files: /proc, the recording's directory, its ring and log files */
	{SYS_openat, {AT_CWD, ANY_PTR, O_RDONLY | O_CLOEXEC}},
	{SYS_openat, {AT_CWD, ANY_PTR, O_RDONLY | O_CLOEXEC | O_NOFOLLOW}},
	{SYS_openat, {AT_CWD, ANY_PTR, O_RDONLY | O_CLOEXEC | O_DIRECTORY}},
	{SYS_openat, {AT_CWD, ANY_PTR, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600}},
	{SYS_read, {ANY_FD, ANY_PTR, 4096}},
	{SYS_pread64, {ANY_FD, ANY_PTR, 4096, 0}},
	{SYS_write, {ANY_FD, ANY_PTR, 64}},
	{SYS_close, {ANY_FD}},
	{SYS_getdents64, {ANY_FD, ANY_PTR, 32768}},
	{SYS_newfstatat, {ANY_FD, ANY_PTR, ANY_PTR, 0x1000 /* AT_EMPTY_PATH */}},
	{SYS_newfstatat, {AT_CWD, ANY_PTR, ANY_PTR, 0}},
	READLINK,
	{SYS_flock, {ANY_FD, LOCK_SH | LOCK_NB}},
	{SYS_ftruncate, {ANY_FD, 1 << 20}},
	RENAME,
	UNLINK,
	{SYS_socket, {AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0}},
	{SYS_bind, {ANY_FD, ANY_PTR, 2}},
	{SYS_sendto, {ANY_FD, ANY_PTR, 64, MSG_NOSIGNAL, ANY_PTR, 110}},
	{SYS_sendto, {ANY_FD, ANY_PTR, 64, MSG_DONTWAIT | MSG_NOSIGNAL, ANY_PTR, 110}}, /* notes */
	{SYS_recvmsg, {ANY_FD, ANY_PTR, MSG_DONTWAIT | MSG_CMSG_CLOEXEC}},
	POLL,
	/* memory: ring files and the scratch ring, the helper's allocations */
	{SYS_mmap, {0, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, ANY_FD, 0}},
	{SYS_mmap, {0, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0}},
	{SYS_mmap, {0, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, (uint64_t)-1, 0}},
	{SYS_mprotect, {ANY_PTR, 4096, PROT_READ | PROT_WRITE}},
	{SYS_munmap, {ANY_PTR, 1 << 20}},
	{SYS_brk, {ANY_PTR}},
	{SYS_madvise, {ANY_PTR, 1 << 20, 23 /* MADV_POPULATE_WRITE */}},
	{SYS_madvise, {ANY_PTR, 1 << 20, MADV_DONTNEED}},
	{SYS_process_vm_readv, {0, ANY_PTR, 1, ANY_PTR, 1, 0}},
	/* the helper thread: made, waiting, ending */
	{SYS_clone3, {ANY_PTR, 88}},
	{SYS_clone, {CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
	             CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID,
	             ANY_PTR, ANY_PTR, ANY_PTR, ANY_PTR}},
	{SYS_set_robust_list, {ANY_PTR, 24}},
	{SYS_rseq, {ANY_PTR, 32, 0, 0x53053053}},
	{SYS_futex, {ANY_PTR, FUTEX_WAIT_PRIVATE, 0, ANY_PTR}},
	{SYS_futex, {ANY_PTR, FUTEX_WAKE_PRIVATE, 1}},
	{SYS_clock_nanosleep, {CLOCK_REALTIME, 0, ANY_PTR, 0}},
	{SYS_sched_yield, {0}},
	{SYS_prctl, {PR_GET_NAME, ANY_PTR}},
	{SYS_exit, {0}},
};

/* What a start needs, a forked child's or an exec'd program's (its ring
 * file: ringfile.c; its signal, fault handlers and first timer:
 * engine.c): an answer of an error here is a refusal too, since nothing
 * more could be recorded under the filter, and the children and programs
 * the process runs would each say so on its standard error (man-db's
 * sandboxes answer ENOSYS to a file's creation, or to a timer's). */
static const struct call record[] = {
	{SYS_openat, {AT_CWD, ANY_PTR, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600}},
	{SYS_ftruncate, {ANY_FD, 1 << 20}},
	{SYS_mmap, {0, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, ANY_FD, 0}},
	{SYS_rt_sigaction, {SIGSEGV, ANY_PTR, ANY_PTR, 8}},
	{SYS_rt_sigaction, {SIGTRAP, ANY_PTR, ANY_PTR, 8}},
	{SYS_timer_create, {THREAD_CLOCK, ANY_PTR, ANY_PTR}},
	{SYS_timer_settime, {0, TIMER_ABSTIME, ANY_PTR, 0}},
	{SYS_clock_gettime, {CLOCK_THREAD_CPUTIME_ID, ANY_PTR}},
	{SYS_clock_gettime, {THREAD_CLOCK, ANY_PTR}},
};

/* The filter's answer, classed: 0 harmless, 1 a refusal; strict: an
 * error is a refusal too. */
static int refuses(const struct sock_filter *f, size_t len, const struct call *c, long tid,
                   int strict)
{
	struct seccomp_data d = {0};
	d.nr = (int)c->nr;
	d.arch = OUR_ARCH;
	for (int i = 0; i < 6; i++)
		d.args[i] = c->arg[i];
	/* a thread's CPU clock (glibc's pthread_getcpuclockid(): the clock
	 * of thread tid, CPUCLOCK_SCHED, per thread) */
	if (c->arg[0] == THREAD_CLOCK)
		d.args[0] = INT_ARG((~(uint32_t)tid << 3) | 6);
	uint32_t action = agent_bpf_run(f, len, &d) & SECCOMP_RET_ACTION_FULL;
	if (action == SECCOMP_RET_ALLOW || action == SECCOMP_RET_LOG)
		return 0;
	return strict || !(action == SECCOMP_RET_ERRNO || action == SECCOMP_RET_TRACE);
}

static int any_refused(const struct sock_filter *f, size_t len, const struct call *v, size_t n,
                       int strict)
{
	long tid = syscall(SYS_gettid);
	for (size_t i = 0; i < n; i++)
		if (refuses(f, len, &v[i], tid, strict))
			return 1;
	return 0;
}

unsigned filter_refusals(const struct sock_filter *f, size_t len)
{
#ifndef OUR_ARCH
	(void)f, (void)len;
	return FILTER_REFUSES_EVENTS | FILTER_REFUSES_AGENT; /* cannot ask */
#else
	unsigned r = 0;
	if (any_refused(f, len, events, sizeof events / sizeof events[0], 0))
		r |= FILTER_REFUSES_EVENTS;
	if (any_refused(f, len, agent, sizeof agent / sizeof agent[0], 0) ||
	    any_refused(f, len, record, sizeof record / sizeof record[0], 1))
		r |= FILTER_REFUSES_AGENT;
	return r;
#endif
}
