/*
 * nshold.c - the recording's directory is held by a descriptor before the
 * process changes what it sees (agent/ringreach.c says why and how it is
 * used): at a namespace change made through the C library (unshare(),
 * setns(), clone() with a namespace flag: process/credwrap.c's hook), and
 * at mount() and chroot(), which a sandbox made by a raw clone system
 * call (bubblewrap) calls in its child before its pivot_root(), while the
 * directory is still seen by its path.
 *
 * A hold is one open() the first time; nothing at all once held, or in a
 * process the agent does not sample.  mount() and chroot() here run in
 * the program's threads, maybe in a vfork or raw clone child, whose
 * writes of the held descriptor's number (ringreach.c) go to memory it
 * may share with its parent: there they name a descriptor the parent
 * does not have, which every use checks (device and inode) and ignores.
 */
#include "agent.h"
#include "../src/process/process.h"

#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>
#include <sys/mount.h>

static void hold_now(void)
{
	int e = errno;
	if (agent_running()) {
		ringreach_hold(agent_dir);
		selfreach_hold(); /* and the agent's file, for execs (selfreach.c) */
	}
	errno = e;
}

void agent_ns_changing(int flags)
{
	if (flags & (CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWUSER | CLONE_NEWPID))
		hold_now();
	if ((flags & PROCESS_CREDS_CHANGING) && agent_running()) {
		int e = errno;
		selfreach_creds_changing(); /* the agent's file: the directory
		                             * is reached by the recorder's socket */
		errno = e;
	}
}

void *agent_next(void *_Atomic *slot, const char *name)
{
	void *fn = atomic_load(slot);
	if (!fn) {
		fn = dlsym(RTLD_NEXT, name);
		atomic_store(slot, fn);
	}
	return fn;
}

__attribute__((visibility("default"))) int mount(const char *source, const char *target,
                                                 const char *type, unsigned long flags,
                                                 const void *data)
{
	static void *_Atomic real;
	int (*fn)(const char *, const char *, const char *, unsigned long, const void *) =
		(int (*)(const char *, const char *, const char *, unsigned long,
	                 const void *))agent_next(&real, "mount");
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	hold_now();
	return fn(source, target, type, flags, data);
}

__attribute__((visibility("default"))) int chroot(const char *path)
{
	static void *_Atomic real;
	int (*fn)(const char *) = (int (*)(const char *))agent_next(&real, "chroot");
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	hold_now();
	return fn(path);
}
