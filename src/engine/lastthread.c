/*
 * lastthread.c - whether the program's threads have all ended, and the
 * state and start time of a thread from its /proc stat file.
 *
 * Why the helper thread asks (sweeper.c, issue 9): a process ends when
 * its last thread does.  glibc calls exit(0) when the last pthread
 * returns from its start routine or calls pthread_exit, but it counts
 * the helper among them, so a program whose main thread had called
 * pthread_exit, or a child forked by a thread other than the main one
 * (whose one thread is then such a pthread), would linger for ever as a
 * zombie leader and the helper, every signal blocked, unkillable but by
 * SIGKILL.  So each sweep asks sweeper_alone() whether the program's
 * threads have all ended and, if so, returns: glibc then ends the
 * process with exit(0) as it would have without us, at most a sweep
 * late.  "The program's threads" as glibc counts them: the main thread
 * and the pthreads, not threads made by raw clone() (a runtime's, or a
 * sanitizer's own: TSan's background thread kept the helper waiting).
 */
#include "engine/engine_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *engine_stat_field(const char *buf, int n)
{
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return NULL;
	p += 2; /* field 3, the state */
	for (int k = 3; k < n && p; k++)
		p = strchr(p, ' '), p = p ? p + 1 : NULL;
	return p;
}

int engine_thread_stat(pid_t tid, char *buf, size_t size)
{
	char path[64];
	if (proc_task_path(path, sizeof path, tid, "stat") != 0)
		return -1; /* ENOTSUP: not ENOENT, which says the thread is gone */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* Field 22 of /proc/self/task/TID/stat (starttime: clock ticks after
 * boot); 0 if unreadable, with errno ENOENT when the thread is gone. */
unsigned long long engine_thread_start(pid_t tid)
{
	char buf[512];
	if (engine_thread_stat(tid, buf, sizeof buf) != 0)
		return 0;
	const char *start = engine_stat_field(buf, 22);
	return start ? base_strtoull(start, NULL, 10) : 0;
}

/* A thread's state letter (field 3) from the text of a /proc stat file,
 * 0 if unknown.  *nthreads, if asked: num_threads (field 20), 0 if
 * unknown. */
static char parse_stat(char *buf, unsigned int *nthreads)
{
	const char *state = engine_stat_field(buf, 3);
	if (!state)
		return 0;
	const char *f = nthreads ? engine_stat_field(buf, 20) : NULL;
	if (f)
		*nthreads = (unsigned int)base_strtoull(f, NULL, 10);
	return *state;
}

char engine_stat_state_at(int fd, unsigned int *nthreads)
{
	char buf[1024];
	if (nthreads)
		*nthreads = 0;
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0) /* ESRCH: the task has been reaped */
		return n < 0 && errno == ESRCH ? 'X' : 0;
	buf[n] = '\0';
	return parse_stat(buf, nthreads);
}

char engine_stat_state_of(const char *path, unsigned int *nthreads)
{
	if (nthreads)
		*nthreads = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) /* a task reaped since the listing has ended */
		return errno == ENOENT || errno == ESRCH ? 'X' : 0;
	char state = engine_stat_state_at(fd, nthreads);
	close(fd);
	return state;
}

int engine_state_ended(char state)
{
	return state == 'Z' || state == 'X' || state == 'x';
}

/*
 * Whether the program's threads have all ended: the main thread (the
 * leader stays listed, as a zombie, until the whole process ends; its
 * state comes from the stat every sweep reads) and every pthread.  Those made
 * through our pthread_create are counted (program_threads, kept by their
 * trampoline in threads.c; atomic: changed by the threads themselves,
 * counted up before a thread exists, down as its last act); a pthread
 * made before the library was loaded is not, and would only make the
 * sweeper leave early: glibc's own count still decides whether the
 * process ends, and profiling goes on without a sweeper.  No thread can
 * be created once all have ended, so a yes is final.  Where our
 * pthread_create is not interposed (a TSan build), every other listed
 * thread must have ended.  No /proc: no.
 */
static atomic_int program_threads;
static atomic_ulong thread_events;

void sweeper_thread_born(void)
{
	atomic_fetch_add(&program_threads, 1);
	atomic_fetch_add(&thread_events, 1);
}

void sweeper_thread_gone(void)
{
	atomic_fetch_sub(&program_threads, 1);
	atomic_fetch_add(&thread_events, 1);
}

void sweeper_threads_reset(int n)
{
	atomic_store(&program_threads, n);
	atomic_fetch_add(&thread_events, 1);
}

unsigned long sweeper_thread_events(void)
{
	return atomic_load(&thread_events);
}

static int still_running(pid_t tid, void *self)
{
	char path[64];
	if (tid == *(pid_t *)self)
		return 0;
	base_fmt(path, sizeof path, "/proc/self/task/%ld/stat", (long)tid);
	return !engine_state_ended(engine_stat_state_of(path, NULL));
}

int sweeper_alone(pid_t self, char main_state)
{
	if (!engine_state_ended(main_state))
		return 0;
#ifndef PROFIL_NO_HOOK
	return atomic_load(&program_threads) == 0;
#endif
	/* a thread other than self that has not ended stops the listing */
	return tasklist_each(still_running, &self) == 0;
}
