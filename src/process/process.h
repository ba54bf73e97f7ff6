/*
 * process.h - the program's own calls, interposed: fork (fork.c), the exec
 * family (exec.c, exec_wrap.c), pthread_create (threads.c), sigaction and
 * signal (sigwrap.c), pthread_sigmask and sigprocmask (maskwrap.c), the
 * setuid family and setgroups (credwrap.c, shared library only).  Nothing else calls into process/; the one entry
 * for others is the hook below (agent/).
 */
#ifndef PROFIL_PROCESS_H
#define PROFIL_PROCESS_H

#include "engine/engine.h"

/* fork.c: called last in a forked child, engine lock not held (agent/). */
extern void (*_Atomic fork_child_hook)(void) HIDDEN;

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

#endif /* PROFIL_PROCESS_H */
