/*
 * sigevwrap.c - the threads that run a timer's SIGEV_THREAD notifications
 * are sampled.
 *
 * glibc runs each expiry of a timer made with SIGEV_THREAD in a new
 * thread, made by its own internal pthread_create (no interposer sees it)
 * with every signal blocked, so that the timer's signal stays with its
 * helper thread: the sampling signal too.  A callback that burned 300 ms
 * was never sampled, and its time was counted at the process's exit.
 * timer_create() is interposed: a SIGEV_THREAD request gets
 * profil_notification_start() as its function, which in the notification
 * thread does what pthread_create's trampoline does, with its halves
 * (threads.c): the sampling signal unblocked while the program sees the
 * mask glibc gave (maskwrap.c), a timer for the thread from its first
 * instant, its expiries settled at its end; then it calls the program's
 * function.
 *
 * What the trampoline needs, the program's function and value, is a
 * record of ours that glibc passes it as the value.  A notification
 * thread glibc spawned just before timer_delete() may reach the
 * trampoline after it, so a deleted timer's record is freed only
 * RETIRE_NS later (at a later timer_create or timer_delete): the trampoline
 * copies it at its entry, within microseconds of the spawn.  Records are
 * kept in a list under a mutex, in the program's context only (none of
 * this runs in a signal handler).  Not in the static library: a static
 * program has no libc timer_create() to pass the calls to (credwrap.c).
 */
#include "process/process.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#ifndef PROFIL_NO_HOOK

#define API __attribute__((visibility("default")))
#define RETIRE_NS (10 * 1000000000LL)

struct notification {
	void (*fn)(union sigval);
	union sigval value;
	timer_t id;
	int64_t retired_ns; /* 0 while its timer lives */
	struct notification *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct notification *records; /* mu */
/* Whether there are records: the engine's own timers (SIGEV_THREAD_ID,
 * timers.c) come through these functions too, and need no lock. */
static _Atomic int any_records;

static struct {
	int (*create)(clockid_t, struct sigevent *, timer_t *);
	int (*del)(timer_t);
} real;

/* A forked child has none of its parent's timers: their records are not
 * its own (left, not freed: another thread of the parent may have been
 * changing the list at the fork). */
static void forked_child(void)
{
	pthread_mutex_init(&mu, NULL);
	records = NULL;
	atomic_store(&any_records, 0);
}

/* dlsym at load, before the engine makes its own timers; again on first
 * use if another library's constructor came first. */
__attribute__((constructor)) static void sigev_init(void)
{
	if (real.create && real.del)
		return;
	real.create = (int (*)(clockid_t, struct sigevent *, timer_t *))dlsym(RTLD_NEXT,
	                                                                      "timer_create");
	real.del = (int (*)(timer_t))dlsym(RTLD_NEXT, "timer_delete");
	pthread_atfork(NULL, NULL, forked_child);
}

static int64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* mu held: the records of timers deleted long enough ago go. */
static void reclaim_locked(int64_t now)
{
	for (struct notification **p = &records; *p;) {
		struct notification *r = *p;
		if (r->retired_ns && now - r->retired_ns >= RETIRE_NS) {
			*p = r->next;
			mem_free(r);
		} else {
			p = &r->next;
		}
	}
}

/* Named for the stacks it appears in: every notification thread starts
 * here, below glibc's own start. */
static void profil_notification_start(union sigval v)
{
	const struct notification *r = v.sival_ptr;
	void (*fn)(union sigval) = r->fn;
	union sigval value = r->value;
	sigset_t given;
	if (fault_real_sigmask(SIG_BLOCK, NULL, &given) == 0)
		process_mask_adopt(&given); /* as the program's: ours stays open */
	threads_cover_self();
	pthread_cleanup_push(threads_end_covered, (void *)fn);
	fn(value);
	pthread_cleanup_pop(1);
}

API int timer_create(clockid_t clock, struct sigevent *ev, timer_t *id)
{
	sigev_init();
	if (!real.create) {
		errno = ENOSYS;
		return -1;
	}
	if (!ev || ev->sigev_notify != SIGEV_THREAD || !ev->sigev_notify_function)
		return real.create(clock, ev, id);
	struct notification *r = mem_calloc(1, sizeof *r);
	if (!r) /* no record: the timer as asked, its notifications unsampled */
		return real.create(clock, ev, id);
	r->fn = ev->sigev_notify_function;
	r->value = ev->sigev_value;
	struct sigevent ours = *ev;
	ours.sigev_notify_function = profil_notification_start;
	ours.sigev_value.sival_ptr = r;
	int rc = real.create(clock, &ours, id);
	int e = errno;
	pthread_mutex_lock(&mu);
	reclaim_locked(monotonic_ns());
	if (rc == 0) {
		r->id = *id;
		r->next = records;
		records = r;
	}
	atomic_store(&any_records, records != NULL);
	pthread_mutex_unlock(&mu);
	if (rc != 0)
		mem_free(r);
	errno = e;
	return rc;
}

API int timer_delete(timer_t id)
{
	sigev_init();
	if (!real.del) {
		errno = ENOSYS;
		return -1;
	}
	int rc = real.del(id);
	int e = errno;
	if (rc == 0 && atomic_load(&any_records)) {
		int64_t now = monotonic_ns();
		pthread_mutex_lock(&mu);
		reclaim_locked(now);
		for (struct notification *r = records; r; r = r->next)
			if (!r->retired_ns && r->id == id) {
				r->retired_ns = now;
				break;
			}
		atomic_store(&any_records, records != NULL);
		pthread_mutex_unlock(&mu);
	}
	errno = e;
	return rc;
}

#endif
