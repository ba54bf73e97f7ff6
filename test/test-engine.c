/*
 * test-engine.c - which engine samples (issue 13): perf events when the
 * system allows them and the rate is above the kernel tick, timers when
 * PROFIL_ENGINE=timer says so or anything refuses the events; and what
 * the perf engine delivers (real samples well above the tick, totals of
 * CPU seconds x rate, one close-on-exec descriptor per thread).
 *
 * Each test sets PROFIL_ENGINE itself, so `make test-perf` and `make
 * test-timer` (which set it for the whole suite) do not change them.
 */
#include "runner.h"
#include "safety.h"
#include "perfcheck.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <profil.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>


/* Profiles `seconds` of CPU on the calling thread at hz; fills *st. */
static int run_at(unsigned int hz, double seconds, struct profil_stats *st, double *cpu)
{
	static unsigned short buf[2];
	buf[0] = 0;
	ASSERT_OK(profil_set_hz(hz));
	double c0 = cpu_process();
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	burn(seconds);
	ASSERT_OK(profil_get_stats(st));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	*cpu = cpu_process() - c0;
	struct profil_stats after;
	ASSERT_OK(profil_get_stats(&after));
	st->ticks = after.ticks, st->signals = after.signals;
	return 0;
}

TEST_IMPL(engine_perf_chosen_1000hz)
{
	setenv("PROFIL_ENGINE", "auto", 1);
	if (!perf_allowed())
		return 0;
	struct profil_stats st;
	double cpu;
	if (1000 <= tick_hz()) {
		printf("tick %u Hz: 1000 Hz is not above it\n", tick_hz());
		ASSERT_OK(run_at(1000, 0.1, &st, &cpu));
		ASSERT_EQ(st.engine, PROFIL_ENGINE_THREAD_TIMERS);
		return 0;
	}
	if (!perf_rate_ok(1000, tick_hz()))
		return 0;
	ASSERT_OK(run_at(1000, 0.3, &st, &cpu));
	printf("engine %s, real %u Hz, perf_error %d\n", profil_engine_name(st.engine),
	       st.real_hz, st.perf_error);
	if (st.perf_error == EOPNOTSUPP) {
		/* auto uses events only with sigtrap delivery (fasync cuts
		 * blocking calls short): not before Linux 6.16, nor traced,
		 * nor under TSan or valgrind */
		ASSERT_EQ(st.engine, PROFIL_ENGINE_THREAD_TIMERS);
		snprintf(test_skip_reason, sizeof test_skip_reason,
		         "no sigtrap delivery here: auto keeps the timers");
		return 0;
	}
	ASSERT_EQ(st.engine, PROFIL_ENGINE_PERF_EVENTS);
	ASSERT_EQ(st.real_hz, 1000);
	ASSERT_EQ(st.perf_error, 0);
	ASSERT(strcmp(profil_engine_name(st.engine), "perf-events") == 0);
	/* at the tick's rate or below, timers do as well: auto keeps them */
	ASSERT_OK(run_at(tick_hz(), 0.1, &st, &cpu));
	ASSERT_EQ(st.engine, PROFIL_ENGINE_THREAD_TIMERS);
	/* ... unless perf is forced */
	setenv("PROFIL_ENGINE", "perf", 1);
	ASSERT_OK(run_at(100, 0.1, &st, &cpu));
	ASSERT_EQ(st.engine, PROFIL_ENGINE_PERF_EVENTS);
	return 0;
}

TEST_IMPL(engine_timer_forced)
{
	setenv("PROFIL_ENGINE", "timer", 1);
	struct profil_stats st;
	double cpu;
	ASSERT_OK(run_at(4000, 0.3, &st, &cpu));
	printf("engine %s, real %u Hz, %llu signals for %llu samples\n",
	       profil_engine_name(st.engine), st.real_hz, st.signals, st.ticks);
	ASSERT_EQ(st.engine, PROFIL_ENGINE_THREAD_TIMERS);
	ASSERT(st.real_hz <= tick_hz());
	ASSERT_EQ(st.perf_error, 0);
	return 0;
}

/* In a child: perf_event_open fails with EPERM (a seccomp filter) or no
 * descriptor may be spared (RLIMIT_NOFILE); profiling falls back to
 * timers, says why, and still counts CPU seconds x rate. */
static int fallback_child(int how)
{
	if (how == 0) {
		struct sock_filter f[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = {sizeof f / sizeof f[0], f};
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
			return 20;
	} else {
		struct rlimit rl = {16, 16}; /* all of it the program's reserve */
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			return 21;
	}
	struct profil_stats st;
	double cpu;
	if (how == 0 && tick_hz() < 1000) { /* auto does not even try under a filter */
		setenv("PROFIL_ENGINE", "auto", 1);
		if (run_at(1000, 0.05, &st, &cpu) != 0)
			return 26;
		printf("fallback (seccomp, auto): engine %s, perf_error %d\n",
		       profil_engine_name(st.engine), st.perf_error);
		if (st.engine != PROFIL_ENGINE_THREAD_TIMERS || st.perf_error != EPERM)
			return 27;
		setenv("PROFIL_ENGINE", "perf", 1);
	}
	if (run_at(1000, 0.3, &st, &cpu) != 0)
		return 22;
	printf("fallback (%s): engine %s, perf_error %d (%s), %llu samples in %.3f CPU s\n",
	       how ? "RLIMIT_NOFILE 16" : "seccomp EPERM", profil_engine_name(st.engine),
	       st.perf_error, strerror(st.perf_error), st.ticks, cpu);
	if (st.engine != PROFIL_ENGINE_THREAD_TIMERS)
		return 23;
	if (st.perf_error != (how ? EMFILE : EPERM))
		return 24;
	double want = cpu * 1000;
	return fabs((double)st.ticks - want) < 0.05 * want + 10 ? 0 : 25;
}

TEST_IMPL(engine_fallback)
{
	SKIP_IF_SAMPLES_DEFERRED();
	setenv("PROFIL_ENGINE", "perf", 1);
	if (!perf_rate_ok(1000, tick_hz())) /* else ERANGE comes first */
		return 0;
	for (int how = 0; how < 2; how++) {
		fflush(stdout);
		pid_t pid = fork();
		ASSERT(pid >= 0);
		if (pid == 0) {
			int rc = fallback_child(how);
			fflush(stdout);
			_exit(rc);
		}
		int status;
		ASSERT_EQ(waitpid(pid, &status, 0), pid);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			FAIL_AT("fallback %d: child status %#x", how, status);
	}
	return 0;
}

/* Real samples per CPU second well above the tick (2.5 times), and
 * totals within Poisson-like bounds of CPU seconds x rate. */
TEST_IMPL(engine_perf_above_tick)
{
	SKIP_IF_SAMPLES_DEFERRED();
	setenv("PROFIL_ENGINE", "perf", 1);
	if (!perf_allowed())
		return 0;
	/* 2000 Hz (8 ticks of 250 Hz), or the highest power-of-two fraction
	 * of it the kernel's cap allows, as long as it is 3 ticks or more.
	 * Not 4000: on a VM whose signal delivery costs tens of us, with its
	 * host busy, 6.2% of the overflows came while the previous signal was
	 * being handled and merged into it (fresh-clone CI, 2026-11-29); at
	 * half the rate half as many do */
	unsigned int hz = 2000, tick = tick_hz();
	while (hz / 2 >= 3 * tick && !perf_rate_ok(hz, tick))
		hz /= 2;
	if (!perf_rate_ok(hz, tick))
		return 0;
	test_skip_reason[0] = '\0'; /* a lower rate is still a pass */
	struct profil_stats st;
	double cpu;
	ASSERT_OK(run_at(hz, 1.0, &st, &cpu));
	double real = (double)st.signals / cpu, want = cpu * hz;
	printf("%u Hz: %.3f CPU s, %llu signals (%.0f per CPU s; tick %u Hz), %llu samples of %.0f\n",
	       hz, cpu, st.signals, real, tick_hz(), st.ticks, want);
	ASSERT_EQ(st.engine, PROFIL_ENGINE_PERF_EVENTS);
	ASSERT(real > 2.5 * tick_hz());
	/* each signal weighs the thread's CPU time since its last (with
	 * sigtrap, one signal stands for overflows in the kernel); this loop
	 * makes no system call, so nearly every signal is one sample.  Not
	 * under ASan: overflows merge into one signal while the previous one
	 * is still being handled, and its instrumented handler is long
	 * enough for the host's stolen time to do that to 5.3% of them (a
	 * fresh-clone CI run, 2026-11-28, load 2.8 from the VM's neighbours);
	 * the totals below are checked there too */
	const char *tool = getenv("PROFIL_TEST_TOOL");
	if (tool && strcmp(tool, "asan") == 0)
		printf("under asan: %.1f%% of the samples came in merged signals (not checked)\n",
		       st.ticks ? 100.0 * (double)(st.ticks - (st.signals < st.ticks ? st.signals : st.ticks)) /
		                      (double)st.ticks
		                : 0.0);
	else
		ASSERT(st.ticks + st.ticks / 20 >= st.signals && st.signals + st.ticks / 20 >= st.ticks);
	/* Poisson-like bound plus the work outside the profiled window */
	ASSERT_NEAR((double)st.ticks, want, 6 * sqrt(want) + 0.02 * want);
	return 0;
}

/* Our perf event descriptors, close-on-exec each. */
static int count_perf_fds(int *cloexec_all)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	char path[300], link[128];
	int n = 0;
	*cloexec_all = 1;
	while (d && (de = readdir(d)) != NULL) {
		snprintf(path, sizeof path, "/proc/self/fd/%s", de->d_name);
		ssize_t k = readlink(path, link, sizeof link - 1);
		if (k <= 0)
			continue;
		link[k] = '\0';
		if (!strstr(link, "perf_event"))
			continue;
		n++;
		int flags = fcntl(atoi(de->d_name), F_GETFD);
		if (flags < 0 || !(flags & FD_CLOEXEC))
			*cloexec_all = 0;
	}
	if (d)
		closedir(d);
	return n;
}

/* The number the program's next open() would get. */
static int next_descriptor(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT(fd >= 0);
	close(fd);
	return fd;
}

/* At most one per thread, close-on-exec, and out of the program's way:
 * its next open() gets the number it would without us (CPython's
 * test_pass_fds once found ours at 3 in its children). */
TEST_IMPL(engine_perf_descriptors)
{
	setenv("PROFIL_ENGINE", "perf", 1);
	if (!perf_allowed() || !perf_rate_ok(profil_hz(), tick_hz()))
		return 0;
	static unsigned short buf[2];
	struct spinners sp;
	spinners_start(&sp, 3);
	int next = next_descriptor();
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	burn(0.05);
	int cloexec;
	int n = count_perf_fds(&cloexec);
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	printf("%u threads sampled, %d perf descriptors, close-on-exec %s; next open() %d, "
	       "was %d\n", st.threads, n, cloexec ? "all" : "NOT all", next_descriptor(), next);
	ASSERT_EQ(st.engine, PROFIL_ENGINE_PERF_EVENTS);
	if (st.signal == SIGTRAP) /* sigtrap: events held by mappings */
		ASSERT_EQ(n, 0);
	else
		ASSERT(n >= 1 && (unsigned)n <= st.threads); /* at most one per thread */
	ASSERT(cloexec);
	ASSERT_EQ(next_descriptor(), next);
	spinners_stop(&sp);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT_EQ(count_perf_fds(&cloexec), 0); /* stopping closes them all */
	return 0;
}

/* A rate change above the events' ceiling moves every thread from its
 * event to a timer: samples go on.  20 kHz is above the library's own
 * ceiling of 10 kHz (a signal per sample costs so much that at the
 * kernel's default cap of 100 kHz a thread made no progress) and at or
 * above whatever cap the kernel has lowered itself to. */
TEST_IMPL(engine_rate_above_cap)
{
	SKIP_IF_SAMPLES_DEFERRED();
	setenv("PROFIL_ENGINE", "perf", 1);
	if (!perf_allowed() || !perf_rate_ok(1000, tick_hz()))
		return 0;
	static unsigned short buf[2];
	struct profil_stats st;
	ASSERT_OK(perf_start(buf, sizeof buf, 1000, &st));
	ASSERT_OK(profil_set_hz(20000));
	int cloexec;
	ASSERT_EQ(count_perf_fds(&cloexec), 0);
	unsigned short b0 = buf[0];
	double c0 = cpu_process();
	burn(0.2);
	double cpu = cpu_process() - c0;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("after the change: engine %s, perf_error %d, %u samples in %.3f CPU s\n",
	       profil_engine_name(st.engine), st.perf_error, (unsigned)(buf[0] - b0), cpu);
	ASSERT_EQ(st.engine, PROFIL_ENGINE_THREAD_TIMERS);
	ASSERT_EQ(st.perf_error, ERANGE);
	ASSERT(buf[0] - b0 > 0.5 * cpu * 20000); /* 16-bit bin: far from full */
	return 0;
}

/*
 * A child that holds copies of the events when profiling stops: made by
 * a raw fork (no atfork handler closes them; a vfork child until its
 * exec holds them the same way).  Closing our descriptor then does not
 * end the event, whose signals kept coming to its thread after the stop
 * restored the sampling signal's default action: SIGPROF killed the
 * program (the deaths seen in `make stress` with PROFIL_ENGINE=perf).
 */
TEST_IMPL(engine_perf_stop_with_child_holding_copies)
{
	SKIP_IF_SAMPLES_DEFERRED();
	setenv("PROFIL_ENGINE", "perf", 1);
	if (!perf_allowed() || !perf_rate_ok(1000, tick_hz()))
		return 0;
	static unsigned short buf[2];
	struct profil_stats st;
	ASSERT_OK(perf_start(buf, sizeof buf, 1000, &st));
	burn(0.1);
	pid_t child = (pid_t)syscall(SYS_fork);
	if (child == 0) {
		for (;;)
			syscall(SYS_pause);
	}
	ASSERT(child > 0);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	burn(0.5); /* 500 overflows if the events still ran */
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ASSERT(buf[0] + buf[1] > 0); /* it did sample */
	return 0;
}

/* Profiling into a fresh page at hz, then the page spoilt: the first
 * sample faults and the helper thread reaps the run (engine_reap()).
 * The engine the run had; 0 if it was not reaped within 5 s. */
static int run_reaped(unsigned int hz)
{
	unsigned short *b = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
	                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(b != MAP_FAILED);
	ASSERT_OK(profil_set_hz(hz));
	ASSERT_OK(profil(b, 4096, 0, 2));
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	int engine = (int)st.engine;
	ASSERT(mmap(b, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == b);
	double end = mono_now() + 5;
	do
		burn(0.01);
	while (profil_get_stats(&st) == 0 && st.engine != PROFIL_ENGINE_OFF && mono_now() < end);
	munmap(b, 4096); /* profiling is off */
	return st.engine == PROFIL_ENGINE_OFF ? engine : 0;
}

/*
 * The helper thread (sweeper.c) has a descriptor table of its own on the
 * timer engine, and a reap ends a run while the helper goes on.  When the
 * next run chose perf events and was reaped in turn, the helper closed
 * the events in its own table: the program's stayed open and enabled,
 * and with the signal given back to its default action the next of them
 * killed the process (seen in CI as safety_concurrent_callers dying on
 * perf events).  A helper with a table of its own is replaced by one
 * sharing the program's when a run chooses events.
 */
TEST_IMPL(engine_perf_after_reap_closes_every_event)
{
	SKIP_IF_SAMPLES_DEFERRED();
	setenv("PROFIL_ENGINE", "perf", 1);
	if (!perf_allowed() || !perf_rate_ok(1000, tick_hz()))
		return 0;
	struct spinners sp;
	spinners_start(&sp, 2);
	/* 20 kHz is above the events' ceiling: timers, and the helper starts
	 * with a table of its own */
	ASSERT_EQ(run_reaped(20000), PROFIL_ENGINE_THREAD_TIMERS);
	ASSERT_EQ(run_reaped(1000), PROFIL_ENGINE_PERF_EVENTS);
	int cloexec, left = count_perf_fds(&cloexec);
	burn(0.3); /* an event left enabled would signal, and kill, by now */
	spinners_stop(&sp);
	printf("perf descriptors after the reaped run on events: %d\n", left);
	ASSERT_EQ(left, 0);
	return 0;
}
