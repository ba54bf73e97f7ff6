/*
 * test-safety-procs.c - issue 3, items 3 and 4: fork and exec while
 * profiled.
 */
#include "safety.h"

#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/wait.h>

/* Waits for pid up to `secs`, killing it after; returns its status. */
static int wait_bounded(pid_t pid, double secs)
{
	double end = mono_now() + secs;
	int status;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		ASSERT(r >= 0);
		if (r == pid)
			return status;
		if (mono_now() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			FAIL_AT("child %d hung (killed)", (int)pid);
		}
		usleep(2000);
	}
}

/* fork(), stdio flushed first; in the child, profiling is on (it exits
 * with fail_status when it cannot be).  fork's value. */
static pid_t fork_profiling(int fail_status)
{
	fflush(NULL); /* the child's exit flushes its copy of stdio */
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		static unsigned short buf[2];
		if (profil(buf, sizeof buf, 0, 2) != 0)
			_exit(fail_status);
	}
	return pid;
}

/* The child: its counts, from its copy of buf, match its CPU time. */
static int child_checks(unsigned short *buf, unsigned int hz)
{
	if (profil_hz() != hz)
		return 10;
	struct profil_stats st;
	if (profil_get_stats(&st) != 0 || !ENGINE_RUNNING(st.engine) ||
	    st.threads < 1)
		return 11;
	unsigned short c0 = buf[0];
	double t0 = cpu_process();
	struct spinners sp;
	spinners_start(&sp, 2); /* threads the child creates are sampled */
	burn(0.15);
	spinners_stop(&sp);
	double cpu = cpu_process() - t0;
	double ratio = (buf[0] - c0) / (cpu * hz);
	fprintf(stderr, "child %d: %.3f CPU s, %u samples, ratio %.3f\n", (int)getpid(), cpu, (unsigned)(buf[0] - c0), ratio);
	/* each of the child's 3 threads may lose the expiries of its last
	 * kernel tick (at most 10 ms: CONFIG_HZ >= 100) */
	return fabs(ratio - 1.0) < 0.03 + 3 * 0.010 / cpu ? 0 : 12;
}

/* Item 3: fork from a 256 MiB process while four threads are sampled. */
TEST_IMPL(safety_fork)
{
	if (skip_under("tsan", "TSan does not support threads after a multi-threaded fork"))
		return 0;
	size_t heap = (size_t)256 << 20;
	char *big = malloc(heap);
	ASSERT(big);
	memset(big, 1, heap);
	const unsigned int hz = 1500;
	ASSERT_OK(profil_set_hz(hz));
	static unsigned short buf[2]; /* ~15000 samples: far from 65535 */
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	struct spinners sp;
	spinners_start(&sp, 3);
	double t0 = cpu_process();
	double worst = 0;
	for (int i = 0; i < 3; i++) {
		burn(0.05);
		double f0 = mono_now();
		pid_t pid = fork();
		ASSERT(pid >= 0);
		if (pid == 0)
			_exit(child_checks(buf, hz));
		double took = mono_now() - f0;
		worst = took > worst ? took : worst;
		int status = wait_bounded(pid, 20);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			FAIL_AT("child status %#x", status);
	}
	spinners_stop(&sp);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	double cpu = cpu_process() - t0;
	double ratio = buf[0] / (cpu * hz);
	printf("parent: %.3f CPU s, ratio %.3f, slowest fork %.1f ms\n", cpu, ratio, worst * 1e3);
	ASSERT_NEAR(ratio, 1.0, 0.1);
	ASSERT(worst < 2.0); /* no livelock */
	free(big);
	return 0;
}

/*
 * Issue 9: a thread other than the main one forks.  The child's one thread
 * is then a pthread whose start routine returns, after which glibc ends
 * the process (exit(0) after the last thread): the sweeper the engine
 * restarted in the child must not keep it alive.  The child exits nonzero
 * itself if it is not profiled; returning means status 0.
 */
struct nonmain_fork {
	unsigned short *buf;
	int status;
};

static void *fork_from_thread(void *p)
{
	struct nonmain_fork *f = p;
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct profil_stats st;
		if (profil_get_stats(&st) != 0 || !ENGINE_RUNNING(st.engine) || st.threads < 1)
			_exit(11);
		unsigned short c0 = f->buf[0];
		burn(0.05);
		if (f->buf[0] == c0)
			_exit(12); /* not sampled */
		return NULL;
	}
	burn(0.02);
	f->status = wait_bounded(pid, 10);
	return NULL;
}

TEST_IMPL(safety_fork_from_nonmain_thread)
{
	if (skip_under("tsan", "TSan does not support threads after a multi-threaded fork"))
		return 0;
	static unsigned short buf[2];
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	struct nonmain_fork f = {buf, -1};
	pthread_t t;
	fflush(NULL); /* the child's exit flushes its copy of stdio */
	ASSERT_EQ(pthread_create(&t, NULL, fork_from_thread, &f), 0);
	ASSERT_EQ(pthread_join(t, NULL), 0);
	if (!WIFEXITED(f.status) || WEXITSTATUS(f.status) != 0)
		FAIL_AT("child status %#x", f.status);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	return 0;
}

/* The same end without a fork: the main thread calls pthread_exit() while
 * profiling is on, and the process ends when its other thread does. */
static void *burn_briefly(void *unused)
{
	(void)unused;
	burn(0.05);
	return NULL;
}

TEST_IMPL(safety_main_pthread_exit)
{
	/* A TSan build does not interpose pthread_create (threads.c), so the
	 * sweeper cannot count the program's threads and waits for every
	 * listed one, TSan's background thread included, which never ends. */
	if (skip_under("tsan", "no pthread_create trampoline to count threads; "
	               "the helper would wait for TSan's own thread"))
		return 0;
	pid_t pid = fork_profiling(11);
	if (pid == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, burn_briefly, NULL) != 0)
			_exit(12);
		pthread_exit(NULL);
	}
	int status = wait_bounded(pid, 10);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		FAIL_AT("child status %#x", status);
	return 0;
}

/* A child forked while another thread was inside dl_iterate_phdr() (a
 * dlopen, a C++ exception's unwinding do the same) inherits the loader's
 * lock held by a thread it does not have: starting profiling there must
 * not take that lock.  The engine once asked dl_iterate_phdr whether the
 * program was Go's at every start, and the stress mix's forked children
 * hung in profil() for ever. */
static atomic_int in_phdr_walk;

static int slow_phdr_callback(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info, (void)size, (void)data;
	atomic_store(&in_phdr_walk, 1);
	usleep(500 * 1000);
	return 1;
}

static void *hold_loader_lock(void *unused)
{
	(void)unused;
	dl_iterate_phdr(slow_phdr_callback, NULL);
	return NULL;
}

TEST_IMPL(safety_fork_while_loader_locked)
{
	if (skip_under("tsan", "TSan does not support threads after a multi-threaded fork"))
		return 0;
	pthread_t t;
	ASSERT_EQ(pthread_create(&t, NULL, hold_loader_lock, NULL), 0);
	while (!atomic_load(&in_phdr_walk))
		usleep(1000);
	pid_t pid = fork_profiling(2);
	if (pid == 0) {
		burn(0.05);
		_exit(profil(no_buf, 0, 0, 0) != 0 ? 3 : 0);
	}
	int status = wait_bounded(pid, 10);
	ASSERT_EQ(pthread_join(t, NULL), 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		FAIL_AT("child status %#x", status);
	return 0;
}

/* One way of running /bin/true in the child, by iteration number. */
static void exec_true(int how)
{
	static char *const argv[] = {"true", NULL};
	switch (how % 8) {
	case 0: execl("/bin/true", "true", (char *)NULL); break;
	case 1: execv("/bin/true", argv); break;
	case 2: execvp("true", argv); break;
	case 3: execlp("true", "true", (char *)NULL); break;
	case 4: execle("/bin/true", "true", (char *)NULL, environ); break;
	case 5: execve("/bin/true", argv, environ); break;
	case 6: {
		int fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
		fexecve(fd, argv, environ);
		break;
	}
	default: execvpe("true", argv, environ); break;
	}
	_exit(127);
}

/* A child that spins with the signal blocked until one is pending, then
 * execs grep to check that the new program has nothing pending. */
static void exec_with_pending(int sig)
{
	sigset_t one, pend;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_BLOCK, &one, NULL);
	double end = mono_now() + 1.0;
	do {
		burn(0.0005);
		sigpending(&pend);
	} while (!sigismember(&pend, sig) && mono_now() < end);
	if (!sigismember(&pend, sig))
		_exit(20);
	execl("/bin/grep", "grep", "-q", "^SigPnd:[[:space:]]*0*$", "/proc/self/status",
	      (char *)NULL);
	_exit(127);
}

/* A child whose program ignores SIGSEGV: the new program must find it
 * ignored (exec keeps SIG_IGN), not reset by the fault handler we held. */
static void exec_with_segv_ignored(void)
{
	static unsigned short b[2];
	signal(SIGSEGV, SIG_IGN);
	if (profil(b, sizeof b, 0, 2) != 0) /* installs ours over SIG_IGN */
		_exit(21);
	burn(0.001);
	/* The new program is sh, which keeps what it finds ignored; grep,
	 * its child, reads sh's status (grep itself catches SIGSEGV).
	 * SIGSEGV is bit 10: the third hex digit from the right has 4 set. */
	execl("/bin/sh", "sh", "-c",
	      "grep -Eq '^SigIgn:[[:space:]]*[0-9a-f]*[4567cdef][0-9a-f]{2}$' /proc/$$/status",
	      (char *)NULL);
	_exit(127);
}

/* Item 4: hundreds of execs at the highest rate; none is killed, none
 * starts with a profiling signal pending. */
TEST_IMPL(safety_exec)
{
	if (skip_under("valgrind", "valgrind does not follow 400 execs quickly") ||
	    skip_under("tsan", "TSan's runtime in a multi-threaded fork child fails the exec checks"))
		return 0;
	burn(0); /* calibrate once here, not in each of the 400 children */
	ASSERT_OK(profil_set_hz(PROFIL_HZ_MAX));
	static unsigned short buf[2];
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	int sig = st.signal;
	struct spinners sp;
	spinners_start(&sp, 2);
	int killed = 0, bad = 0, n = 400;
	for (int i = 0; i < n; i++) {
		pid_t pid = i % 10 == 9 ? vfork() : fork();
		ASSERT(pid >= 0);
		if (pid == 0) {
			if (i % 10 == 9)
				execl("/bin/true", "true", (char *)NULL), _exit(127);
			if (i % 5 == 0)
				exec_with_pending(sig);
			if (i % 5 == 1)
				exec_with_segv_ignored();
			burn(0.0003 * (i % 7));
			exec_true(i);
		}
		int status = wait_bounded(pid, 10);
		if (WIFSIGNALED(status)) {
			killed++;
			printf("child %d killed by signal %d\n", i, WTERMSIG(status));
		} else if (WEXITSTATUS(status) != 0) {
			bad++;
			printf("child %d (%s) exit status %d\n", i,
			       i % 5 == 0 ? "pending check" : i % 5 == 1 ? "SIG_IGN check" : "true",
			       WEXITSTATUS(status));
		}
	}
	/* a failed exec leaves profiling running */
	ASSERT_OK(profil_get_stats(&st));
	unsigned long long t0 = st.ticks;
	ASSERT_ERR(execl("/nonexistent/program", "x", (char *)NULL), ENOENT);
	ASSERT_OK(profil_get_stats(&st));
	ASSERT(ENGINE_RUNNING(st.engine));
	ASSERT_EQ(st.signal, sig);
	ASSERT(st.threads >= 3);
	burn(0.05);
	ASSERT_OK(profil_get_stats(&st));
	ASSERT(st.ticks > t0 + 1000);
	spinners_stop(&sp);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("%d execs: %d killed by a signal, %d failed\n", n, killed, bad);
	ASSERT_EQ(killed, 0);
	ASSERT_EQ(bad, 0);
	return 0;
}

/* A child that profiles (mode 0: on the default engine; 1: on timers;
 * 2: on the default engine, stopped before), makes the program's view of
 * the sampling signal SIG_IGN, and execs sh, which checks that it starts
 * with that signal ignored: exec keeps SIG_IGN, and resets a handler
 * (ours, or SIGTRAP's lingering one after a run on it) to SIG_DFL, which
 * for SIGTRAP and the real-time signals is death. */
static void exec_sampling_ignored(int mode)
{
	static unsigned short b[2];
	if (mode == 1)
		setenv("PROFIL_ENGINE", "timer", 1);
	if (profil_set_hz(1000) != 0 || profil(b, sizeof b, 0, 2) != 0)
		_exit(21);
	struct profil_stats st;
	if (profil_get_stats(&st) != 0 || st.signal <= 0)
		_exit(22);
	burn(0.02);
	if (mode == 2 && profil(no_buf, 0, 0, 0) != 0)
		_exit(24);
	if (signal(st.signal, SIG_IGN) == SIG_ERR)
		_exit(23);
	burn(0.02);
	char script[256];
	snprintf(script, sizeof script,
	         "m=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status); "
	         "[ $(( (0x$m >> %d) & 1 )) = 1 ] || { echo \"signal %d not ignored: $m\"; exit 1; }",
	         st.signal - 1, st.signal);
	execl("/bin/sh", "sh", "-c", script, (char *)NULL);
	_exit(127);
}

/* The program ignores the signal we sample on, then execs: the new
 * program finds it ignored (it found SIG_DFL: a stray SIGTRAP or real-time
 * signal would then kill it), on either engine, and after a stop. */
TEST_IMPL(safety_exec_keeps_sampling_signal_ignored)
{
	burn(0);
	static const char *const what[] = {"default engine", "timers", "stopped"};
	for (int mode = 0; mode <= 2; mode++) {
		fflush(stdout);
		pid_t pid = fork();
		ASSERT(pid >= 0);
		if (pid == 0)
			exec_sampling_ignored(mode);
		int status = wait_bounded(pid, 20);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			FAIL_AT("%s: child status %#x", what[mode], status);
	}
	return 0;
}
