/*
 * exec.c - the new program never receives a profiling signal (SPEC.md §4).
 *
 * exec keeps the calling thread's pending signals and resets handled
 * dispositions to SIG_DFL, which for SIGPROF and the real-time signals is
 * "terminate".  A deleted POSIX timer's signal that is already queued
 * stays queued.  So glibc's profil() kills a program that execs with
 * status 128+SIGPROF.  Around every exec we therefore:
 *
 *   1. delete every timer (nothing generates the signal any more); the
 *      handler stays, so samples pending on other threads are harmless;
 *   2. take this thread's pending instances of the signal with
 *      sigtimedwait() (signal blocked, zero timeout), then restore the
 *      mask: the new program inherits the program's own mask; a pending
 *      signal that was not ours (kill, the program's timer) is queued
 *      again, as it would have been inherited;
 *   3. give SIGSEGV/SIGBUS back to the program (fault.c);
 *   4. call libc's exec; if it fails, restart the timers at the same rate
 *      and signal and reinstall the fault handler: profiling goes on.
 *
 * The engine lock is held throughout, so no other thread can restart
 * profiling in between.  Entry points: execve, execv, execvp, execvpe,
 * execl, execlp, execle, fexecve, execveat (each resolved with dlsym at
 * load time: exec is async-signal-safe and dlsym is not).  posix_spawn(),
 * system(), popen() and vfork() run the new program in a new task, which
 * no timer of ours targets, so they need nothing.
 *
 * A vfork child shares our memory but not our timers: getpid() differs
 * from the timers' owner, and we pass the call straight through without
 * touching anything.  If exec is called from a signal handler that
 * interrupted our own code on this thread (the engine lock is ours, the
 * registry may be mid-change), we cannot delete the timers; the signal is
 * then set to SIG_IGN, which discards what is pending and survives exec:
 * the new program starts with that one signal ignored (documented limit).
 */
#include "sampling.h"
#include "fault.h"
#include "exec_impl.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

/* What exec_prepare() did, for exec_resume(). */
struct exec_state {
	int locked;
	int sig;          /* timers stopped for this signal, or 0 */
	unsigned int hz;
	int ignored;      /* fallback: this signal was set to SIG_IGN, or 0 */
};

#define REQUEUE_MAX 32

/* Takes every pending instance of sig on this thread; queues again those
 * that were not our timers'. */
static void drain_pending(int sig)
{
	sigset_t one, old;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_BLOCK, &one, &old);
	struct timespec zero = {0, 0};
	siginfo_t keep[REQUEUE_MAX], si;
	int nkeep = 0;
	while (sigtimedwait(&one, &si, &zero) == sig) {
		int ours = timer_tag_ours(&si);
		if (!ours && nkeep < REQUEUE_MAX)
			keep[nkeep++] = si;
	}
	pid_t pid = getpid(), tid = (pid_t)syscall(SYS_gettid);
	for (int i = 0; i < nkeep; i++)
		syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &keep[i]);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void exec_prepare(struct exec_state *st)
{
	memset(st, 0, sizeof *st);
	if (!sigstate_mine() || getpid() != timers_owner())
		return; /* vfork child, or never profiled: not ours to touch */
	if (engine_held_here()) {
		/* Re-entered from a signal handler: see the header. */
		st->ignored = timers_signal();
		if (st->ignored)
			signal_ignore(st->ignored, 1);
		return;
	}
	engine_lock();
	st->locked = 1;
	st->sig = timers_signal();
	if (!st->sig)
		return;
	st->hz = timers_hz();
	timers_stop();
	drain_pending(st->sig);
	fault_uninstall();
}

/* exec failed: profiling resumes as it was.  Preserves errno. */
static void exec_resume(struct exec_state *st)
{
	int e = errno;
	if (st->ignored)
		signal_ignore(st->ignored, 0);
	if (st->sig) {
		fault_install();
		timers_start(st->sig, st->hz); /* on failure: off, as after a fault */
	}
	if (st->locked)
		engine_unlock();
	errno = e;
}

#define AROUND(call) do { \
	struct exec_state st_; \
	exec_prepare(&st_); \
	int rc_ = (call); \
	exec_resume(&st_); \
	return rc_; \
} while (0)

int exec_around_execve(const char *path, char *const argv[], char *const envp[])
{
	AROUND(exec_real.execve(path, argv, envp));
}

int exec_around_execvpe(const char *file, char *const argv[], char *const envp[])
{
	AROUND(exec_real.execvpe(file, argv, envp));
}

int exec_around_fexecve(int fd, char *const argv[], char *const envp[])
{
	AROUND(exec_real.fexecve(fd, argv, envp));
}

int exec_around_execveat(int dirfd, const char *path, char *const argv[],
                         char *const envp[], int flags)
{
	if (!exec_real.execveat) {
		errno = ENOSYS;
		return -1;
	}
	AROUND(exec_real.execveat(dirfd, path, argv, envp, flags));
}
