/*
 * test-engine-trap.c - perf events delivering by sigtrap (perf_trap.h):
 * what that delivery promises the program beyond the semantic suite.
 *
 * Each test forces the perf engine and skips, saying why, where the
 * library does not deliver by sigtrap (kernel older than the gate, a
 * tracer, perf events refused): its statistics then name another signal.
 */
#include "runner.h"
#include "safety.h"
#include "perfcheck.h"

#include <fcntl.h>
#include <math.h>
#include <profil.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned short buf[2];

/* Starts the perf engine at hz; 1 if it delivers by sigtrap, else 0
 * with the skip reason set and profiling stopped. */
static int trap_start(unsigned int hz)
{
	struct profil_stats st;
	setenv("PROFIL_ENGINE", "perf", 1);
	if (!perf_allowed() || !perf_rate_ok(hz, tick_hz()))
		return 0;
	test_skip_reason[0] = '\0';
	ASSERT_OK(profil_set_hz(hz));
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	ASSERT_OK(profil_get_stats(&st));
	if (st.engine == PROFIL_ENGINE_PERF_EVENTS && st.signal == SIGTRAP)
		return 1;
	snprintf(test_skip_reason, sizeof test_skip_reason,
	         "perf events deliver on signal %d here, not by sigtrap (kernel before 6.16, "
	         "or traced)", st.signal);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	return 0;
}

#define WRITES 40
#define CHUNK (1 << 20)

static int pipe_fds[2];

/* Takes 4 KiB every 50 us until the writer closes its end. */
static void *slow_reader(void *arg)
{
	(void)arg;
	static char sink[4096];
	while (read(pipe_fds[0], sink, sizeof sink) > 0)
		usleep(50);
	return NULL;
}

/*
 * A blocking write of 1 MiB to a pipe whose reader is slow is written
 * whole.  The thread runs in the kernel while it copies, and fasync
 * delivery raised the sampling signal there: pipe_write() returned what
 * it had copied so far (94 to 100 of 100 such writes were short at 1 to
 * 10 kHz, bench/perf-engine.md), and programs that do not retry short
 * writes (CPython's test_subprocess) broke.  A trap waits for the return
 * to user mode.  Totals stay right: the signals that come at a return
 * are weighed by the thread's CPU clock.
 */
TEST_IMPL(engine_trap_blocking_writes_whole)
{
	if (!trap_start(4000))
		return 0;
	ASSERT_OK(pipe(pipe_fds));
	pthread_t reader;
	ASSERT_OK(pthread_create(&reader, NULL, slow_reader, NULL));
	static char chunk[CHUNK];
	memset(chunk, 'x', sizeof chunk);
	int shorts = 0, failed = 0;
	double c0 = cpu_thread();
	for (int i = 0; i < WRITES; i++) {
		ssize_t n = write(pipe_fds[1], chunk, sizeof chunk);
		shorts += n >= 0 && n < (ssize_t)sizeof chunk;
		failed += n < 0;
	}
	double cpu = cpu_thread() - c0;
	close(pipe_fds[1]);
	ASSERT_OK(pthread_join(reader, NULL));
	double all = cpu_process();
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	close(pipe_fds[0]);
	printf("%d of %d writes short, %d failed; writer %.3f CPU s, process %.3f; %llu "
	       "signals, %llu samples\n",
	       shorts, WRITES, failed, cpu, all, st.signals, st.ticks);
	ASSERT_EQ(shorts, 0);
	ASSERT_EQ(failed, 0);
	/* the writer's kernel time was sampled: more samples than signals */
	ASSERT(st.ticks > st.signals);
	return 0;
}

static atomic_int writer_go, writer_done;

/* More than the pipe holds: the writer copies CHUNK and sleeps. */
#define ROUND_LEN (CHUNK + CHUNK / 4)

/* Writes ROUND_LEN into the pipe, once per round, as main asks. */
static void *round_writer(void *arg)
{
	(void)arg;
	static char chunk[ROUND_LEN];
	for (int round = 1;; round++) {
		while (atomic_load(&writer_go) < round)
			if (atomic_load(&writer_done))
				return NULL;
		if (write(pipe_fds[1], chunk, sizeof chunk) != (ssize_t)sizeof chunk)
			return NULL;
	}
}

/* Whether tid is asleep (state S in /proc/self/task/tid/stat). */
static int sleeping(pid_t tid)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	int s = fgets(line, sizeof line, f) != NULL;
	fclose(f);
	const char *p = s ? strrchr(line, ')') : NULL;
	return p && p[1] == ' ' && p[2] == 'S';
}

static atomic_int writer_tid;

static void *round_writer_main(void *arg)
{
	atomic_store(&writer_tid, (int)gettid());
	return round_writer(arg);
}

/*
 * Stopping never kills the program with a late trap.  The kernel queues
 * a trap as task work on the thread that overflowed; if that thread is
 * in the kernel copying into a pipe and then sleeps there, the trap
 * waits for its return, and comes even after the event is disabled and
 * closed (measured on 6.18).  Were SIGTRAP given back to its default
 * disposition at the stop, that trap would kill the process (it did, in
 * 20 of 20 runs of a bare reproducer).  Each round starts profiling at
 * 10 kHz, has the writer copy 1 MiB into a pipe that holds 1 MiB and
 * fall asleep on the rest, stops, then lets it finish.
 */
TEST_IMPL(engine_trap_late_trap_after_stop)
{
	ASSERT_OK(pipe(pipe_fds));
	int room = fcntl(pipe_fds[0], F_SETPIPE_SZ, CHUNK);
	if (room < CHUNK / 2) {
		snprintf(test_skip_reason, sizeof test_skip_reason, "pipe size refused (%d)", room);
		return 0;
	}
	pthread_t writer;
	ASSERT_OK(pthread_create(&writer, NULL, round_writer_main, NULL));
	while (!atomic_load(&writer_tid))
		usleep(100);
	static char sink[ROUND_LEN];
	int rounds = 30, asleep = 0;
	for (int r = 1; r <= rounds; r++) {
		if (!trap_start(10000)) {
			atomic_store(&writer_done, 1);
			pthread_join(writer, NULL);
			return 0;
		}
		atomic_store(&writer_go, r);
		/* until it sleeps on the full pipe (it copied ~1 MiB first) */
		for (int i = 0; i < 2000 && !sleeping(atomic_load(&writer_tid)); i++)
			usleep(100);
		asleep += sleeping(atomic_load(&writer_tid));
		ASSERT_OK(profil(no_buf, 0, 0, 0));
		size_t got = 0;
		while (got < ROUND_LEN) {
			ssize_t n = read(pipe_fds[0], sink, ROUND_LEN - got);
			ASSERT(n > 0);
			got += (size_t)n;
		}
	}
	atomic_store(&writer_done, 1);
	ASSERT_OK(pthread_join(writer, NULL));
	struct sigaction now;
	ASSERT_OK(sigaction(SIGTRAP, NULL, &now));
	printf("%d rounds, writer asleep in the kernel at %d stops; alive\n", rounds, asleep);
	ASSERT(now.sa_handler == SIG_DFL); /* the program's view */
	ASSERT(asleep >= rounds / 2);
	return 0;
}

static atomic_int program_traps;

static void program_trap(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if (si->si_code == SI_TKILL)
		atomic_fetch_add(&program_traps, 1);
}

/*
 * SIGTRAP is the program's too while we sample on it: its handler gets
 * the traps it raises (and none of ours), and where it left the default
 * a trap of its own still ends the process with SIGTRAP, as without us.
 */
TEST_IMPL(engine_trap_program_traps_reach_program)
{
	if (!trap_start(1000))
		return 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = program_trap;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	ASSERT_OK(sigaction(SIGTRAP, &sa, NULL));
	double c0 = cpu_thread();
	for (int i = 0; i < 20; i++) {
		while (cpu_thread() < c0 + 0.01 * (i + 1))
			;
		ASSERT_OK(raise(SIGTRAP));
	}
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_EQ(st.signal, SIGTRAP); /* shared, not moved */
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("program's handler: %d of 20 traps; %llu samples of ours\n",
	       atomic_load(&program_traps), st.ticks);
	ASSERT_EQ(atomic_load(&program_traps), 20);
	ASSERT(st.ticks > 100);

	/* the default: a child that profiles (again, after fork) and raises */
	signal(SIGTRAP, SIG_DFL);
	ASSERT(trap_start(1000));
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		double t = cpu_thread();
		while (cpu_thread() < t + 0.05)
			;
		raise(SIGTRAP);
		_exit(0);
	}
	int status;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("child: %s %d\n", WIFSIGNALED(status) ? "signal" : "exit",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGTRAP);
	return 0;
}
