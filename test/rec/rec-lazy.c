/*
 * rec-lazy.c - when the agent makes its helper thread (src/engine/
 * lazy_helper.c): not at a start or a fork, but at the first safe point
 * after 50 ms of the main thread's CPU time.  Each mode prints the
 * number of threads the process has ("threads N", from /proc/self/task)
 * at the moment that tells, and burns its CPU time in a function named
 * for the case, so that the profile shows it was sampled all along.
 *
 *   rec-lazy start UNITS    threads at once (1: no helper yet), then
 *                           UNITS in main's own code, then threads (2)
 *   rec-lazy altstack UNITS the same as start, with a 64 KiB alternate
 *                           signal stack set first, as Go sets on its
 *                           threads: the samples run there, and so does
 *                           the helper's making; then "altstack N", how
 *                           deep that stack was written, from its top
 *   rec-lazy fork UNITS     a forked child prints its threads at once
 *                           (1) and execs `rec-lazy start 0`; another
 *                           burns UNITS and prints them (2)
 *   rec-lazy qsort UNITS    UNITS inside qsort()'s comparison function,
 *                           a C library frame below it: no sample there
 *                           proves it safe (1)
 *   rec-lazy handler UNITS  UNITS inside a SIGALRM handler: the signal
 *                           frame is the C library's (1)
 *   rec-lazy thread UNITS   pthread_create() at once, a safe point even
 *                           before 50 ms: 3 threads; then UNITS in each
 *
 *   rec-lazy c11 UNITS      two C11 threads (thrd_create) burn UNITS each in
 *                           c11_hot while main waits in thrd_join: no
 *                           pthread_create, and main burns nothing
 *   rec-lazy sigev UNITS    UNITS in notify_hot, run by a timer's SIGEV_THREAD
 *                           notification: a thread glibc makes itself,
 *                           with every signal blocked, named "notifier";
 *                           main waits for it asleep
 *   rec-lazy clone UNITS    UNITS in clone_hot, on a thread made by the C
 *                           library's clone() (no TLS of its own), named
 *                           "cloned"; main waits for it in a futex, asleep
 *
 * And a forked child's ring file (agent/defer.c), made when it needs one:
 *
 *   rec-lazy forkkill UNITS  a forked child burns UNITS in child_hot,
 *                           tells its parent through a pipe and spins in
 *                           kill_hot until the parent kills it (SIGKILL)
 *   rec-lazy quick UNITS    10 x UNITS forked children, one at a time,
 *                           each ending at once with _exit(0)
 *   rec-lazy shortkids UNITS
 *                           32 MiB touched (a fork copies its page
 *                           tables), then 10 x UNITS children forked
 *                           one at a time in fork_site, each burning
 *                           0.2 ms of CPU there before its _exit(0):
 *                           shorter than a sample period
 *   rec-lazy deepkids UNITS
 *                           the same as shortkids without the heap,
 *                           fork_site called DEEP_KIDS_FRAMES frames of
 *                           deep_frame deep: callers too many for the
 *                           walk the agent takes before a fork
 *                           (agent/child.c), so the child walks them
 *   rec-lazy shortthreads UNITS
 *                           10 x UNITS threads made one at a time in
 *                           thread_site, each burning 0.2 ms of CPU in
 *                           short_worker and returning
 *   rec-lazy exitthreads UNITS   the same, each ending by pthread_exit()
 *   rec-lazy cancelthreads UNITS the same, each cancelled at its end
 *                           (deferred cancellation, pthread_testcancel)
 */
#include "rec.h"

#include <dirent.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void say_threads(void)
{
	printf("threads %d\n", threads());
	fflush(stdout);
}

__attribute__((noinline)) static void start_hot(unsigned long units)
{
	REC_BURN(units, 1);
}

__attribute__((noinline)) static void child_hot(unsigned long units)
{
	REC_BURN(units, 2);
}

static unsigned long qsort_units;

__attribute__((noinline)) static int qsort_hot(const void *a, const void *b)
{
	if (qsort_units) {
		REC_BURN(qsort_units, 3);
		qsort_units = 0;
	}
	return memcmp(a, b, sizeof(int));
}

static volatile unsigned long handler_units;

__attribute__((noinline)) static void handler_hot(int sig)
{
	(void)sig;
	REC_BURN(handler_units, 4);
}

__attribute__((noinline)) static void *thread_hot(void *units)
{
	REC_BURN((unsigned long)units, 5);
	return NULL;
}

__attribute__((noinline)) static int c11_hot(void *units)
{
	REC_BURN((unsigned long)units, 8);
	return 5;
}

static int run_c11(unsigned long units)
{
	thrd_t t[2];
	int rc = 0;
	for (int i = 0; i < 2; i++)
		if (thrd_create(&t[i], c11_hot, (void *)units) != thrd_success)
			return 1;
	for (int i = 0; i < 2; i++) {
		int res = 0;
		rc |= thrd_join(t[i], &res) != thrd_success || res != 5;
	}
	return rc;
}

static _Atomic int notified;

__attribute__((noinline)) static void notify_hot(union sigval v)
{
	prctl(PR_SET_NAME, "notifier");
	REC_BURN((unsigned long)v.sival_ptr, 7);
	atomic_store(&notified, 1);
}

static int run_sigev(unsigned long units)
{
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_THREAD;
	ev.sigev_notify_function = notify_hot;
	ev.sigev_value.sival_ptr = (void *)units;
	timer_t t;
	struct itimerspec once = {{0, 0}, {0, 1000000}};
	if (timer_create(CLOCK_MONOTONIC, &ev, &t) != 0 || timer_settime(t, 0, &once, NULL) != 0)
		return 1;
	while (!atomic_load(&notified)) {
		struct timespec nap = {0, 2000000};
		nanosleep(&nap, NULL);
	}
	return timer_delete(t) != 0;
}

/* The thread runs no C library code: it shares main's TLS (no
 * CLONE_SETTLS), so errno and the like are main's. */
__attribute__((noinline)) static int clone_hot(void *units)
{
	syscall(SYS_prctl, PR_SET_NAME, "cloned", 0, 0, 0);
	REC_BURN((unsigned long)units, 9);
	return 0;
}

static int run_clone(unsigned long units)
{
	enum { STACK = 256 * 1024 };
	void *stack = mmap(NULL, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return 1;
	static _Atomic pid_t child_tid;
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
	            CLONE_SYSVSEM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
	pid_t tid = clone(clone_hot, (char *)stack + STACK, flags, (void *)units, &child_tid,
	                  NULL, &child_tid);
	if (tid < 0)
		return 1;
	/* the kernel clears child_tid and wakes it at the thread's exit */
	for (pid_t t; (t = atomic_load(&child_tid)) != 0;)
		syscall(SYS_futex, &child_tid, FUTEX_WAIT, t, NULL, NULL, 0);
	return 0;
}

__attribute__((noinline)) static void kill_hot(void)
{
	for (;;)
		REC_BURN(1, 6);
}

static int run_forkkill(unsigned long units)
{
	int fd[2];
	char c;
	if (pipe(fd) != 0)
		return 1;
	pid_t child = fork();
	if (child == 0) {
		child_hot(units);
		(void)!write(fd[1], "x", 1);
		kill_hot();
	}
	if (child < 0 || read(fd[0], &c, 1) != 1)
		return 1;
	kill(child, SIGKILL);
	int st = 0;
	waitpid(child, &st, 0);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? 0 : 1;
}

static int run_quick(unsigned long units)
{
	for (unsigned long i = 0; i < 10 * units; i++) {
		pid_t child = fork();
		if (child == 0)
			_exit(0);
		if (child < 0 || waitpid(child, NULL, 0) != child)
			return 1;
	}
	return 0;
}

#define SHORT_KID_NS 200000ULL
#define SHORT_HEAP (32u << 20)

static __attribute__((noinline)) int fork_site(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		pid_t child = fork();
		if (child == 0) {
			volatile unsigned long acc = 0;
			unsigned long long end = rec_thread_ns() + SHORT_KID_NS;
			while (rec_thread_ns() < end)
				for (int k = 0; k < 1000; k++)
					acc += (unsigned long)k ^ (acc >> 3);
			_exit(0);
		}
		if (child < 0 || waitpid(child, NULL, 0) != child)
			return 1;
	}
	return 0;
}

/* How short_worker ends: by returning, pthread_exit() or cancellation. */
enum { END_RETURN, END_EXIT, END_CANCEL };
static int thread_end;
static pthread_barrier_t burnt;

static void *short_worker(void *unused)
{
	(void)unused;
	volatile unsigned long acc = 1;
	unsigned long long end = rec_thread_ns() + SHORT_KID_NS;
	while (rec_thread_ns() < end)
		for (int k = 0; k < 1000; k++)
			acc += (unsigned long)k ^ (acc >> 5);
	if (thread_end == END_EXIT)
		pthread_exit(NULL);
	if (thread_end == END_CANCEL) {
		pthread_barrier_wait(&burnt); /* its canceller may go on */
		for (;;)
			pthread_testcancel();
	}
	return NULL;
}

static __attribute__((noinline)) int thread_site(unsigned long n, int how)
{
	thread_end = how;
	if (how == END_CANCEL && pthread_barrier_init(&burnt, NULL, 2) != 0)
		return 1;
	for (unsigned long i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_worker, NULL) != 0)
			return 1;
		if (how == END_CANCEL && (pthread_barrier_wait(&burnt), pthread_cancel(t) != 0))
			return 1;
		if (pthread_join(t, NULL) != 0)
			return 1;
	}
	return 0;
}

static int run_shortkids(unsigned long units)
{
	char *heap = mmap(NULL, SHORT_HEAP, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                  -1, 0);
	if (heap == MAP_FAILED)
		return 1;
	memset(heap, 1, SHORT_HEAP);
	return fork_site(10 * units);
}

#define DEEP_KIDS_FRAMES 60

/* depth frames of itself, then fork_site(n); the sum after the call
 * keeps each frame (no tail call) */
static __attribute__((noinline)) int deep_frame(int depth, unsigned long n)
{
	if (depth == 0)
		return fork_site(n);
	int r = deep_frame(depth - 1, n);
	__asm__ volatile("" : "+r"(r));
	return r;
}

static int run_deepkids(unsigned long units)
{
	return deep_frame(DEEP_KIDS_FRAMES, 10 * units);
}

static int run_fork(const char *self, unsigned long units)
{
	pid_t quick = fork();
	if (quick == 0) {
		say_threads();
		execl(self, self, "start", "0", (char *)NULL);
		_exit(127);
	}
	waitpid(quick, NULL, 0);
	pid_t worker = fork();
	if (worker == 0) {
		child_hot(units);
		say_threads();
		_exit(0);
	}
	int st = 0;
	waitpid(worker, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

#define ALT_SIZE (64 * 1024)
#define ALT_PAINT 0x5a

static unsigned char *alt_set(void)
{
	unsigned char *alt = malloc(ALT_SIZE);
	if (!alt)
		return NULL;
	memset(alt, ALT_PAINT, ALT_SIZE);
	stack_t ss = {.ss_sp = alt, .ss_size = ALT_SIZE, .ss_flags = 0};
	return sigaltstack(&ss, NULL) == 0 ? alt : NULL;
}

static size_t alt_depth(const unsigned char *alt)
{
	for (size_t i = 0; i < ALT_SIZE; i++)
		if (alt[i] != ALT_PAINT)
			return ALT_SIZE - i;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	unsigned long units = strtoul(argv[2], NULL, 10);
	if (strcmp(argv[1], "start") == 0) {
		say_threads();
		if (units) {
			start_hot(units);
			say_threads();
		}
	} else if (strcmp(argv[1], "altstack") == 0) {
		unsigned char *alt = alt_set();
		if (!alt)
			return 1;
		say_threads();
		start_hot(units);
		say_threads();
		printf("altstack %zu\n", alt_depth(alt));
	} else if (strcmp(argv[1], "fork") == 0) {
		return run_fork(argv[0], units);
	} else if (strcmp(argv[1], "forkkill") == 0) {
		return run_forkkill(units);
	} else if (strcmp(argv[1], "quick") == 0) {
		return run_quick(units);
	} else if (strcmp(argv[1], "shortkids") == 0) {
		return run_shortkids(units);
	} else if (strcmp(argv[1], "deepkids") == 0) {
		return run_deepkids(units);
	} else if (strcmp(argv[1], "shortthreads") == 0) {
		return thread_site(10 * units, END_RETURN);
	} else if (strcmp(argv[1], "exitthreads") == 0) {
		return thread_site(10 * units, END_EXIT);
	} else if (strcmp(argv[1], "cancelthreads") == 0) {
		return thread_site(10 * units, END_CANCEL);
	} else if (strcmp(argv[1], "qsort") == 0) {
		int v[2] = {2, 1};
		qsort_units = units;
		qsort(v, 2, sizeof *v, qsort_hot);
		say_threads();
	} else if (strcmp(argv[1], "handler") == 0) {
		handler_units = units;
		signal(SIGALRM, handler_hot);
		raise(SIGALRM);
		say_threads();
	} else if (strcmp(argv[1], "c11") == 0) {
		return run_c11(units);
	} else if (strcmp(argv[1], "sigev") == 0) {
		return run_sigev(units);
	} else if (strcmp(argv[1], "clone") == 0) {
		return run_clone(units);
	} else if (strcmp(argv[1], "thread") == 0) {
		pthread_t t; /* at once: before 50 ms, no sample would make it */
		if (pthread_create(&t, NULL, thread_hot, (void *)units) != 0)
			return 1;
		say_threads();
		start_hot(units);
		pthread_join(t, NULL);
	} else {
		return 2;
	}
	return 0;
}
