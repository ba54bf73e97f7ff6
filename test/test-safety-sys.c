/*
 * test-safety-sys.c - issue 3, items 5 and 8: system calls interrupted by
 * samples, and profil() at the limits of the process's resources.
 */
#include "safety.h"

#include <poll.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>

static atomic_int eintr_seen;
static atomic_int io_run;

static void note(ssize_t r, const char *what)
{
	if (r < 0 && errno == EINTR) {
		atomic_fetch_add(&eintr_seen, 1);
		fprintf(stderr, "%s: EINTR\n", what);
	} else if (r < 0) {
		FAIL_AT("%s: %s", what, strerror(errno));
	}
}

/* Large writes block on a full pipe after copying (system CPU time, which
 * advances the thread's timer): the usual way a sample lands in a call. */
static void *writer(void *p)
{
	int fd = *(int *)p;
	static char chunk[1 << 20];
	while (atomic_load(&io_run))
		note(write(fd, chunk, sizeof chunk), "write");
	close(fd);
	return NULL;
}

static void *reader(void *p)
{
	int fd = *(int *)p;
	static _Thread_local char chunk[1 << 16];
	ssize_t r;
	while ((r = read(fd, chunk, sizeof chunk)) != 0) {
		note(r, "read");
		if (r < 0 && errno != EINTR)
			break;
	}
	close(fd);
	return NULL;
}

/* flock and pthread_mutex_lock contention: the holder spins, the other
 * blocks. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static void *locker(void *p)
{
	int fd = *(int *)p;
	while (atomic_load(&io_run)) {
		note(flock(fd, LOCK_EX), "flock");
		burn(0.002);
		flock(fd, LOCK_UN);
		int rc = pthread_mutex_lock(&mu);
		if (rc == EINTR)
			atomic_fetch_add(&eintr_seen, 1);
		burn(0.002);
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

/* A child that burns about 10 ms of CPU and exits 0.  Under TSan, which
 * does not support a child of a multi-threaded process that goes on
 * running, the child execs a shell loop at once (posix_spawn). */
static pid_t busy_child(void)
{
	pid_t pid;
	const char *t = getenv("PROFIL_TEST_TOOL");
	if (t && strcmp(t, "tsan") == 0) {
		char *argv[] = {"sh", "-c", "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done", NULL};
		ASSERT_EQ(posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ), 0);
		return pid;
	}
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		burn(0.01);
		_exit(0);
	}
	return pid;
}

/* Item 5, calls SA_RESTART covers: never EINTR. */
TEST_IMPL(safety_eintr_restarted)
{
	ASSERT_OK(profil_set_hz(PROFIL_HZ_MAX));
	static unsigned short buf[2];
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	atomic_store(&io_run, 1);
	int p[2], s[2], wfd[2], rfd[2];
	ASSERT_OK(pipe(p));
	ASSERT_OK(socketpair(AF_UNIX, SOCK_STREAM, 0, s));
	wfd[0] = p[1], rfd[0] = p[0], wfd[1] = s[0], rfd[1] = s[1];
	pthread_t th[6];
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(pthread_create(&th[2 * i], NULL, writer, &wfd[i]), 0);
		ASSERT_EQ(pthread_create(&th[2 * i + 1], NULL, reader, &rfd[i]), 0);
	}
	char path[] = "/tmp/profil-flock-XXXXXX";
	int f = mkstemp(path);
	ASSERT(f >= 0);
	int lf[2] = {open(path, O_RDWR), open(path, O_RDWR)}; /* two descriptions */
	unlink(path);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(pthread_create(&th[4 + i], NULL, locker, &lf[i]), 0);
	/* waitpid for children that burn CPU, from a thread that does too */
	double end = mono_now() + 1.0;
	int waits = 0;
	while (mono_now() < end) {
		pid_t pid = busy_child();
		burn(0.001);
		int status = -1;
		note(waitpid(pid, &status, 0), "waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			FAIL_AT("child: status %#x", (unsigned)status);
		waits++;
	}
	atomic_store(&io_run, 0);
	for (int i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("%llu samples, %d waits, %d EINTR\n", st.ticks, waits, atomic_load(&eintr_seen));
	ASSERT_EQ(atomic_load(&eintr_seen), 0);
	return 0;
}

/* One blocking wait of `ms` in each call Linux never restarts; returns the
 * EINTRs seen, retrying with the time left. */
static int sleep_each_way(int ms)
{
	int eintr = 0, p[2];
	ASSERT_OK(pipe(p));
	int ep = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN};
	ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev));
	for (int way = 0; way < 4; way++) {
		double t0 = mono_now(), left;
		while ((left = ms / 1e3 - (mono_now() - t0)) > 0.001) {
			int r;
			struct pollfd pf = {p[0], POLLIN, 0};
			struct timespec ts = {0, (long)(left * 1e9)};
			struct timeval tv = {0, (long)(left * 1e6)};
			fd_set rd;
			FD_ZERO(&rd);
			FD_SET(p[0], &rd);
			if (way == 0)
				r = poll(&pf, 1, (int)(left * 1e3));
			else if (way == 1)
				r = epoll_wait(ep, &ev, 1, (int)(left * 1e3));
			else if (way == 2)
				r = select(p[0] + 1, &rd, NULL, NULL, &tv);
			else
				r = nanosleep(&ts, NULL);
			if (r < 0 && errno == EINTR)
				eintr++;
			else if (r != 0)
				FAIL_AT("way %d returned %d: %s", way, r, strerror(errno));
		}
	}
	close(ep), close(p[0]), close(p[1]);
	return eintr;
}

/* Item 5, calls never restarted (signal(7)): a thread asleep in them uses
 * no CPU, so its timer does not advance and no sample interrupts it.  The
 * one window is the few microseconds of CPU the call spends before it
 * sleeps; a thread calling them in a busy loop can see a rare EINTR. */
TEST_IMPL(safety_eintr_never_restarted)
{
	ASSERT_OK(profil_set_hz(PROFIL_HZ_MAX));
	static unsigned short buf[2];
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	struct spinners sp;
	spinners_start(&sp, 2);
	int asleep = sleep_each_way(150);
	/* the busy-loop case, for the record */
	int busy = 0, calls = 0;
	double end = mono_now() + 0.5;
	while (mono_now() < end) {
		burn(0.0002);
		struct pollfd pf = {-1, 0, 0};
		busy += poll(&pf, 1, 0) < 0 && errno == EINTR;
		calls++;
	}
	spinners_stop(&sp);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("sleeping: %d EINTR in 4 waits; busy poll: %d EINTR in %d calls\n",
	       asleep, busy, calls);
	ASSERT(asleep <= 1); /* 1: the entry window, about 1 in 1000 waits */
	ASSERT(busy <= calls / 20);
	return 0;
}

/* Item 8: RLIMIT_SIGPENDING (each timer holds a queued signal). */
TEST_IMPL(safety_limit_sigpending)
{
	static unsigned short buf[2];
	struct spinners sp;
	spinners_start(&sp, 3);
	struct proc_state before, after;
	proc_state_get(&before);
	struct rlimit old, lim;
	ASSERT_OK(getrlimit(RLIMIT_SIGPENDING, &old));
	for (rlim_t n = 0; n <= 2; n += 2) { /* none, and fewer than threads */
		lim = old;
		lim.rlim_cur = n;
		ASSERT_OK(setrlimit(RLIMIT_SIGPENDING, &lim));
		ASSERT_ERR(profil(buf, sizeof buf, 0, 2), EAGAIN);
		ASSERT_OK(setrlimit(RLIMIT_SIGPENDING, &old));
		proc_state_get(&after);
		proc_state_same(&before, &after);
		struct profil_stats st;
		ASSERT_OK(profil_get_stats(&st));
		ASSERT_EQ(st.engine, PROFIL_ENGINE_OFF);
		ASSERT_EQ(st.threads, 0);
	}
	ASSERT_OK(profil(buf, sizeof buf, 0, 2)); /* and it recovers */
	burn(0.05);
	ASSERT(__atomic_load_n(&buf[0], __ATOMIC_RELAXED) > 0);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	spinners_stop(&sp);
	return 0;
}

/* Item 8: no file descriptor left for /proc: EMFILE, nothing changed. */
TEST_IMPL(safety_limit_fds)
{
	static unsigned short buf[2];
	struct proc_state before, after;
	proc_state_get(&before);
	struct rlimit old, lim;
	ASSERT_OK(getrlimit(RLIMIT_NOFILE, &old));
	int fds[64], n = 0;
	lim = old;
	lim.rlim_cur = (rlim_t)before.nfd + 8;
	ASSERT_OK(setrlimit(RLIMIT_NOFILE, &lim));
	while (n < 64 && (fds[n] = dup(0)) >= 0)
		n++;
	ASSERT(n < 64);
	errno = 0;
	int r = profil(buf, sizeof buf, 0, 2);
	int e = errno;
	while (n > 0)
		close(fds[--n]);
	ASSERT_OK(setrlimit(RLIMIT_NOFILE, &old));
	printf("profil with no fd: %d (%s)\n", r, strerror(e));
	ASSERT_EQ(r, -1);
	ASSERT(e == EMFILE);
	proc_state_get(&after);
	proc_state_same(&before, &after);
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	return 0;
}

static void *nothing(void *p)
{
	return p;
}

/* Item 8: thread creation failing.  profil() degrades (no sweeper: only
 * threads created through pthread_create are covered after the start);
 * the program's own pthread_create fails as it would, leaking nothing. */
TEST_IMPL(safety_limit_threads)
{
	if (skip_under("tsan", "TSan's pthread_create ignores the default stack size") ||
	    skip_under("valgrind", "valgrind's threads ignore the default stack size"))
		return 0;
	static unsigned short buf[2];
	pthread_attr_t huge, normal;
	ASSERT_EQ(pthread_getattr_default_np(&normal), 0);
	pthread_attr_init(&huge);
	ASSERT_EQ(pthread_attr_setstacksize(&huge, (size_t)1 << 46), 0);
	ASSERT_EQ(pthread_setattr_default_np(&huge), 0);
	pthread_t th;
	int rc = pthread_create(&th, NULL, nothing, NULL);
	ASSERT(rc == EAGAIN || rc == ENOMEM);
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
	rc = pthread_create(&th, NULL, nothing, NULL);
	ASSERT(rc == EAGAIN || rc == ENOMEM);
	burn(0.05);
	ASSERT(buf[0] > 0);
	ASSERT_EQ(pthread_setattr_default_np(&normal), 0);
	struct spinners sp;
	spinners_start(&sp, 2);
	burn(0.05);
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_EQ(st.threads, 3);
	spinners_stop(&sp);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	pthread_attr_destroy(&huge);
	pthread_attr_destroy(&normal);
	return 0;
}
