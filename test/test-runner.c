/*
 * test-runner.c - the runner's own report (issue 9, "the TSan stage skips
 * 32 of 62 tests and its summary does not say so"): a test that cannot
 * run under a tool is reported as skipped, with its reason, and counted
 * apart in the closing line "N passed, N failed, N skipped" that CI reads.
 */
#include "runner.h"

#include <sys/wait.h>
#include <unistd.h>

/* Runs this runner on `names` with PROFIL_TEST_TOOL=tool; its output. */
static void run_runner(const char *tool, const char *names, char *out, size_t size)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	ASSERT(n > 0);
	self[n] = '\0';
	char cmd[8192];
	snprintf(cmd, sizeof cmd, "PROFIL_TEST_TOOL=%s '%s' %s 2>&1", tool, self, names);
	fflush(stdout);
	FILE *p = popen(cmd, "r");
	ASSERT(p);
	size_t got = fread(out, 1, size - 1, p);
	out[got] = '\0';
	int status = pclose(p);
	printf("%s", out);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Under TSan one test skips itself (vfork becomes fork there), the other
 * (bin arithmetic) runs: one passed, one skipped, each named. */
TEST_IMPL(runner_summary_counts_skipped)
{
	char out[4096];
	run_runner("tsan", "interpose_vfork_sigaction bins_edges", out, sizeof out);
	ASSERT(strstr(out, "skip interpose_vfork_sigaction (tsan: "));
	ASSERT(strstr(out, "ok   bins_edges"));
	ASSERT(strstr(out, "\n1 passed, 0 failed, 1 skipped\n"));
	return 0;
}
