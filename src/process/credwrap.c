/*
 * credwrap.c - the program's setuid() family, setgroups(), unshare() and
 * setns(), interposed so that our helper thread never takes part in them.
 *
 * Linux keeps credentials per thread; glibc makes setuid(), setgid(),
 * their e/re/res forms and setgroups() process-wide by sending every
 * thread it knows a signal whose handler makes the same system call, and
 * it aborts the process if one thread's call fails where the caller's
 * succeeded (nptl_setxid.c).  capset(2) is per thread and glibc does not
 * spread it.  So a program that drops privileges the careful way, as
 * setpriv(1) does (PR_SET_KEEPCAPS, setresuid(), capset() on its one
 * thread to raise CAP_SETGID again, setresgid()), aborted under profiling:
 * our sweeper thread (sweeper.c) had lost its effective capabilities at
 * the setresuid() and failed the setresgid() (`profil record setpriv
 * --reuid=nobody --regid=nogroup --clear-groups CMD`: SIGABRT).
 *
 * unshare(CLONE_NEWUSER) and setns() into a user or mount namespace are
 * refused (EINVAL) to a process with more than one thread: `unshare -r`,
 * rootless container tools and nsenter failed under profiling, the
 * sweeper being the second thread.
 *
 * Each of these calls therefore stops the sweeper, makes the call with
 * only the program's threads in the process, and starts the sweeper again,
 * which then inherits the caller's credentials and capabilities as they
 * are after the call.  The engine lock is held throughout, so nothing
 * restarts the sweeper in between.  From a signal handler that
 * interrupted our own code (the lock is this thread's), or while the lock
 * stays busy, the call is made as it is.  unshare() and setns() call the
 * agent's hook before all that (ns_change_hook, set by agent/ only;
 * clonewrap.c calls it for a clone() with a namespace flag): what the
 * process sees is about to change (below).
 *
 * Only in the shared library and the agent (not libprofil.a): a static
 * program has no other definition to pass the call to (glibc's static
 * setgroups is not a weak symbol), so there the calls are glibc's and
 * the limit is documented.  Not in a vfork child: straight to libc.
 */
#include "process/process.h"
#include "engine/engine.h"

#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

static struct {
	int (*setuid)(uid_t), (*setgid)(gid_t), (*seteuid)(uid_t), (*setegid)(gid_t);
	int (*setreuid)(uid_t, uid_t), (*setregid)(gid_t, gid_t);
	int (*setresuid)(uid_t, uid_t, uid_t), (*setresgid)(gid_t, gid_t, gid_t);
	int (*setgroups)(size_t, const gid_t *);
	int (*unshare)(int), (*setns)(int, int);
} real;

/* dlsym at load (not async-signal-safe, and these calls are); again on
 * first use if another library's constructor came first. */
__attribute__((constructor)) static void cred_init(void)
{
	if (real.setgroups)
		return;
	real.setuid = (int (*)(uid_t))dlsym(RTLD_NEXT, "setuid");
	real.setgid = (int (*)(gid_t))dlsym(RTLD_NEXT, "setgid");
	real.seteuid = (int (*)(uid_t))dlsym(RTLD_NEXT, "seteuid");
	real.setegid = (int (*)(gid_t))dlsym(RTLD_NEXT, "setegid");
	real.setreuid = (int (*)(uid_t, uid_t))dlsym(RTLD_NEXT, "setreuid");
	real.setregid = (int (*)(gid_t, gid_t))dlsym(RTLD_NEXT, "setregid");
	real.setresuid = (int (*)(uid_t, uid_t, uid_t))dlsym(RTLD_NEXT, "setresuid");
	real.setresgid = (int (*)(gid_t, gid_t, gid_t))dlsym(RTLD_NEXT, "setresgid");
	real.unshare = (int (*)(int))dlsym(RTLD_NEXT, "unshare");
	real.setns = (int (*)(int, int))dlsym(RTLD_NEXT, "setns");
	real.setgroups = (int (*)(size_t, const gid_t *))dlsym(RTLD_NEXT, "setgroups");
}


/* Before the call: 1 with the lock held and the sweeper stopped if it ran
 * (*paused), 0 when the call is to be made as it is. */
static int before(int *paused)
{
	*paused = 0;
	if (!sigstate_mine() || engine_lock_bounded() != 0)
		return 0;
	*paused = sweeper_pause();
	return 1;
}

static int after(int locked, int paused, int rc)
{
	int e = errno;
	if (paused)
		sweeper_resume();
	if (locked)
		engine_unlock();
	errno = e;
	return rc;
}

#define MISSING(fn) (!real.fn && (cred_init(), !real.fn))

/* first: what runs before the call (the namespace hook, below). */
#define WRAP_FIRST(fn, params, args, first) \
	API int fn params \
	{ \
		if (MISSING(fn)) { \
			errno = ENOSYS; \
			return -1; \
		} \
		first; \
		int paused, locked = before(&paused); \
		return after(locked, paused, real.fn args); \
	}

/*
 * A change of credentials may take away what the agent reads by a path
 * (its own file, for the programs this process execs: a daemon started
 * as root from a build in /root drops to nobody): the agent is told
 * first, while it still may (agent/selfreach.c).
 */
#define WRAP_CREDS(fn, params, args) \
	WRAP_FIRST(fn, params, args, process_ns_changing(PROCESS_CREDS_CHANGING))

WRAP_CREDS(setuid, (uid_t u), (u))
WRAP_CREDS(setgid, (gid_t g), (g))
WRAP_CREDS(seteuid, (uid_t u), (u))
WRAP_CREDS(setegid, (gid_t g), (g))
WRAP_CREDS(setreuid, (uid_t r, uid_t e), (r, e))
WRAP_CREDS(setregid, (gid_t r, gid_t e), (r, e))
WRAP_CREDS(setresuid, (uid_t r, uid_t e, uid_t s), (r, e, s))
WRAP_CREDS(setresgid, (gid_t r, gid_t e, gid_t s), (r, e, s))
WRAP_CREDS(setgroups, (size_t n, const gid_t *list), (n, list))
/*
 * A namespace change may hide what the agent reaches by a path (the
 * recording's directory, under a mount namespace's own /dev/shm) or by
 * an abstract name (its socket, under a network namespace of its own):
 * the agent is told first, while both are still seen (agent/ringreach.c).
 */
void (*_Atomic ns_change_hook)(int flags);

void process_ns_changing(int flags)
{
	void (*hook)(int) = atomic_load(&ns_change_hook);
	if (hook) {
		int e = errno;
		hook(flags);
		errno = e;
	}
}

WRAP_FIRST(unshare, (int flags), (flags), process_ns_changing(flags))
WRAP_FIRST(setns, (int fd, int nstype), (fd, nstype),
           process_ns_changing(nstype ? nstype : CLONE_NEWNS | CLONE_NEWNET))
