/*
 * threads.c - every thread the program creates after profiling started is
 * sampled from its first instruction to its last.
 *
 * pthread_create is interposed (our definition comes before libc's in
 * symbol lookup, whether linked with -lprofil or preloaded).  The new
 * thread runs a trampoline that gives it a timer before the program's
 * start routine and deletes it when the thread exits (return,
 * pthread_exit or cancellation), so exited threads leak no timer.
 * Threads created another way are found by the sweeper (sweeper.c).
 */
#include "internal.h"
#include "unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <threads.h>
#include <unistd.h>

/*
 * Under ThreadSanitizer the program's pthread_create is TSan's, which
 * calls ours, whose trampoline would run in the new thread before TSan
 * has set the thread up (it crashed there).  A TSan build therefore does
 * not interpose: the sweeper covers new threads within SWEEP_MS.
 */
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PROFIL_NO_HOOK 1
#endif
#endif
#ifdef __SANITIZE_THREAD__
#define PROFIL_NO_HOOK 1
#endif


typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct start {
	void *(*fn)(void *);
	void *arg;
};

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

static __attribute__((unused)) create_fn *real_create(void)
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
	create_fn *create = real_create();
	return create ? create(th, attr, fn, arg) : EAGAIN;
#endif
}

#ifndef PROFIL_NO_HOOK

/*
 * At the thread's exit (return, pthread_exit, cancellation): its timer is
 * deleted, and the expiries of its grid it passed but was never sent (the
 * kernel looks at CPU timers only at ticks, so a thread shorter than a tick
 * may never be) are credited now: to the last pc sampled on this thread,
 * or, if none was, to the start routine's first instruction.  The sampling
 * signal is blocked first so the tally cannot change under us, and stays
 * blocked: a signal still queued from the deleted timer would count twice.
 */
static void thread_end(void *start_fn)
{
	engine_lock();
	int sig = timers_signal();
	if (sig) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		struct sample_self me = sample_self;
		unsigned long credited = 0, owed;
		uintptr_t pc = (uintptr_t)start_fn;
		if (me.epoch == atomic_load(&sample_epoch) && me.credited)
			credited = me.credited, pc = me.pc;
		if (timers_reconcile_self(credited, &owed) != 0)
			owed = 0;
		/* weight held back while the thread blocked SIGSEGV/SIGBUS
		 * (sample.c) is written now rather than lost with the thread */
		sample_self.deferred = 0;
		if (owed || me.deferred)
			sample_credit(gettid(), pc, owed, me.deferred);
	}
	engine_unlock();
}

/*
 * Threads made through our pthread_create that have not finished yet,
 * for the sweeper (sweeper.c: it must leave once the program's threads
 * are all gone, as glibc then ends the process).  Atomic: changed by the
 * threads themselves; counted up before the thread exists, down as its
 * last act in our code.  wrapped: this thread is one of them.
 */
static atomic_int live;
static __thread int wrapped;

static void thread_gone(void *unused)
{
	(void)unused;
	atomic_fetch_sub(&live, 1);
}

/* Named for the stacks it appears in: every profiled thread starts here. */
static void *profil_thread_start(void *p)
{
	struct start s = *(struct start *)p;
	free(p);
	wrapped = 1;
	void *ret = NULL;
	pthread_cleanup_push(thread_gone, NULL);
	unwind_note_stack(); /* bounds for the stack walk (unwind.h) */
	engine_lock();
	timers_add_born(); /* failure leaves the thread to the sweeper */
	engine_unlock();
	pthread_cleanup_push(thread_end, (void *)s.fn);
	ret = s.fn(s.arg);
	pthread_cleanup_pop(1);
	pthread_cleanup_pop(1);
	return ret;
}

__attribute__((visibility("default")))
int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                   void *(*fn)(void *), void *arg)
{
	create_fn *create = real_create();
	if (!create)
		return EAGAIN;
	struct start *s = malloc(sizeof *s);
	if (!s) /* no trampoline: still create the thread, uncovered */
		return create(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	atomic_fetch_add(&live, 1);
	int rc = create(th, attr, profil_thread_start, s);
	if (rc != 0) {
		atomic_fetch_sub(&live, 1);
		free(s);
	}
	return rc;
}
#endif

#ifdef PROFIL_NO_HOOK
int threads_live(void)
{
	return -1;
}

void threads_forked_child(void)
{
}
#else
int threads_live(void)
{
	return atomic_load(&live);
}

void threads_forked_child(void)
{
	atomic_store(&live, wrapped); /* the one thread left */
}
#endif
