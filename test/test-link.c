/*
 * test-link.c - libprofil linked in the other ways a program may link it
 * (issue 9, items 9 and 10): libprofil.a into a static and into a dynamic
 * program, and libprofil.so pulled in by a library that is dlopen()ed and
 * dlclose()d.  The programs are in test/link/, built next to the runner.
 */
#include "runner.h"

#include <sys/wait.h>
#include <unistd.h>

/* Runs the helper `name` from the runner's directory with one optional
 * argument (a file of the same directory); its exit status, or -1 if the
 * helper was not built. */
static int run_helper(const char *name, const char *arg_file)
{
	char dir[4096], path[4200], arg[4200];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	ASSERT(n > 0);
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';
	snprintf(path, sizeof path, "%s/%s", dir, name);
	snprintf(arg, sizeof arg, "%s/%s", dir, arg_file ? arg_file : "");
	if (access(path, X_OK) != 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		execl(path, path, arg_file ? arg : (char *)NULL, (char *)NULL);
		_exit(127);
	}
	int status;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		FAIL_AT("%s killed by signal %d", name, WTERMSIG(status));
	return WEXITSTATUS(status);
}

TEST_IMPL(link_static_program)
{
	int rc = run_helper("static-prog", NULL);
	if (rc == -1) {
		printf("skipped: no static-prog (no libc.a, or a sanitizer build)\n");
		return 0;
	}
	ASSERT_EQ(rc, 0);
	return 0;
}

TEST_IMPL(link_archive_into_dynamic_program)
{
	/* its children are profiled: our fork handler starts the sweeper
	 * thread again there, which TSan refuses after a multi-threaded fork */
	if (skip_under("tsan", "TSan does not support threads after a multi-threaded fork"))
		return 0;
	ASSERT_EQ(run_helper("archive-prog", NULL), 0);
	return 0;
}

/* A thread libprofil made while profiling outlives the dlclose() of the
 * library that pulled libprofil in, then exits; the program then creates
 * threads and forks. */
TEST_IMPL(link_dlclose_after_stop)
{
	ASSERT_EQ(run_helper("dlclose-prog", "libprofil-user.so"), 0);
	return 0;
}
