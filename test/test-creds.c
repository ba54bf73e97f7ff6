/*
 * test-creds.c - credentials changed while profiled.  A program that
 * drops privileges the careful way, as setpriv(1) does (PR_SET_KEEPCAPS,
 * setresuid(), capset() on its one thread to raise CAP_SETGID again,
 * setresgid(), setgroups()), aborted: glibc makes the calls on every
 * thread it knows and aborts if one fails, and our sweeper thread had
 * lost its effective capabilities at the setresuid() (capset() is per
 * thread).  src/process/credwrap.c keeps the sweeper out of those calls.
 */
#include "safety.h"

#include <errno.h>
#include <grp.h>
#include <sched.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* Every permitted capability made effective, on this thread only. */
static int raise_effective(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) != 0)
		return -1;
	d[0].effective = d[0].permitted;
	d[1].effective = d[1].permitted;
	return (int)syscall(SYS_capset, &h, d);
}

static void drop_child(void)
{
	static unsigned short counter[1];
	if (profil(counter, sizeof counter, 0, 2) != 0)
		_exit(2);
	burn(0.05); /* the sweeper is up and has swept */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0)
		_exit(3);
	if (setresuid(65534, 65534, 65534) != 0)
		_exit(4);
	if (raise_effective() != 0)
		_exit(5);
	if (setresgid(65534, 65534, 65534) != 0 || setgroups(0, NULL) != 0)
		_exit(6);
	unsigned short before = counter[0];
	burn(0.2); /* profiling goes on */
	unsigned short after = counter[0];
	profil(no_buf, 0, 0, 0);
	if (getuid() != 65534 || getgid() != 65534)
		_exit(7);
	_exit(after > before ? 0 : 8);
}

TEST_IMPL(creds_drop_privileges_with_keepcaps)
{
	if (getuid() != 0) {
		snprintf(test_skip_reason, sizeof test_skip_reason, "needs root: it drops to uid 65534");
		printf("skipped: %s\n", test_skip_reason);
		return 0;
	}
	if (skip_under("valgrind", "valgrind's own threads take no part in glibc's setxid") ||
	    skip_under("tsan", "TSan's background thread (made with a process's first thread) takes part "
	               "in glibc's setxid without the raised capabilities: glibc aborts"))
		return 0;
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0)
		drop_child();
	int status;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		printf("child killed by signal %d\n", WTERMSIG(status));
	else
		printf("child exit status %d\n", WEXITSTATUS(status));
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	return 0;
}

/* unshare(CLONE_NEWUSER) is refused to a process with more than one
 * thread (EINVAL): `unshare -r` failed under profiling, our sweeper being
 * the second.  The child burns, enters a new user namespace, burns on. */
static void userns_child(int profiled)
{
	static unsigned short counter[1];
	if (profiled && profil(counter, sizeof counter, 0, 2) != 0)
		_exit(2);
	burn(0.05); /* the sweeper is up and has swept */
	if (unshare(CLONE_NEWUSER) != 0)
		_exit(errno == EINVAL ? 3 : 4);
	unsigned short before = counter[0];
	burn(0.2);
	unsigned short after = counter[0];
	if (profiled)
		profil(no_buf, 0, 0, 0);
	_exit(!profiled || after > before ? 0 : 5);
}

static int child_status(int profiled)
{
	pid_t pid = fork();
	if (pid == 0)
		userns_child(profiled);
	int status;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_IMPL(creds_unshare_user_namespace)
{
	if (skip_under("valgrind", "valgrind runs threads of its own") ||
	    skip_under("tsan", "TSan's background thread makes the process multi-threaded"))
		return 0;
	int unprofiled = child_status(0);
	if (unprofiled != 0) {
		snprintf(test_skip_reason, sizeof test_skip_reason,
		         "user namespaces refused here even unprofiled (child status %d)", unprofiled);
		printf("skipped: %s\n", test_skip_reason);
		return 0;
	}
	int profiled = child_status(1);
	printf("profiled child: status %d (3: unshare refused, EINVAL)\n", profiled);
	ASSERT_EQ(profiled, 0);
	return 0;
}
