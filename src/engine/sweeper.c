/*
 * sweeper.c - the fallback for threads no hook saw.
 *
 * Threads created before profiling started are found by timers_start();
 * threads created through pthread_create get a timer in threads.c.  A
 * thread made some other way (a raw clone, a runtime that bypasses the
 * interposed symbol) would go unsampled, and a thread that exited without
 * our trampoline would leave a timer behind.  This helper thread rescans
 * /proc/self/task every SWEEP_MS while profiling is on.  It never blocks
 * on the engine lock (it tries, and skips a round if busy; its start hook
 * publishes with engine_publish_helper(), which gives up once it is asked
 * to quit), so the engine may join it while holding the lock.  It blocks
 * every signal and is excluded from sampling.  It never calls the
 * program's allocator (base/alloc.c).
 *
 * It also carries out what must not be done where it is asked for: a
 * program that installs a handler on the sampling signal, maybe from a
 * signal handler, only records that the samples must move (handover.c)
 * and wakes the sweeper with sweeper_wake(), a futex wake, which is
 * async-signal-safe where a condition variable is not.
 *
 * It must not outlive the program's threads (issue 9): each sweep asks
 * lastthread.c whether they have all ended, and if so returns.
 *
 * It has a descriptor table of its own, empty (issue 9).  Its sweeps open
 * /proc files, and the kernel hands out the lowest free number: in the
 * program's table that number was, for a moment, ours.  A program that
 * closed a descriptor and dup2()ed another onto it in that moment had
 * its new descriptor closed by our closedir() (CPython's
 * test_swap_std_fds_with_one_closed, EBADF); holding the files open at a
 * high number instead showed them to programs that list their
 * descriptors (test_pass_fds_redirected).  close_range(CLOSE_RANGE_UNSHARE)
 * over every number gives the thread a new table and copies nothing into
 * it, atomically: it never holds a reference to a file of the program
 * (a pipe's write end it kept would withhold the reader's end of file),
 * and nothing it opens can take, or be taken for, a number of the
 * program's.  Not with the perf engine, whose descriptors this thread
 * opens and closes and which must live in the program's table (they sit
 * high: perf_engine.c); not under a seccomp filter, which might kill on
 * a call the program never makes; not before Linux 5.9 (no close_range).
 * There the sweeps still use the shared table, as before.
 */
#include "engine/engine_int.h"
#include "engine/perf_engine.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <dlfcn.h>
#include <threads.h>

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/*
 * Static links.  dlsym(RTLD_NEXT) finds nothing in a statically linked
 * program, so libc's function is then taken under its internal name, weak
 * here (libc.so does not export it, and a dynamic link needs none).  In
 * libc.a it is defined in pthread_create.o next to a weak pthread_create,
 * which ours overrides; the reference to thrd_create below makes the
 * static linker load that object (thrd_create.o calls __pthread_create),
 * and costs nothing in a dynamic link, where libc.so exports thrd_create.
 */
extern create_fn __pthread_create __attribute__((weak));
static void *const pull_libc_create __attribute__((used)) = (void *)&thrd_create;

create_fn *threads_real_create(void)
{
	static create_fn *_Atomic real;
	create_fn *f = atomic_load_explicit(&real, memory_order_acquire);
	if (!f) {
		f = (create_fn *)dlsym(RTLD_NEXT, "pthread_create");
		if (!f)
			f = __pthread_create;
		atomic_store_explicit(&real, f, memory_order_release);
	}
	return f;
}

/* Used by our own helper thread, which must not be sampled. */
int threads_create_raw(pthread_t *th, const pthread_attr_t *attr,
                       void *(*fn)(void *), void *arg)
{
#ifdef PROFIL_NO_HOOK
	return pthread_create(th, attr, fn, arg); /* TSan's, which knows it */
#else
	create_fn *create = threads_real_create();
	return create ? create(th, attr, fn, arg) : EAGAIN;
#endif
}


#define SWEEP_MS 100

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

/* Decided by sweeper_start() in the caller's thread (reading
 * /proc/self/status there is a library call's transient descriptor, as
 * glibc's own are), read by the new thread: pthread_create orders them. */
static int own_table_allowed;

/* The calling thread's own empty descriptor table; 0, or -1 (shared). */
static int own_fd_table(void)
{
#ifdef SYS_close_range
	if (own_table_allowed)
		return (int)syscall(SYS_close_range, 0U, ~0U, CLOSE_RANGE_UNSHARE);
#endif
	return -1;
}

/* Set once by the profil agent (agent/) before profiling starts. */
void (*_Atomic sweeper_tick_hook)(void);
void (*_Atomic sweeper_start_hook)(void);

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_t thread;  /* mu */
static int running;       /* mu */
static atomic_int quit;
/* Bumped by every wake; the sweeper sleeps while it is unchanged.  Also
 * by the sampling handler, with a futex wake of its own (switchwatch.h). */
atomic_int sweeper_wakes;

static void futex_wait(atomic_int *word, int seen, long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
}

void sweeper_wake(void)
{
	int e = errno;
	atomic_fetch_add(&sweeper_wakes, 1);
	syscall(SYS_futex, &sweeper_wakes, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	errno = e;
}

/* Whether the run's events are descriptors in the program's table (the
 * fasync delivery); sigtrap events are held by mappings (perf_mapped.c),
 * which any descriptor table can make and unmap. */
static int events_in_table(void)
{
	return perf_engine_on() && !perf_engine_trap();
}

/* The helper's kernel thread id, stored first thing by sweep(): once
 * pthread_join() has returned it is this run's (sweeper_pause()). */
static _Atomic pid_t sweeper_tid;

/* Set by the agent when its recording is over (sweeper_retire()). */
static _Atomic int retiring;

void sweeper_retire(void)
{
	atomic_store(&retiring, 1);
	sweeper_wake();
}

/* The helper ends itself: detached, unless a stop is already joining it
 * (it set running to 0 first, under mu), which then goes on as usual. */
static void leave_by_itself(void)
{
	pthread_mutex_lock(&mu);
	if (running) {
		running = 0;
		timers_exclude(0);
		pthread_detach(pthread_self());
	}
	pthread_mutex_unlock(&mu);
}

static void *sweep(void *unused)
{
	(void)unused;
	pid_t self = (pid_t)syscall(SYS_gettid);
	atomic_store(&sweeper_tid, self);
	sigstate_thread_blocks_all(); /* sweeper_start() blocked them for us */
	timers_exclude(self);
	void (*start_hook)(void) = atomic_load(&sweeper_start_hook);
	if (start_hook)
		start_hook();
	/* The main thread's own stat, not the process's: the same state and
	 * thread count, without the kernel summing every thread's counters
	 * (do_task_stat() for the whole group: 7% of the idle cost with
	 * 1,000 threads).  Kept open in a table of its own (no number of the
	 * program's is taken), opened anew each sweep otherwise: the path
	 * lookup cost a fifth of the idle sweeps with 1,000 threads. */
	char leader_stat[64]; /* by the number /proc gives it (tasklist.c) */
	if (proc_task_path(leader_stat, sizeof leader_stat, getpid(), "stat") != 0)
		leader_stat[0] = '\0';
	int leader_fd = -1, set_up = 0, own_table = 0;
	int seen = atomic_load(&sweeper_wakes);
	/* A wake for a library being loaded may have come before `seen` was
	 * read, while the thread was being made for it (agent/dlopen.c): its
	 * flag, set before the wake, is seen here then. */
	long ms = atomic_load(&sample_load_wake) ? 0 : SWEEP_MS;
	while (!atomic_load(&quit)) {
		futex_wait(&sweeper_wakes, seen, ms); /* a wake since `seen`: at once */
		seen = atomic_load(&sweeper_wakes);
		if (atomic_load(&quit))
			break;
		/* Set up at the first sweep, not at birth: most forked children
		 * exec or exit within a millisecond, and the table of our own
		 * (close_range) and the open cost them 0.1-0.2 ms each.  Until
		 * then this thread opens nothing.  Failing a table of its own,
		 * the shared one: as before. */
		if (!set_up) {
			set_up = 1;
			if ((own_table = own_fd_table() == 0)) {
				leader_fd = open(leader_stat, O_RDONLY | O_CLOEXEC);
				helper_files_own_table();
			}
		}
		ms = SWEEP_MS;
		unsigned int nthreads = 0;
		char main_state = leader_fd >= 0 ? engine_stat_state_at(leader_fd, &nthreads)
		                  : leader_stat[0] ? engine_stat_state_of(leader_stat, &nthreads)
		                                   : 0;
		if (engine_trylock() == 0) {
			/* A run on perf events started since (a reap ended ours
			 * and kept us): its descriptors are in the program's
			 * table, not ours, and a drop here would close some other
			 * number while the event went on signalling, past the
			 * stop (SIGPROF killed safety_concurrent_callers once in
			 * 60 runs on perf events).  Leave it untouched and end:
			 * sweeper_start() replaces us. */
			if (own_table && events_in_table()) {
				engine_unlock();
				break;
			}
			engine_reap();
			int released = !timers_signal();
			signal_settle();
			if (signal_check_taken())
				engine_signal_taken();
			timers_rescan(nthreads, main_state ? engine_state_ended(main_state) : -1);
			engine_unlock();
			if (released && atomic_load(&retiring)) {
				leave_by_itself(); /* nothing is sampled any more */
				break;
			}
		} else {
			ms = 5; /* a move may be waiting: try again soon */
		}
		atomic_store(&sample_load_wake, 0); /* before the poll it asked for */
		void (*hook)(void) = atomic_load(&sweeper_tick_hook);
		if (hook) /* the agent's module poll: no engine lock held */
			hook();
		if (sweeper_alone(self, main_state))
			break; /* the program has ended: glibc's exit(0) follows */
	}
	if (leader_fd >= 0)
		close(leader_fd);
	return NULL;
}

/*
 * The helper's stack.  The default is the stack limit, 8 MiB as a rule,
 * all of it address space the program's own counts against RLIMIT_AS
 * (ulimit -v): a program that ran under such a limit failed to make its
 * own threads once the agent had taken 9 MiB of ring and 8 MiB of stack.
 * The helper's deepest path (a /proc read into a 16 KiB buffer, a
 * thread listing into 2 KiB, a path resolved into PATH_MAX) uses a few
 * tens of KiB.  glibc refuses
 * a stack too small for the static TLS of every loaded object (EINVAL):
 * then the default.
 */
#define HELPER_STACK (512u << 10)

static int create_helper(pthread_t *th)
{
	pthread_attr_t attr;
	int rc = EINVAL;
	if (pthread_attr_init(&attr) == 0) {
		if (pthread_attr_setstacksize(&attr, HELPER_STACK) == 0)
			rc = threads_create_raw(th, &attr, sweep, NULL);
		pthread_attr_destroy(&attr);
	}
	return rc == EINVAL ? threads_create_raw(th, NULL, sweep, NULL) : rc;
}

int sweeper_start(void)
{
	/* A helper with a table of its own cannot serve a run on perf events,
	 * whose descriptors it opens and closes and which live in the
	 * program's table: one still running from a run on timers (a reap
	 * ends a run and keeps its helper: engine_reap()) is replaced.  It
	 * once closed a reaped run's events in its own table, leaving the
	 * program's enabled after the signal's default action came back. */
	pthread_mutex_lock(&mu);
	int replace = running && own_table_allowed && events_in_table();
	pthread_mutex_unlock(&mu);
	if (replace)
		sweeper_stop();
	pthread_mutex_lock(&mu);
	int rc = 0;
	if (!running) {
		sigset_t all, old;
		sigfillset(&all);
		fault_real_sigmask(SIG_SETMASK, &all, &old); /* inherited by it */
		atomic_store(&quit, 0);
		own_table_allowed = !events_in_table() && !engine_seccomp_filtered();
		rc = create_helper(&thread);
		fault_real_sigmask(SIG_SETMASK, &old, NULL);
		running = rc == 0;
	}
	pthread_mutex_unlock(&mu);
	if (rc != 0)
		errno = rc;
	return rc ? -1 : 0;
}

int sweeper_quitting(void)
{
	return atomic_load(&quit);
}

void sweeper_stop(void)
{
	lazy_helper_clear();
	pthread_mutex_lock(&mu);
	if (!running) {
		pthread_mutex_unlock(&mu);
		return;
	}
	atomic_store(&quit, 1);
	running = 0;
	sweeper_wake();
	pthread_t t = thread;
	pthread_mutex_unlock(&mu);
	pthread_join(t, NULL);
	timers_exclude(0);
}

/* pthread_join() returns when the kernel clears the thread's id word
 * (its memory released, in exit_mm()), but the thread stays in the
 * thread group until it is reaped later in its exit: a call that needs
 * the process single-threaded, unshare(CLONE_NEWUSER), made in between
 * was refused with EINVAL (7 runs in 100 of creds_unshare_user_namespace).
 * The id is unhashed in the same step that takes the thread out of the
 * group, so once tgkill() says ESRCH the process has one thread less.
 * Bounded (20,000 naps of 50 us, a second or so), then the call is made
 * as it is. */
static void wait_thread_reaped(pid_t tid)
{
	pid_t pid = getpid();
	struct timespec nap = {0, 50 * 1000};
	for (int i = 0; i < 20000; i++) {
		if (syscall(SYS_tgkill, pid, tid, 0) != 0 && errno == ESRCH)
			return;
		nanosleep(&nap, NULL);
	}
}

int sweeper_pause(void)
{
	pthread_mutex_lock(&mu);
	int was = running;
	pthread_mutex_unlock(&mu);
	if (was) {
		sweeper_stop();
		int e = errno;
		wait_thread_reaped(atomic_load(&sweeper_tid));
		errno = e;
	}
	return was;
}

void sweeper_resume(void)
{
	sweeper_start();
}

/* In a forked child the helper thread does not exist. */
void sweeper_forget(void)
{
	lazy_helper_clear();
	pthread_mutex_init(&mu, NULL);
	running = 0;
	atomic_store(&quit, 0);
}
