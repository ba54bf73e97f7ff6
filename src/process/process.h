/*
 * process.h - the program's own calls, interposed: fork (fork.c), the exec
 * family (exec.c, exec_wrap.c), pthread_create (threads.c), sigaction and
 * signal (sigwrap.c), pthread_sigmask and sigprocmask (maskwrap.c), the
 * setuid family and setgroups (credwrap.c), thrd_create (c11wrap.c) and
 * timer_create (sigevwrap.c) (these three in the shared library only).  Nothing else calls into process/; the one entry
 * for others is the hook below (agent/).
 */
#ifndef PROFIL_PROCESS_H
#define PROFIL_PROCESS_H

#include "engine/engine.h"

/* fork.c: called last in a forked child, engine lock not held (agent/). */
extern void (*_Atomic fork_child_hook)(void) HIDDEN;
/* fork.c: called first in the forking thread before a fork, no lock of
 * ours held (agent/). */
extern void (*_Atomic fork_prepare_hook)(void) HIDDEN;
/* fork.c: in a forked child, its thread's CPU clock (ns) when its timer
 * was made, before the hook runs; -1 when none was (agent/account.c:
 * what ran before it is the child's start-up). */
extern int64_t fork_child_timer_cpu HIDDEN;

/* threads.c: what a thread's exit does (its timer deleted, the expiries
 * it passed but was never sent credited to its last sampled pc, else
 * fallback_pc; its name to a ring), for a thread that ends otherwise:
 * the one calling exit() (agent/).  -1 if the engine lock is busy or
 * this thread's (called from a handler that interrupted it). */
HIDDEN int threads_settle_self(uintptr_t fallback_pc);
/* The same with the engine lock held (exec.c, before an exec); leaves
 * the sampling signal blocked on this thread. */
HIDDEN void threads_settle_locked(uintptr_t fallback_pc);

/* threads.c: the trampoline every thread made through our hooks starts
 * in (pthread_create; thrd_create, c11wrap.c), covered from its first
 * instruction.  Made by the creator for fn (or a C11 thread's c11_fn)
 * and arg, with attr's signal mask if it sets one; NULL without memory
 * (the thread is then made as asked, and the sweeper finds it); dropped
 * if the thread was not made.  A C11 thread starts in
 * profil_c11_thread_start() with it, which frees it. */
struct threads_start;
HIDDEN struct threads_start *threads_start_new(void *(*fn)(void *), int (*c11_fn)(void *),
                                              void *arg, const pthread_attr_t *attr);
HIDDEN void threads_start_drop(struct threads_start *s);
HIDDEN int profil_c11_thread_start(void *s);
/* threads.c: the two halves of a trampoline, for one made elsewhere
 * (sigevwrap.c): this thread sampled from now on (its stack's bounds, a
 * timer from its first instant); and, as its cleanup handler at its end,
 * its expiries settled (threads_settle_locked(), start_fn the fallback
 * pc). */
HIDDEN void threads_cover_self(void);
HIDDEN void threads_end_covered(void *start_fn);

/* The file an exec runs: path relative to dirfd (AT_FDCWD for a plain
 * path), or the file open at dirfd itself when path is "" (fexecve,
 * execveat with AT_EMPTY_PATH); search: a name without '/' that
 * execvpe() looks up along PATH. */
struct exec_target {
	int dirfd;
	const char *path;
	int search;
};

/* exec.c: the environment an exec passes on, in every exec we interpose
 * (vfork children included): the hook returns envp or an array it built
 * in out[0..cap-1] (cap counts pointers; the strings it adds are its
 * own), or NULL if envp must go as it is.  t: what the exec runs.
 * Async-signal-safe, no allocation (a vfork child shares our memory).
 * Set once (agent/). */
extern char *const *(*_Atomic exec_env_hook)(const struct exec_target *t, char *const envp[],
                                             char **out, size_t cap) HIDDEN;
/* Called when one of those execs returned (it failed), vfork children
 * included, with the environment it was given (the env hook's); the
 * same rules.  Set once (agent/). */
extern void (*_Atomic exec_failed_hook)(char *const envp[]) HIDDEN;
/* Called first in each of those execs, before the exec's own accounting
 * (its thread's last periods) is written; vfork children included; the
 * same rules.  Set once (agent/). */
extern void (*_Atomic exec_begin_hook)(void) HIDDEN;
/* credwrap.c: called by the program's thread just before unshare(),
 * setns() (flags: its nstype) and clone() with a namespace flag
 * (clonewrap.c) go to the C library, errno preserved; process_ns_changing()
 * calls it.  Set once (agent/). */
extern void (*_Atomic ns_change_hook)(int flags) HIDDEN;
HIDDEN void process_ns_changing(int flags);
/* ns_change_hook's flags for the setuid() family and setgroups(): the
 * process's credentials are about to change (no CLONE_NEW* flag has this
 * bit). */
#define PROCESS_CREDS_CHANGING 0x1

/*
 * One symbol in each object of this part, which gmon_keep.c (every form
 * publishes through it) refers to, so that a link with libprofil.a takes
 * them all.  Nothing calls into them by a name of ours: their entry
 * points are libc's names, which the linker does not look for in the
 * archive once a shared library met earlier defines them (a sanitizer
 * runtime defines pthread_create and sigaction); fork.c was never taken,
 * so a program linked with the archive had no fork handlers.
 */
extern const char process_fork_linked HIDDEN, process_exec_linked HIDDEN,
    process_threads_linked HIDDEN, process_sigwrap_linked HIDDEN, process_maskwrap_linked HIDDEN;

/* maskwrap.c: the signals (among sig, the sampling signal, SIGSEGV and
 * SIGBUS) the program on this thread believes blocked while the kernel
 * has them unblocked: a "block everything" mask was set without them. */
HIDDEN sigset_t process_mask_hidden(int sig);
/* sigwrap.c: an rt_sigaction system call the program makes through libc's
 * syscall() (agent/rawsig.c): for a signal we own now (the sampling
 * signal, SIGSEGV, SIGBUS) it is done as sigaction() would be, the
 * kernel's struct converted both ways, and 1 returned with the call's
 * result in *rc (-1 and errno on failure); else 0, and the caller makes
 * the call itself.  Async-signal-safe. */
HIDDEN int process_raw_sigaction(int sig, const void *kact, void *koact,
                                 unsigned long setsize, long *rc);
/* maskwrap.c: the same for an rt_sigprocmask system call through libc's
 * syscall(): while a signal carries samples, done as pthread_sigmask()
 * would be (a "block everything" mask set without the sampling and fault
 * signals, which the program reads back as blocked), 1 returned with the
 * result in *rc; else 0.  Async-signal-safe. */
HIDDEN int process_raw_sigprocmask(int how, const void *kset, void *koset,
                                   unsigned long setsize, long *rc);
/* A thread's view (which of those are hidden, for which sampling signal):
 * read in pthread_create, given to the new thread (threads.c), which
 * otherwise would read them unblocked though its creator blocked them;
 * adopt: a mask glibc set for a new thread from its attributes is set
 * again as the program's, hiding what a "block everything" mask hides. */
struct mask_view {
	unsigned int bits;
	int sig;
	unsigned long long kernel; /* the kernel mask when it was set (maskwrap.c) */
};
HIDDEN struct mask_view process_mask_view(void);
HIDDEN void process_mask_inherit(struct mask_view v);
HIDDEN void process_mask_adopt(const sigset_t *mask);
/* The calling thread's mask taken as the program's (a new image's
 * inherited one), once sampling has started. */
HIDDEN void process_mask_take_inherited(void);

#endif /* PROFIL_PROCESS_H */
