/*
 * storms.h - background storms for the stress mix (test-safety-stress.c,
 * `make stress`): threads created and joined without pause, vfork, fork
 * and exec, dlopen/dlclose of a library that is being sampled, and
 * signals sent to the process, all while other threads start, stop and
 * reconfigure profiling.  Each storm counts what it did; what should
 * never happen (a child that did not exit 0, a handler that never ran,
 * a failed call) is counted as an anomaly, printed, and fails the test.
 */
#ifndef PROFIL_TEST_STORMS_H
#define PROFIL_TEST_STORMS_H

#include "safety.h"

#include <dlfcn.h>
#include <sys/wait.h>

struct storms {
	atomic_int run;
	pthread_t th[4];
	atomic_ulong threads, vforks, forks, execs, dlopens, sent, seen, anomalies;
	char lib[4096];
	int child_calls; /* fork children call the library (not under ASan) */
};

/* GCC 12's ASan allocator is not fork-safe: a lock another thread held
 * at fork() stays held in the child, and the child's first allocation
 * (ours in profil(), or ASan's own before a longjmp) hangs.  glibc's
 * malloc takes its locks around fork(), so the plain build checks what
 * fork children of a busy process may do; under ASan they only exit. */
static int fork_children_may_allocate(void)
{
	return !skip_under("asan", "GCC 12 ASan's allocator is not fork-safe: "
	                   "fork children of the storms only exit");
}

static struct storms *storms_now; /* for the signal handler */

#define STORM_ANOMALY(s, ...) do { \
	fprintf(stderr, "anomaly: " __VA_ARGS__); \
	fputc('\n', stderr); \
	atomic_fetch_add(&(s)->anomalies, 1); \
} while (0)

static void storm_nap(void)
{
	struct timespec ts = {0, 200000}; /* 0.2 ms; EINTR just ends it */
	nanosleep(&ts, NULL);
}

static void *storm_short_thread(void *p)
{
	burn(0.0002);
	return p;
}

static void *storm_threads(void *p)
{
	struct storms *s = p;
	while (atomic_load(&s->run)) {
		pthread_t th[8];
		int n = 0;
		for (int i = 0; i < 8; i++)
			if (pthread_create(&th[n], NULL, storm_short_thread, NULL) == 0)
				n++;
		for (int i = 0; i < n; i++)
			pthread_join(th[i], NULL);
		atomic_fetch_add(&s->threads, (unsigned long)n);
	}
	return NULL;
}

/* The child of vfork never leaves these frames (it must not return into
 * its parent's stack): it exits, or execs /bin/true. */
__attribute__((noinline)) static pid_t storm_vfork_exit(void)
{
	pid_t pid = vfork();
	if (pid == 0)
		_exit(0);
	return pid;
}

__attribute__((noinline)) static pid_t storm_vfork_exec(void)
{
	pid_t pid = vfork();
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(4);
	}
	return pid;
}

/* vfork then _exit, vfork then exec, fork then a library call in the
 * child (its atfork handlers must leave it usable) */
static void *storm_forks(void *p)
{
	struct storms *s = p;
	for (unsigned k = 0; atomic_load(&s->run); k++) {
		pid_t pid;
		if (k % 3 == 0) {
			pid = storm_vfork_exit();
			atomic_fetch_add(&s->vforks, 1);
		} else if (k % 3 == 1) {
			pid = storm_vfork_exec();
			atomic_fetch_add(&s->execs, 1);
		} else {
			pid = fork();
			if (pid == 0 && !s->child_calls)
				_exit(0);
			if (pid == 0) {
				struct profil_stats st;
				_exit(profil_get_stats(&st) == 0 && profil(no_buf, 0, 0, 0) == 0 ? 0 : 5);
			}
			atomic_fetch_add(&s->forks, 1);
		}
		int status = 0;
		if (pid < 0)
			STORM_ANOMALY(s, "fork/vfork failed: %s", strerror(errno));
		else if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		         WEXITSTATUS(status) != 0)
			STORM_ANOMALY(s, "child %d status %#x (mode %u)", (int)pid, status, k % 3);
	}
	return NULL;
}

/* A library opened, run (so samples fall in it) and closed. */
static void *storm_dlopen(void *p)
{
	struct storms *s = p;
	while (atomic_load(&s->run)) {
		void *h = dlopen(s->lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			STORM_ANOMALY(s, "dlopen %s: %s", s->lib, dlerror());
			storm_nap();
			continue;
		}
		unsigned long (*spin)(unsigned long) =
			(unsigned long (*)(unsigned long))dlsym(h, "spinlib_spin");
		if (spin)
			spin(20000);
		else
			STORM_ANOMALY(s, "dlsym spinlib_spin: %s", dlerror());
		dlclose(h);
		atomic_fetch_add(&s->dlopens, 1);
	}
	return NULL;
}

static void storm_handler(int sig)
{
	(void)sig;
	if (storms_now)
		atomic_fetch_add(&storms_now->seen, 1);
}

/* Process-directed signals: any thread may take them, including one in
 * the middle of a profil() call, which must not fail with EINTR. */
static void *storm_signals(void *p)
{
	struct storms *s = p;
	static const int sigs[] = {SIGUSR1, SIGUSR2, SIGALRM};
	for (unsigned k = 0; atomic_load(&s->run); k++) {
		if (kill(getpid(), sigs[k % 3]) != 0)
			STORM_ANOMALY(s, "kill: %s", strerror(errno));
		atomic_fetch_add(&s->sent, 1);
		storm_nap();
	}
	return NULL;
}

static void *storm_idle(void *p)
{
	return p;
}

static void storms_start(struct storms *s)
{
	memset(s, 0, sizeof *s);
	char self[4000]; /* room for the name after it in lib[] */
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	ASSERT(n > 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(s->lib, sizeof s->lib, "%s/libspin.so", self);
	s->child_calls = fork_children_may_allocate();
	storms_now = s;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = storm_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	ASSERT_OK(sigaction(SIGUSR1, &sa, NULL));
	ASSERT_OK(sigaction(SIGUSR2, &sa, NULL));
	ASSERT_OK(sigaction(SIGALRM, &sa, NULL));
	atomic_store(&s->run, 1);
	void *(*fn[4])(void *) = {storm_threads, storm_forks, storm_dlopen, storm_signals};
	/* PROFIL_STORMS=mask runs some only (1 threads, 2 forks, 4 dlopen,
	 * 8 signals), to find which one an anomaly needs */
	const char *m = getenv("PROFIL_STORMS");
	unsigned mask = m && *m ? (unsigned)strtoul(m, NULL, 0) : 15;
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(pthread_create(&s->th[i], NULL, mask & (1u << i) ? fn[i] : storm_idle, s), 0);
}

/* Stops the storms; returns the operations they did. */
static unsigned long storms_stop(struct storms *s)
{
	atomic_store(&s->run, 0);
	for (int i = 0; i < 4; i++)
		pthread_join(s->th[i], NULL);
	if (atomic_load(&s->sent) > 0 && atomic_load(&s->seen) == 0)
		STORM_ANOMALY(s, "%lu signals sent, none handled", atomic_load(&s->sent));
	printf("storms: %lu threads, %lu vforks, %lu forks, %lu vfork+execs, %lu dlopen/dlclose, "
	       "%lu signals sent (%lu handled)\n", atomic_load(&s->threads), atomic_load(&s->vforks),
	       atomic_load(&s->forks), atomic_load(&s->execs), atomic_load(&s->dlopens),
	       atomic_load(&s->sent), atomic_load(&s->seen));
	return atomic_load(&s->threads) + atomic_load(&s->vforks) + atomic_load(&s->forks) +
	       atomic_load(&s->execs) + atomic_load(&s->dlopens) + atomic_load(&s->sent);
}

#endif
