/*
 * test-link.c - libprofil linked in the other ways a program may link it
 * (issue 9, items 9 and 10): libprofil.a into a static and into a dynamic
 * program, and libprofil.so pulled in by a library that is dlopen()ed and
 * dlclose()d; and preloaded, with a constructor calling profil(), into
 * python3 (issue 9's headline).  The programs are in test/link/, built
 * next to the runner.
 */
#include "runner.h"

#include <stdlib.h>
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
		/* reported as skipped, not passed (runner.h) */
		snprintf(test_skip_reason, sizeof test_skip_reason, "%s",
		         "no static-prog (no libc.a, or a sanitizer build)");
		printf("skipped: %s\n", test_skip_reason);
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

/*
 * Issue 9's headline: python3 profiling itself (libprofil.so and
 * libselfprof.so preloaded, profil() called from a constructor) starts a
 * subprocess.  CPython's _posixsubprocess child is a vfork() child that
 * resets SIGPROF through our sigaction interposer in the parent's memory;
 * the parent's timers were then moved to a real-time signal it had no
 * handler for, and it was killed by it, every time.
 */
TEST_IMPL(link_preloaded_python_vfork_subprocess_survives)
{
	if (skip_under("asan", "the sanitizer runtime must come first in a preload"))
		return 0;
	if (skip_under("tsan", "the sanitizer runtime must come first in a preload"))
		return 0;
	if (system("python3 -c pass >/dev/null 2>&1") != 0) {
		snprintf(test_skip_reason, sizeof test_skip_reason, "no python3");
		return 0;
	}
	char dir[4096], preload[9000], log[] = "/tmp/profil-selfprof-XXXXXX";
	ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
	ASSERT(n > 0);
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';
	snprintf(preload, sizeof preload, "%s/../libprofil.so %s/libselfprof.so", dir, dir);
	int fd = mkstemp(log);
	ASSERT(fd >= 0);
	close(fd);
	fflush(stdout);
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		setenv("LD_PRELOAD", preload, 1);
		setenv("SELFPROF_LOG", log, 1);
		execlp("python3", "python3", "-c",
		       "import subprocess, sys\n"
		       "r = subprocess.run(['true'])\n"
		       "sum(i * i for i in range(2000000))\n"
		       "sys.exit(r.returncode)\n", (char *)NULL);
		_exit(127);
	}
	int status;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	/* the line python wrote at exit: its pid, ticks taken, ticks in bins */
	long lpid = 0;
	unsigned long long ticks = 0, binned = 0, python_ticks = 0;
	FILE *f = fopen(log, "r");
	ASSERT(f);
	while (fscanf(f, "%ld %llu %llu", &lpid, &ticks, &binned) == 3)
		if (lpid == (long)pid)
			python_ticks = ticks;
	fclose(f);
	unlink(log);
	if (WIFSIGNALED(status))
		FAIL_AT("python3 killed by signal %d", WTERMSIG(status));
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	printf("python3 took %llu ticks while profiling itself\n", python_ticks);
	ASSERT(python_ticks > 0);
	return 0;
}
