/*
 * c11wrap.c - C11 threads are sampled from their first instruction.
 *
 * glibc's thrd_create calls its internal pthread_create, past the one we
 * interpose (threads.c), so a C11 thread was left to the helper thread's
 * sweeps.  But the helper is made lazily, at the program's first
 * pthread_create or after 50 ms of the main thread's CPU time
 * (lazy_helper.c): a program whose main thread made its workers with
 * thrd_create and waited in thrd_join never had one, and the workers'
 * CPU time was all counted at the process's exit.  thrd_create is
 * interposed: the thread starts in threads.c's trampoline of C11's type
 * (profil_c11_thread_start), so glibc still keeps the int the thread
 * returns for thrd_join().
 *
 * Not in the static library: in a static link our thrd_create would take
 * the place of libc's, which sweeper.c's reference pulls in for its
 * internal pthread_create, and dlsym finds nothing to pass the call to.
 */
#include "process/process.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <threads.h>

#ifndef PROFIL_NO_HOOK

typedef int c11_create_fn(thrd_t *, thrd_start_t, void *);

static c11_create_fn *_Atomic real_create;

/* libc's thrd_create: looked up at load (c11_init), or at the first
 * call if another library's constructor made a thread before ours ran. */
static c11_create_fn *real_thrd_create(void)
{
	c11_create_fn *f = atomic_load(&real_create);
	if (!f) {
		f = (c11_create_fn *)dlsym(RTLD_NEXT, "thrd_create");
		atomic_store(&real_create, f);
	}
	return f;
}

__attribute__((constructor)) static void c11_init(void)
{
	(void)real_thrd_create();
}

__attribute__((visibility("default")))
int thrd_create(thrd_t *thr, thrd_start_t fn, void *arg)
{
	c11_create_fn *create = real_thrd_create();
	if (!create)
		return thrd_error;
	struct threads_start *s = threads_start_new(NULL, fn, arg, NULL);
	if (!s) /* no trampoline: still create the thread, uncovered */
		return create(thr, fn, arg);
	int rc = create(thr, profil_c11_thread_start, s);
	if (rc != thrd_success)
		threads_start_drop(s);
	return rc;
}

#endif
