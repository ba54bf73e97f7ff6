/*
 * exec.c - the new program never receives a profiling signal.
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
 *   3. withdraw the table and wait for handlers still writing, then give
 *      SIGSEGV/SIGBUS back to the program (fault.c): no sample writes
 *      without fault recovery;
 *   4. call libc's exec; if it fails, reinstall the fault handler,
 *      publish the table again and restart the timers at the same rate
 *      and signal: profiling goes on.
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
 * interrupted our own code on this thread (the engine lock is ours, or
 * being taken, and the registry may be mid-change), or the lock stays
 * busy (engine_lock_bounded()), we cannot delete the timers; the signal is then
 * set to SIG_IGN, which discards what is pending and survives exec: the
 * new program starts with that one signal ignored (documented limit).
 *
 * A signal the program ignores stays ignored across exec (POSIX), but one
 * with a handler is reset to SIG_DFL: where the program's view of our
 * signal (the sampling one, or SIGTRAP lingering after a run on it) is
 * SIG_IGN, it is set to SIG_IGN for real just before the exec, so the
 * new program finds it ignored as it would have without us (and not
 * "terminate"); a failed exec puts ours back.
 */
#include "engine/engine.h"
#include "process/process.h"
#include "process/exec_impl.h"
#include "base/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
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
	sigset_t hidden;  /* blocked again for the new program (maskwrap.c) */
	struct ptable *table; /* withdrawn while the exec is tried */
};

/* Room for the program's own instances when no marker can be queued. */
#define REQUEUE_MAX 32

/* The siginfo that ends a pass over this thread's queue: its value is
 * this address, unique to this copy of the library. */
static const char requeue_tag = 'r';

static int queue_self(int sig, const siginfo_t *si)
{
	return (int)syscall(SYS_rt_tgsigqueueinfo, (pid_t)getpid(),
	                    (pid_t)syscall(SYS_gettid), sig, si);
}

static int is_marker(const siginfo_t *si)
{
	return si->si_code == SI_QUEUE && si->si_value.sival_ptr == (void *)&requeue_tag &&
	       si->si_pid == getpid();
}

/* The program's instances when there is no marker: kept on the stack
 * (at most one for a standard signal); beyond REQUEUE_MAX, lost. */
struct keep {
	siginfo_t si[REQUEUE_MAX];
	int n;
	unsigned long lost;
};

/*
 * Takes every pending instance of sig on this thread and queues again, in
 * order, those that were not our timers' (a real-time signal queues each
 * one).  A marker queued first ends the pass: what is queued again goes
 * behind it.  Without room for the marker (RLIMIT_SIGPENDING), up to
 * REQUEUE_MAX are kept; what cannot be queued again is counted in
 * profil_stats's exec_lost.
 */
static void drain_pending(int sig)
{
	sigset_t one, old;
	sigemptyset(&one);
	sigaddset(&one, sig);
	fault_real_sigmask(SIG_BLOCK, &one, &old);
	siginfo_t mark, si;
	memset(&mark, 0, sizeof mark);
	mark.si_signo = sig;
	mark.si_code = SI_QUEUE;
	mark.si_pid = getpid();
	mark.si_uid = getuid();
	mark.si_value.sival_ptr = (void *)&requeue_tag;
	int marked = sig >= SIGRTMIN && queue_self(sig, &mark) == 0;
	struct keep k = {.n = 0, .lost = 0};
	struct timespec zero = {0, 0};
	while (sigtimedwait(&one, &si, &zero) == sig) {
		if (marked && is_marker(&si))
			break;
		if (engine_signal_is_sample(&si))
			continue;
		if (marked)
			k.lost += queue_self(sig, &si) != 0;
		else if (k.n < REQUEUE_MAX)
			k.si[k.n++] = si;
		else
			k.lost++;
	}
	for (int i = 0; i < k.n; i++)
		k.lost += queue_self(sig, &k.si[i]) != 0;
	atomic_fetch_add(&profil_pstats.exec_lost, k.lost);
	fault_real_sigmask(SIG_SETMASK, &old, NULL);
}


/* See the header: the program ignores sig, so must the new program. */
static void keep_ignored(struct exec_state *st, int sig)
{
	if (!st->ignored && signal_program_ignores(sig)) {
		signal_ignore(sig, 1);
		st->ignored = sig;
	}
}

static void exec_prepare(struct exec_state *st)
{
	memset(st, 0, sizeof *st);
	if (!sigstate_mine() || getpid() != timers_owner()) {
		/* vfork child, or never profiled: not ours to touch, but the
		 * program's ignored signals stay ignored (a no-op unprofiled) */
		signal_ignore_for_vfork_exec();
		return;
	}
	if (engine_lock_bounded() != 0) {
		/* From a signal handler that interrupted our own code, or one
		 * whose wait could never end: see the header. */
		st->ignored = signal_sampling();
		if (st->ignored)
			signal_ignore(st->ignored, 1);
		return;
	}
	st->locked = 1;
	st->sig = timers_signal();
	if (!st->sig) {
		keep_ignored(st, SIGTRAP); /* handover.c's linger */
		return;
	}
	st->hz = timers_hz();
	/* The expiries this thread passed but was never sent (the kernel
	 * sends them at its tick) are credited now, as at a thread's exit,
	 * or the CPU time since the last tick before an exec would be lost:
	 * most of a short-lived process's (a shell's fork child between fork
	 * and exec).  That blocks the signal; drain_pending() takes what is
	 * queued, then the mask is the program's again. */
	sigset_t before;
	fault_real_sigmask(SIG_BLOCK, NULL, &before);
	/* never sampled: at execve (a histogram needs a program counter),
	 * or, in a ring (profil record), at the [unsampled] marker */
	struct ptable *t = atomic_load(&profil_published);
	threads_settle_locked(t && t->mode == PTABLE_RING ? (uintptr_t)RING_PC_UNSAMPLED
	                                                  : (uintptr_t)exec_real.execve);
	timers_stop();
	drain_pending(st->sig);
	fault_real_sigmask(SIG_SETMASK, &before, NULL);
	/* The new program gets the mask the program set: what a "block
	 * everything" mask was set without is blocked again (maskwrap.c). */
	st->hidden = process_mask_hidden(st->sig);
	if (fault_real_sigmask(SIG_BLOCK, &st->hidden, NULL) != 0)
		sigemptyset(&st->hidden);
	/* No sample may write without fault recovery: withdraw the table and
	 * wait for handlers still writing (samples pending on other threads
	 * then find nothing to write to). */
	st->table = atomic_exchange(&profil_published, (struct ptable *)0);
	inflight_drain();
	fault_uninstall();
	keep_ignored(st, st->sig);
}

/* exec failed: profiling resumes as it was.  Preserves errno. */
static void exec_resume(struct exec_state *st)
{
	int e = errno;
	if (st->ignored)
		signal_ignore(st->ignored, 0);
	if (st->sig)
		fault_real_sigmask(SIG_UNBLOCK, &st->hidden, NULL);
	if (st->sig) {
		fault_install();
		atomic_store(&profil_published, st->table);
		timers_start(st->sig, st->hz); /* on failure: off, as after a fault */
	}
	if (st->locked)
		engine_unlock();
	errno = e;
}

char *const *(*_Atomic exec_env_hook)(const struct exec_target *t, char *const envp[],
                                      char **out, size_t cap);

/* Pointers the environment hook may fill: on the stack, which a vfork
 * child may use (its memory is ours, the stack frame is its own); an
 * environment of more entries than this goes as it is. */
#define ENV_CAP 1024

/* The new program's environment: envp, or the hook's copy in out. */
static char *const *env_for_exec(const struct exec_target *t, char *const envp[], char **out)
{
	char *const *(*hook)(const struct exec_target *, char *const[], char **, size_t) =
		atomic_load(&exec_env_hook);
	char *const *e = hook && envp ? hook(t, envp, out, ENV_CAP) : NULL;
	return e ? e : envp;
}

void (*_Atomic exec_failed_hook)(char *const envp[]);
void (*_Atomic exec_begin_hook)(void);

/* The agent's hook in slot, if set, with errno preserved. */
static void call_hook(void (*_Atomic *slot)(void))
{
	int e = errno;
	void (*hook)(void) = atomic_load(slot);
	if (hook)
		hook();
	errno = e;
}

static void exec_begins(void)
{
	call_hook(&exec_begin_hook);
}

/* The exec, given envp, returned: the program goes on. */
static void exec_failed(char *const envp[])
{
	int e = errno;
	void (*hook)(char *const[]) = atomic_load(&exec_failed_hook);
	if (hook)
		hook(envp);
	errno = e;
}

#define AROUND(target, call) do { \
	struct exec_state st_; \
	struct exec_target t_ = target; \
	char *env_[ENV_CAP]; \
	exec_begins(); \
	exec_prepare(&st_); \
	envp = env_for_exec(&t_, envp, env_); \
	int rc_ = (call); \
	exec_failed(envp); \
	exec_resume(&st_); \
	return rc_; \
} while (0)

int exec_around_execve(const char *path, char *const argv[], char *const envp[])
{
	AROUND(((struct exec_target){AT_FDCWD, path ? path : "", 0}),
	       exec_real.execve(path, argv, envp));
}

int exec_around_execvpe(const char *file, char *const argv[], char *const envp[])
{
	AROUND(((struct exec_target){AT_FDCWD, file ? file : "", 1}),
	       exec_real.execvpe(file, argv, envp));
}

int exec_around_fexecve(int fd, char *const argv[], char *const envp[])
{
	AROUND(((struct exec_target){fd, "", 0}), exec_real.fexecve(fd, argv, envp));
}

int exec_around_execveat(int dirfd, const char *path, char *const argv[],
                         char *const envp[], int flags)
{
	if (!exec_real.execveat) {
		errno = ENOSYS;
		return -1;
	}
	AROUND(((struct exec_target){dirfd, path ? path : "", 0}),
	       exec_real.execveat(dirfd, path, argv, envp, flags));
}
