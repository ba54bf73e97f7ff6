/*
 * threads.c - every thread the program creates after profiling started is
 * sampled from its first instruction to its last.
 *
 * pthread_create is interposed (our definition comes before libc's in
 * symbol lookup, whether linked with -lprofil or preloaded).  The new
 * thread runs a trampoline that gives it a timer before the program's
 * start routine and deletes it when the thread exits (return,
 * pthread_exit or cancellation), so exited threads leak no timer.
 * C11's thrd_create, which glibc routes past our pthread_create, is
 * interposed too (c11wrap.c), with the same trampoline.  Threads created
 * another way are found by the sweeper (sweeper.c).
 */
#include "process/process.h"
#include "unwind/unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <signal.h>
#include <stdlib.h>
#include <threads.h>
#include <unistd.h>

const char process_threads_linked = 1; /* process.h: for static links */

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct threads_start {
	void *(*fn)(void *);
	int (*c11_fn)(void *); /* a C11 thread's (c11wrap.c), fn NULL */
	void *arg;
	/* The signal mask the thread starts with, as the program sees it
	 * (maskwrap.c): its creator's view, or the mask its attributes set
	 * (pthread_attr_setsigmask_np), which glibc applies itself. */
	struct mask_view view;
	int attr_mask;
	sigset_t mask;
};

/*
 * At the thread's exit (return, pthread_exit, cancellation): its timer is
 * deleted, and the expiries of its grid it passed but was never sent (the
 * kernel looks at CPU timers only at ticks, so a thread shorter than a tick
 * may never be) are credited now: to the last pc sampled on this thread
 * (in a ring, to that sample's stack: sample_credit_repeat()), or, if
 * none was, to the start routine's first instruction (in a ring, when the
 * settling runs from the wrapper's frame, at [unsampled] called from the
 * routine, under the thread's start, its wrapper's frame and libc's:
 * sample_credit_entry()).  The sampling
 * signal is blocked first so the tally cannot change under us, and stays
 * blocked: a signal still queued from the deleted timer would count twice.
 * Its name goes to the ring last (`profil record` reads names from /proc
 * at a thread's first sample, too late for a short thread, too early for
 * one renamed later).
 */
/* Set when the settling runs from the thread's wrapper's frame: its
 * start routine returned to it, or (built without -fexceptions, as we
 * build) it ended by pthread_exit() or cancellation, whose C cleanup
 * glibc runs after a longjmp back to the frame that pushed it (with
 * -fexceptions the unwinder would run it from deeper frames).  The
 * thread's own. */
static __thread int returned_to_entry __attribute__((tls_model("initial-exec")));

void threads_settle_locked(uintptr_t fallback_pc)
{
	int sig = timers_signal();
	if (sig) {
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		fault_real_sigmask(SIG_BLOCK, &set, NULL);
		struct sample_self me = sample_self;
		unsigned long credited = 0, owed;
		uintptr_t pc = fallback_pc;
		int sampled = me.epoch == atomic_load(&sample_epoch) && me.credited;
		if (sampled)
			credited = me.credited, pc = me.pc;
		if (timers_reconcile_self(credited, &owed) != 0)
			owed = 0;
		/* weight held back while the thread blocked SIGSEGV/SIGBUS
		 * (sample.c) is written now rather than lost with the thread */
		sample_self.deferred = 0;
		void (*credit)(pid_t, uintptr_t, unsigned long, unsigned long) =
			sampled ? sample_credit_repeat
			: returned_to_entry ? sample_credit_entry : sample_credit;
		if (owed || me.deferred)
			credit(gettid(), pc, owed, me.deferred);
		/* its last name, for a ring's reader (ring.h RING_THREAD) */
		char name[16] = {0};
		if (prctl(PR_GET_NAME, name) == 0)
			sample_thread_name(gettid(), name);
	}
}

int threads_settle_self(uintptr_t fallback_pc)
{
	if (engine_lock_bounded() != 0)
		return -1;
	threads_settle_locked(fallback_pc);
	engine_unlock();
	return 0;
}

#ifndef PROFIL_NO_HOOK

void threads_end_covered(void *start_fn)
{
#ifndef __EXCEPTIONS
	returned_to_entry = 1; /* only the wrappers push this handler */
#endif
	engine_lock();
	threads_settle_locked((uintptr_t)start_fn);
	engine_unlock();
}

/* This thread was made through our pthread_create: counted by the
 * sweeper (sweeper_thread_born()) until thread_gone(). */
static __thread int wrapped __attribute__((tls_model("initial-exec")));

static void thread_gone(void *unused)
{
	(void)unused;
	sweeper_thread_gone();
}

struct threads_start *threads_start_new(void *(*fn)(void *), int (*c11_fn)(void *), void *arg,
                                       const pthread_attr_t *attr)
{
	lazy_helper_now(); /* a deferred helper: this is a safe point */
	struct threads_start *s = mem_alloc(sizeof *s);
	if (!s)
		return NULL;
	s->fn = fn;
	s->c11_fn = c11_fn;
	s->arg = arg;
	s->view = process_mask_view();
	s->attr_mask = attr && pthread_attr_getsigmask_np(attr, &s->mask) == 0;
	sweeper_thread_born(); /* before the thread exists */
	return s;
}

void threads_start_drop(struct threads_start *s)
{
	sweeper_thread_gone();
	mem_free(s);
}

/* The start a trampoline was given, taken and freed; the signal mask
 * the program sees set. */
static struct threads_start adopt(struct threads_start *p)
{
	struct threads_start s = *p;
	mem_free(p);
	wrapped = 1;
	if (s.attr_mask)
		process_mask_adopt(&s.mask);
	else
		process_mask_inherit(s.view);
	return s;
}

void threads_cover_self(void)
{
	unwind_note_stack(); /* bounds for the stack walk (unwind.h) */
	engine_lock();
	timers_add_born(); /* failure leaves the thread to the sweeper */
	engine_unlock();
}

/* Named for the stacks they appear in: every profiled thread starts in
 * one of these, the program's function called from its frame (a
 * function around the call would add a frame to every stack; glibc's
 * cleanup handlers need one frame to hold both).  A C11 thread's has
 * C11's type: glibc keeps the int it returns for thrd_join(). */
static void *profil_thread_start(void *p)
{
	struct threads_start s = adopt(p);
	void *ret = NULL;
	pthread_cleanup_push(thread_gone, NULL);
	threads_cover_self();
	pthread_cleanup_push(threads_end_covered, (void *)s.fn);
	ret = s.fn(s.arg);
	returned_to_entry = 1;
	pthread_cleanup_pop(1);
	pthread_cleanup_pop(1);
	return ret;
}

int profil_c11_thread_start(void *p)
{
	struct threads_start s = adopt(p);
	int ret = 0;
	pthread_cleanup_push(thread_gone, NULL);
	threads_cover_self();
	pthread_cleanup_push(threads_end_covered, (void *)s.c11_fn);
	ret = s.c11_fn(s.arg);
	returned_to_entry = 1;
	pthread_cleanup_pop(1);
	pthread_cleanup_pop(1);
	return ret;
}

__attribute__((visibility("default")))
int pthread_create(pthread_t *th, const pthread_attr_t *attr,
                   void *(*fn)(void *), void *arg)
{
	create_fn *create = threads_real_create();
	if (!create)
		return EAGAIN;
	struct threads_start *s = threads_start_new(fn, NULL, arg, attr);
	if (!s) /* no trampoline: still create the thread, uncovered */
		return create(th, attr, fn, arg);
	int rc = create(th, attr, profil_thread_start, s);
	if (rc != 0)
		threads_start_drop(s);
	return rc;
}
#endif

void threads_forked_child(void)
{
#ifndef PROFIL_NO_HOOK
	sweeper_threads_reset(wrapped); /* the one thread left */
#endif
}
