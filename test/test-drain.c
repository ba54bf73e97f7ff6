/*
 * test-drain.c - issue 9, item 6: a stop, a stop after a fault (the
 * sweeper's engine_reap()) and exec wait for a sampling handler still
 * writing before fault recovery is removed; and item 18: that wait ends
 * even when the stopping thread is SCHED_FIFO on the handler's core.
 *
 * The race these tests make deterministic: a handler is between its
 * in-flight increment and decrement, about to write a counter, when
 * another thread stops profiling (or execs).  If SIGSEGV/SIGBUS recovery
 * (fault.c) were given back to the program before that handler finished,
 * and its write then faulted, the fault would reach the program's
 * disposition (SIG_DFL: the process dies of SIGSEGV).  By chance the
 * window is nanoseconds wide; here it is held open for as long as the
 * test likes.
 *
 * How the handler is held in flight: the counters live in a page P
 * registered with a userfaultfd in MISSING mode and never touched, so
 * the first access to it (the handler's counter load, sample.c's bump16)
 * puts the sampled thread to sleep in the kernel until the userfaultfd
 * answers.  Only pcs of one spin function map to counters (offset = its
 * start, scale 0x10000, exactly its counters), so no other thread's
 * sample, and none of the test's own code, touches P.  The test reads
 * the UFFD_EVENT_PAGEFAULT: from then on a handler is in flight, for good.
 *
 * How the held write is made to fault for real: mprotect(P, PROT_NONE),
 * then UFFDIO_WAKE.  The woken access is retried, finds no permission and
 * raises SIGSEGV (SEGV_ACCERR), which only fault recovery can absorb.
 * Not munmap(): the address range would be free for another mapping
 * (an arena, a thread stack) before the retry, and the contract counts a
 * buffer as gone only while its addresses stay unmapped; with PROT_NONE
 * the range stays ours.  Not UFFDIO_UNREGISTER first: the retry would
 * then find an ordinary missing anonymous page, and succeed.
 *
 * The waiter is seen waiting, not guessed at: the library sleeps
 * (nanosleep) in one place only, engine.c's drain(), after 64 yields;
 * the test waits until /proc/self/task/TID/syscall shows the stopping
 * (or exec'ing) thread in that sleep, so the fault is always raised
 * after the waiter has passed whatever it does before the drain.  Had
 * recovery been removed before the drain, it is gone by then, and the
 * test dies of SIGSEGV every time (checked by swapping the order).
 *
 * Not under TSan (its frames cannot be jumped over by fault recovery) nor
 * valgrind (a deliberate fault is an error there); skipped where no
 * userfaultfd can be had (old kernel, seccomp, no privilege).
 */
#include "safety.h"

#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/profil.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

#define PAGE 4096
#define HOLD_TIMEOUT_MS 10000

SPIN_FN(drain_spin, 23)

static int skip_tools(void)
{
	return skip_under("tsan", "TSan runs signal handlers from its own frames; "
	                  "fault recovery's longjmp cannot cross them") ||
	       skip_under("valgrind", "its deliberate fault is an error to valgrind");
}

static void skip_because(const char *why)
{
	printf("skipped: %s\n", why);
	if (!test_skip_reason[0])
		snprintf(test_skip_reason, sizeof test_skip_reason, "%s", why);
}

/* The page the handler will be held on, and its userfaultfd. */
struct hold {
	void *page;
	int uffd;
	unsigned long lo, hi; /* drain_spin's text */
	size_t bufsiz;        /* bytes of counters: exactly drain_spin's */
};

/* A userfaultfd: user-mode faults only where the flag is known (any user,
 * Linux 5.11+), else an ordinary one (privileged, or older kernels). */
static int uffd_open(void)
{
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd < 0)
		fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	return fd;
}

/* 0, or -1 having said why the test is skipped. */
static int hold_setup(struct hold *h)
{
	memset(h, 0, sizeof *h);
	ASSERT_OK(function_range((void *)drain_spin, &h->lo, &h->hi));
	h->bufsiz = 2 * ((h->hi - h->lo + 1) / 2 + 1); /* one per 2 bytes, scale 0x10000 */
	ASSERT(h->bufsiz <= PAGE);
	h->page = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(h->page != MAP_FAILED);
	h->uffd = uffd_open();
	if (h->uffd < 0) {
		char why[160];
		snprintf(why, sizeof why, "no userfaultfd to hold a handler with (%s)",
		         strerror(errno));
		skip_because(why);
		return -1;
	}
	struct uffdio_api api = {.api = UFFD_API, .features = 0};
	if (ioctl(h->uffd, UFFDIO_API, &api) != 0) {
		skip_because("userfaultfd: UFFDIO_API refused");
		return -1;
	}
	struct uffdio_register reg = {
		.range = {.start = (unsigned long)h->page, .len = PAGE},
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	if (ioctl(h->uffd, UFFDIO_REGISTER, &reg) != 0) {
		skip_because("userfaultfd: anonymous memory cannot be registered");
		return -1;
	}
	return 0;
}

/* Waits for the handler's access to P (the kernel reports its page). */
static void hold_wait(const struct hold *h)
{
	struct pollfd pfd = {.fd = h->uffd, .events = POLLIN};
	for (;;) {
		int n = poll(&pfd, 1, HOLD_TIMEOUT_MS);
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			FAIL_AT("no sample touched the held page within %d ms", HOLD_TIMEOUT_MS);
		ASSERT(n == 1);
		break;
	}
	struct uffd_msg msg;
	ASSERT_EQ(read(h->uffd, &msg, sizeof msg), sizeof msg);
	ASSERT_EQ(msg.event, UFFD_EVENT_PAGEFAULT);
	unsigned long addr = (unsigned long)msg.arg.pagefault.address;
	ASSERT(addr >= (unsigned long)h->page && addr < (unsigned long)h->page + PAGE);
}

/* The held access (and any other waiting on P) faults for real. */
static void hold_release_faulting(const struct hold *h)
{
	ASSERT_OK(mprotect(h->page, PAGE, PROT_NONE));
	struct uffdio_range r = {.start = (unsigned long)h->page, .len = PAGE};
	ASSERT_OK(ioctl(h->uffd, UFFDIO_WAKE, &r));
}

/* Whether thread tid is sleeping in nanosleep (engine.c's drain(): the
 * library's only sleep), by its current system call. */
static int in_drain_sleep(pid_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, line, sizeof line - 1);
	close(fd);
	if (n <= 0)
		return 0;
	line[n] = '\0';
	long nr = strtol(line, NULL, 10); /* "running" reads as 0: not a sleep */
	return strncmp(line, "running", 7) != 0 &&
	       (nr == SYS_clock_nanosleep || nr == SYS_nanosleep);
}

/* Waits (up to secs) until tid is seen in the drain's sleep. */
static int wait_in_drain(pid_t tid, double secs)
{
	double end = mono_now() + secs;
	while (mono_now() < end) {
		if (in_drain_sleep(tid))
			return 1;
		usleep(1000);
	}
	return 0;
}

/* The sampled thread: drain_spin until told to stop. */
struct spin_arg {
	atomic_int run;
	unsigned long iters;
};

static void *spin_main(void *p)
{
	struct spin_arg *a = p;
	while (atomic_load(&a->run))
		drain_spin(a->iters);
	return NULL;
}

/* The thread that stops profiling. */
struct stopper {
	_Atomic pid_t tid;
	atomic_int returned;
	int rc;
};

static void *stopper_main(void *p)
{
	struct stopper *s = p;
	atomic_store(&s->tid, (pid_t)syscall(SYS_gettid));
	s->rc = profil(no_buf, 0, 0, 0);
	atomic_store(&s->returned, 1);
	return NULL;
}

/* profil() over drain_spin's text, counters in the held page. */
static void profile_spin(const struct hold *h)
{
	ASSERT_OK(profil((unsigned short *)h->page, h->bufsiz, h->lo, 0x10000));
}

TEST_IMPL(safety_stop_drains_handler_in_flight)
{
	if (skip_tools())
		return 0;
	struct hold h;
	if (hold_setup(&h) != 0)
		return 0;
	struct spin_arg sa = {.run = 1, .iters = iters_for(0.005)};
	profile_spin(&h);
	pthread_t spinner;
	ASSERT_EQ(pthread_create(&spinner, NULL, spin_main, &sa), 0);
	double t0 = mono_now();
	hold_wait(&h);
	double held_after = mono_now() - t0;
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	printf("engine %s, signal %d\n", profil_engine_name(st.engine), st.signal);
	ASSERT(ENGINE_RUNNING(st.engine));

	/* A handler is in flight, for good.  Stop from another thread. */
	struct stopper s = {.tid = 0, .returned = 0, .rc = -2};
	pthread_t stopper;
	ASSERT_EQ(pthread_create(&stopper, NULL, stopper_main, &s), 0);
	while (atomic_load(&s.tid) == 0)
		usleep(1000);
	int seen = wait_in_drain(atomic_load(&s.tid), 10.0);
	usleep(100 * 1000);
	int returned_early = atomic_load(&s.returned);
	printf("handler held on page %p after %.4f s; stopper in drain's sleep: %s; "
	       "returned while held: %s\n", h.page, held_after,
	       seen ? "yes" : "no", returned_early ? "YES" : "no");
	ASSERT(seen);
	ASSERT(!returned_early);

	/* The held write faults for real: only recovery can absorb it. */
	hold_release_faulting(&h);
	ASSERT_EQ(pthread_join(stopper, NULL), 0);
	ASSERT_EQ(s.rc, 0);

	ASSERT_OK(profil_get_stats(&st));
	printf("after the stop: faults %llu, stopped %d, engine %s, signals %llu, "
	       "in_range %llu, out_of_range %llu\n", st.faults, (int)st.stopped,
	       profil_engine_name(st.engine), st.signals, st.in_range, st.out_of_range);
	ASSERT(st.faults >= 1);
	ASSERT_EQ(st.stopped, PROFIL_STOP_FAULT);
	ASSERT_EQ(st.engine, PROFIL_ENGINE_OFF);
	ASSERT_EQ(st.in_range, 0); /* the one write there was, abandoned */

	/* Nothing writes after the stop: P made an ordinary page again (a
	 * read now maps zeros), the spinner spinning on, every counter 0. */
	struct uffdio_range r = {.start = (unsigned long)h.page, .len = PAGE};
	ASSERT_OK(ioctl(h.uffd, UFFDIO_UNREGISTER, &r));
	ASSERT_OK(mprotect(h.page, PAGE, PROT_READ | PROT_WRITE));
	usleep(50 * 1000);
	atomic_store(&sa.run, 0);
	ASSERT_EQ(pthread_join(spinner, NULL), 0);
	const unsigned short *c = h.page;
	for (size_t i = 0; i < PAGE / 2; i++)
		if (c[i] != 0)
			FAIL_AT("counter %zu is %u after the stop", i, c[i]);
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_EQ(st.engine, PROFIL_ENGINE_OFF);
	close(h.uffd);
	munmap(h.page, PAGE);
	return 0;
}

/*
 * A fault: after one sample's write faulted and withdrew the table, the
 * sweeper stops the timers and gives SIGSEGV back (engine_reap()); a
 * handler on another thread, which loaded the table before it was
 * withdrawn, may still be about to write.  sprofil() with two regions:
 * drain_spin's counters in the held page P, drain_spin2's in a page Q
 * made read-only once profiling is on.  One thread is held on P, then
 * another faults on Q; the sweeper is seen in the drain's sleep (it is
 * the only thread sleeping in nanosleep: the spinners never sleep, and
 * the test's own thread is left out), then P's write faults for real.
 */
SPIN_FN(drain_spin2, 29)

static void *spin2_main(void *p)
{
	struct spin_arg *a = p;
	while (atomic_load(&a->run))
		drain_spin2(a->iters);
	return NULL;
}

/* A thread other than `self` sleeping in drain(), or 0. */
static pid_t find_drainer(pid_t self)
{
	DIR *d = opendir("/proc/self/task");
	ASSERT(d);
	pid_t found = 0;
	struct dirent *de;
	while (!found && (de = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(de->d_name);
		if (tid > 0 && tid != self && in_drain_sleep(tid))
			found = tid;
	}
	closedir(d);
	return found;
}

TEST_IMPL(safety_fault_stop_drains_handler_in_flight)
{
	if (skip_tools())
		return 0;
	struct hold h;
	if (hold_setup(&h) != 0)
		return 0;
	unsigned long lo2, hi2;
	ASSERT_OK(function_range((void *)drain_spin2, &lo2, &hi2));
	size_t bufsiz2 = 2 * ((hi2 - lo2 + 1) / 2 + 1);
	ASSERT(bufsiz2 <= PAGE);
	unsigned short *q = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
	                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(q != MAP_FAILED);
	struct prof regions[2] = {
		{.pr_base = h.page, .pr_size = h.bufsiz, .pr_off = h.lo, .pr_scale = 0x10000},
		{.pr_base = q, .pr_size = bufsiz2, .pr_off = lo2, .pr_scale = 0x10000},
	};
	struct spin_arg sa = {.run = 1, .iters = iters_for(0.005)};
	struct spin_arg sb = {.run = 1, .iters = sa.iters};
	ASSERT_OK(sprofil(regions, 2, NULL, PROF_USHORT));
	ASSERT_OK(mprotect(q, PAGE, PROT_READ)); /* checked writable at the call */
	pthread_t held, faulting;
	ASSERT_EQ(pthread_create(&held, NULL, spin_main, &sa), 0);
	hold_wait(&h);
	ASSERT_EQ(pthread_create(&faulting, NULL, spin2_main, &sb), 0);

	/* Q's fault withdraws the table; the sweeper then waits for P's. */
	pid_t self = (pid_t)syscall(SYS_gettid), drainer = 0;
	double end = mono_now() + 10.0;
	while (!(drainer = find_drainer(self)) && mono_now() < end)
		usleep(1000);
	if (!drainer)
		FAIL_AT("no thread waited in the drain within 10 s of Q's fault");
	usleep(100 * 1000);
	int still = wait_in_drain(drainer, 1.0);
	printf("thread %d in drain's sleep, still there 100 ms later: %s\n", (int)drainer,
	       still ? "yes" : "no");
	ASSERT(still);

	hold_release_faulting(&h);
	ASSERT(wait_engine_off(5.0));
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	printf("after the fault stop: faults %llu, stopped %d, engine %s, in_range %llu\n",
	       st.faults, (int)st.stopped, profil_engine_name(st.engine), st.in_range);
	ASSERT(st.faults >= 2); /* Q's, and P's absorbed after the drain */
	ASSERT_EQ(st.stopped, PROFIL_STOP_FAULT);
	ASSERT_EQ(st.in_range, 0);
	atomic_store(&sa.run, 0);
	atomic_store(&sb.run, 0);
	ASSERT_EQ(pthread_join(held, NULL), 0);
	ASSERT_EQ(pthread_join(faulting, NULL), 0);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	close(h.uffd);
	munmap(h.page, PAGE);
	munmap(q, PAGE);
	return 0;
}

/*
 * exec: the same race, with execve() in place of the stop (exec.c withdraws
 * the table, drains, then gives SIGSEGV back before calling libc's exec).
 * In a child of the test: its main thread execs /bin/sh -c 'exit 42'
 * while a second thread holds the handler, sees the exec'ing thread in
 * the drain's sleep, tells the parent so through a pipe (exec not done:
 * the thread telling it still exists), and makes the held write fault.
 * The parent wants the note, then exit status 42: not SIGSEGV.
 */
struct exec_child {
	struct hold h;
	pid_t main_tid;
	int note_fd;
	atomic_int held;
	atomic_int execing;
};

static void *exec_resolver(void *p)
{
	struct exec_child *c = p;
	hold_wait(&c->h);
	atomic_store(&c->held, 1);
	while (!atomic_load(&c->execing))
		usleep(1000);
	if (!wait_in_drain(c->main_tid, 10.0))
		FAIL_AT("the exec'ing thread never waited in the drain");
	usleep(100 * 1000);
	char note = 'w'; /* still here: the exec is waiting for the handler */
	ASSERT_EQ(write(c->note_fd, &note, 1), 1);
	hold_release_faulting(&c->h);
	usleep(10 * 1000 * 1000);
	FAIL_AT("the exec did not happen within 10 s of the handler's fault");
	return NULL;
}

TEST_IMPL(safety_exec_drains_handler_in_flight)
{
	if (skip_tools())
		return 0;
	int p[2];
	ASSERT_OK(pipe2(p, O_CLOEXEC));
	int skip[2];
	ASSERT_OK(pipe2(skip, O_CLOEXEC));
	fflush(stdout);
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		close(skip[0]);
		static struct exec_child c;
		if (hold_setup(&c.h) != 0) {
			ssize_t w = write(skip[1], test_skip_reason, strlen(test_skip_reason));
			(void)w;
			_exit(TEST_SKIP_STATUS);
		}
		c.main_tid = (pid_t)syscall(SYS_gettid);
		c.note_fd = p[1];
		static struct spin_arg sa;
		atomic_store(&sa.run, 1);
		sa.iters = iters_for(0.005);
		profile_spin(&c.h);
		pthread_t spinner, resolver;
		ASSERT_EQ(pthread_create(&resolver, NULL, exec_resolver, &c), 0);
		ASSERT_EQ(pthread_create(&spinner, NULL, spin_main, &sa), 0);
		while (!atomic_load(&c.held))
			usleep(1000);
		atomic_store(&c.execing, 1);
		execl("/bin/sh", "sh", "-c", "exit 42", (char *)NULL);
		FAIL_AT("execl: %s", strerror(errno));
	}
	close(p[1]);
	close(skip[1]);
	char note = 0;
	ssize_t got = read(p[0], &note, 1);
	int status;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	char why[256];
	ssize_t n = read(skip[0], why, sizeof why - 1);
	why[n > 0 ? n : 0] = '\0';
	close(p[0]);
	close(skip[0]);
	if (WIFEXITED(status) && WEXITSTATUS(status) == TEST_SKIP_STATUS) {
		skip_because(why[0] ? why : "no userfaultfd");
		return 0;
	}
	printf("exec waited for the held handler: %s; child %s %d\n",
	       got == 1 && note == 'w' ? "yes" : "no",
	       WIFSIGNALED(status) ? "killed by signal" : "exit status",
	       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	ASSERT(!WIFSIGNALED(status));
	ASSERT_EQ(got, 1);
	ASSERT_EQ(note, 'w');
	ASSERT_EQ(WEXITSTATUS(status), 42);
	return 0;
}

/*
 * Issue 9, item 18: SCHED_FIFO program threads on one core cannot make a
 * stop spin for ever.  The drain used to wait with sched_yield() alone,
 * which never lets a thread of a lower priority run: a stopping thread at
 * SCHED_FIFO that shares its core with the (SCHED_OTHER) thread whose
 * handler is in flight spun until the kernel's real-time throttling
 * (sched_rt_runtime_us: 0.95 s of every second by default) let that
 * thread have the core, and for ever where throttling is off.  Now the
 * drain sleeps after 64 yields.
 *
 * Every thread of the test runs on one CPU.  The spinner's handler is
 * held on P as above; a SCHED_OTHER resolver, made runnable just before
 * the stop, maps P (UFFDIO_ZEROPAGE), which lets the held write complete;
 * then the test's thread, at SCHED_FIFO, stops.  Neither the resolver nor
 * the spinner can run before the stopping thread leaves the CPU, so the
 * stop returns within milliseconds if the drain sleeps, and after 0.95 s
 * at least (throttling) if it only yields: 0.4 s are allowed.
 */
struct resolver {
	const struct hold *h;
	int go_fd;
};

static void *resolver_main(void *p)
{
	struct resolver *r = p;
	char c;
	ASSERT_EQ(read(r->go_fd, &c, 1), 1);
	struct uffdio_zeropage z = {
		.range = {.start = (unsigned long)r->h->page, .len = PAGE},
		.mode = 0, /* and wake the held thread */
	};
	ASSERT_OK(ioctl(r->h->uffd, UFFDIO_ZEROPAGE, &z));
	return NULL;
}

TEST_IMPL(safety_stop_sched_fifo_one_core_bounded)
{
	if (skip_under("tsan", "TSan runs a signal handler when the thread next enters its "
	               "runtime: no handler is held in flight") ||
	    skip_under("valgrind", "valgrind delivers signals at its own points and runs one "
	               "thread at a time"))
		return 0;
	/* The CPU the test runs on, for every thread it makes from now on
	 * (the sweeper, started by profil(), too). */
	int cpu = sched_getcpu();
	ASSERT(cpu >= 0);
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ASSERT_OK(sched_setaffinity(0, sizeof one, &one));
	struct sched_param fifo = {.sched_priority = 1}, other = {.sched_priority = 0};
	int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo);
	if (rc != 0) {
		char why[160];
		snprintf(why, sizeof why, "SCHED_FIFO refused (%s)", strerror(rc));
		skip_because(why);
		return 0;
	}
	ASSERT_EQ(pthread_setschedparam(pthread_self(), SCHED_OTHER, &other), 0);
	struct hold h;
	if (hold_setup(&h) != 0)
		return 0;
	int go[2];
	ASSERT_OK(pipe2(go, O_CLOEXEC));
	struct resolver r = {.h = &h, .go_fd = go[0]};
	pthread_t resolver, spinner;
	ASSERT_EQ(pthread_create(&resolver, NULL, resolver_main, &r), 0);
	struct spin_arg sa = {.run = 1, .iters = iters_for(0.005)};
	profile_spin(&h);
	ASSERT_EQ(pthread_create(&spinner, NULL, spin_main, &sa), 0);
	hold_wait(&h);

	/* The stop, at SCHED_FIFO, with the resolver runnable. */
	alarm(30); /* no throttling and the old drain: it never returns */
	ASSERT_EQ(pthread_setschedparam(pthread_self(), SCHED_FIFO, &fifo), 0);
	double t0 = mono_now();
	ASSERT_EQ(write(go[1], "g", 1), 1);
	rc = profil(no_buf, 0, 0, 0);
	double took = mono_now() - t0;
	ASSERT_EQ(pthread_setschedparam(pthread_self(), SCHED_OTHER, &other), 0);
	alarm(0);
	printf("stop at SCHED_FIFO on CPU %d with a handler in flight on it: %.4f s\n",
	       cpu, took);
	ASSERT_EQ(rc, 0);
	ASSERT(took < 0.4);
	ASSERT_EQ(pthread_join(resolver, NULL), 0);
	atomic_store(&sa.run, 0);
	ASSERT_EQ(pthread_join(spinner, NULL), 0);
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_EQ(st.engine, PROFIL_ENGINE_OFF);
	close(go[0]);
	close(go[1]);
	close(h.uffd);
	munmap(h.page, PAGE);
	return 0;
}
