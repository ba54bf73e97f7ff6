/*
 * runner.c - runs every test in a process of its own.
 *
 *   run-tests            all tests, one line each, then
 *                        "N passed, N failed, N skipped"
 *   run-tests NAME...    only those
 *   run-tests --one NAME run NAME in this process (what the runner execs);
 *                        exit status 0 passed, TEST_SKIP_STATUS skipped
 *
 * A test that called skip_under() is skipped, not passed: it left out
 * checks its tool cannot make.  Its reason comes back to the runner
 * through a pipe whose descriptor the child finds in PROFIL_TEST_SKIP_FD.
 *
 * Each test is a fresh exec of this binary, so signal dispositions, timers
 * and threads never leak from one test into the next.  A test that does
 * not finish within TEST_TIMEOUT seconds is killed and fails.  The runner
 * enforces that itself rather than with alarm() in the child: tests
 * install SIGALRM handlers of their own (the signal storms), and a hung
 * grandchild would outlive its parent.  So each test leads a process
 * group of its own, and the whole group is killed with SIGKILL at the
 * deadline, and after the test ends (strays it forgot to reap).
 */
#include "runner.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef TEST_TIMEOUT
#define TEST_TIMEOUT 120
#endif

char test_skip_reason[256];

enum outcome { PASSED, FAILED, SKIPPED };

#define TEST(name) int run_test_##name(void);
#include "list.h"
#undef TEST

struct test {
	const char *name;
	int (*fn)(void);
};

static const struct test tests[] = {
#define TEST(name) {#name, run_test_##name},
#include "list.h"
#undef TEST
};
#define NTESTS (sizeof tests / sizeof tests[0])

int function_range(void *fn, unsigned long *lo, unsigned long *hi)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	if (!dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || sym->st_size == 0)
		return -1;
	*lo = (unsigned long)info.dli_saddr;
	*hi = *lo + sym->st_size;
	return 0;
}

SPIN_FN(calibrate_spin, 1)

unsigned long iters_for(double seconds)
{
	/* atomic: threads of one test may calibrate at once; any of their
	 * results will do */
	static _Atomic double per_iter;
	if (per_iter == 0) {
		unsigned long n = 1000000;
		double t0, t;
		for (;;) {
			t0 = cpu_thread();
			calibrate_spin(n);
			t = cpu_thread() - t0;
			if (t > 0.005) /* CPU time: precise to microseconds */
				break;
			n *= 4;
		}
		/* The fastest of a few runs: on a VM whose host is busy, CPU
		 * time can include time the vCPU was not running (it once
		 * read 3 times too long, and a thread meant to spin 0.3 s
		 * spun 0.1 s: threads_reused_tid_covered failed in CI).
		 * run_here() calibrates before the test, so that no sample
		 * window of a test holds the calibration. */
		for (int k = 0; k < 4; k++) {
			t0 = cpu_thread();
			calibrate_spin(n);
			double tk = cpu_thread() - t0;
			if (tk > 0 && tk < t)
				t = tk;
		}
		per_iter = t / (double)n;
	}
	return (unsigned long)(seconds / per_iter);
}

static const struct test *lookup(const char *name)
{
	for (size_t i = 0; i < NTESTS; i++)
		if (strcmp(tests[i].name, name) == 0)
			return &tests[i];
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The child's skip reason, read without blocking: a grandchild may still
 * hold the pipe open. */
static void read_reason(int fd, char *buf, size_t size)
{
	ssize_t n = read(fd, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

static pid_t start_child(const char *self, const struct test *t, int skip_fd)
{
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		/* The test has a process group of its own, out of reach of a
		 * kill of the runner's: when the runner dies (a CI stage's
		 * timeout, a ^C), the test dies with it instead of spinning
		 * on (a hung test once ate a core for twenty minutes so). */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		char fd[16];
		snprintf(fd, sizeof fd, "%d", skip_fd);
		setenv("PROFIL_TEST_SKIP_FD", fd, 1);
		setpgid(0, 0);
		execl(self, self, "--one", t->name, (char *)NULL);
		perror("exec");
		_exit(127);
	}
	return pid;
}

/* Waits for the test; at the deadline kills its process group and
 * reaps it.  Returns 1 if it had to. */
static int wait_or_kill(pid_t pid, double deadline, int *status)
{
	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR) {
			*status = 0;
			return 0;
		}
		if (now() > deadline) {
			/* what was still running, for the log: which process hung */
			char ps[128];
			snprintf(ps, sizeof ps, "ps -e -o pgid=,pid=,stat=,etime=,args= | awk '$1 == %d' >&2",
			         (int)pid);
			fflush(stdout);
			if (system(ps) != 0)
				fprintf(stderr, "(no process list)\n");
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, status, 0) < 0 && errno == EINTR)
				;
			return 1;
		}
		struct timespec poll = {0, 10 * 1000 * 1000};
		nanosleep(&poll, NULL);
	}
}

/* Runs one test in a child process. */
static enum outcome run_isolated(const char *self, const struct test *t)
{
	double t0 = now();
	int p[2];
	if (pipe(p) != 0 || fcntl(p[0], F_SETFL, O_NONBLOCK) != 0) {
		perror("pipe");
		return FAILED;
	}
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	pid_t pid = start_child(self, t, p[1]);
	close(p[1]);
	if (pid < 0) {
		perror("fork");
		close(p[0]);
		return FAILED;
	}
	setpgid(pid, pid); /* as the child does: whichever runs first */
	int status;
	int timed_out = wait_or_kill(pid, t0 + TEST_TIMEOUT, &status);
	kill(-pid, SIGKILL);
	double secs = now() - t0;
	char why[256];
	read_reason(p[0], why, sizeof why);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("ok   %-40s %6.2fs\n", t->name, secs);
		return PASSED;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP_STATUS) {
		printf("skip %s (%s)\n", t->name, why[0] ? why : "no reason given");
		return SKIPPED;
	}
	if (timed_out)
		printf("FAIL %-40s timeout: killed after %d s\n", t->name, TEST_TIMEOUT);
	else if (WIFSIGNALED(status))
		printf("FAIL %-40s killed by signal %d (%s)\n", t->name, WTERMSIG(status),
		       strsignal(WTERMSIG(status)));
	else
		printf("FAIL %-40s exit status %d\n", t->name, WEXITSTATUS(status));
	return FAILED;
}

/* --one: the test itself; a skip is reported to the runner, if any. */
static int run_here(const struct test *t)
{
	/* Calibrated now, outside the test's sample windows (some burn
	 * inside profiling and count where the samples fell); not under
	 * valgrind, where it costs a second and few tests burn. */
	const char *tool = getenv("PROFIL_TEST_TOOL");
	if (!tool || strcmp(tool, "valgrind") != 0)
		(void)iters_for(0);
	int rc = t->fn();
	if (rc != 0 || !test_skip_reason[0])
		return rc;
	const char *fd = getenv("PROFIL_TEST_SKIP_FD");
	if (fd && *fd) {
		fflush(stdout);
		ssize_t n = write(atoi(fd), test_skip_reason, strlen(test_skip_reason));
		(void)n;
	}
	return TEST_SKIP_STATUS;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--one") == 0) {
		const struct test *t = lookup(argv[2]);
		if (!t) {
			fprintf(stderr, "no test named %s\n", argv[2]);
			return 2;
		}
		return run_here(t);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	int count[3] = {0, 0, 0};
	if (argc > 1) {
		for (int i = 1; i < argc; i++) {
			const struct test *t = lookup(argv[i]);
			if (!t) {
				printf("FAIL %-40s no such test\n", argv[i]);
				count[FAILED]++;
				continue;
			}
			count[run_isolated("/proc/self/exe", t)]++;
		}
	} else {
		for (size_t i = 0; i < NTESTS; i++)
			count[run_isolated("/proc/self/exe", &tests[i])]++;
	}
	printf("%d passed, %d failed, %d skipped\n", count[PASSED], count[FAILED], count[SKIPPED]);
	return count[FAILED] ? 1 : 0;
}
