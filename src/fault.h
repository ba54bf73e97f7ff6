/*
 * fault.h - fault recovery (fault.c) and the program's view of SIGSEGV and
 * SIGBUS while we own them (sigwrap.c).
 */
#ifndef PROFIL_FAULT_H
#define PROFIL_FAULT_H

#include <signal.h>

#include "internal.h"

/* Code reachable from sigaction(): a sanitizer runtime calls sigaction()
 * while it initialises, before instrumented code may run (TSan crashed
 * in __tsan_func_entry).  Exempt it from ThreadSanitizer. */
#define NO_TSAN __attribute__((no_sanitize("thread")))

/* Install our SIGSEGV/SIGBUS handler, saving the program's (engine lock
 * held, when profiling starts).  -1 with errno on failure, nothing kept. */
HIDDEN NO_TSAN int fault_install(void);
/* Give the program back its dispositions (engine lock held).  Preserves
 * errno. */
HIDDEN NO_TSAN void fault_uninstall(void);
/* Whether sig is SIGSEGV or SIGBUS and our handler holds it (sigstate
 * lock held). */
HIDDEN NO_TSAN int fault_owns(int sig);
/* sigaction() as the program sees it for an owned sig: reads and writes
 * the saved disposition instead of the kernel's (sigstate lock held). */
HIDDEN NO_TSAN int fault_user_sigaction_locked(int sig, const struct sigaction *act,
                                       struct sigaction *oact);

/*
 * The sigstate lock guards the program's view of every signal we own
 * (fault.c: SIGSEGV and SIGBUS; signals.c: the sampling signal).  A spin
 * lock taken with every signal blocked on this thread, so no handler can
 * interrupt its holder: sigaction() is async-signal-safe and programs
 * call it from handlers.  The holder never waits for anything else.
 */
HIDDEN NO_TSAN void sigstate_lock(sigset_t *old);
HIDDEN NO_TSAN void sigstate_unlock(const sigset_t *old);
/* Whether this process is the one whose signal state this memory holds:
 * false in a vfork child (shared memory) or a raw clone's child, whose
 * calls the interposers pass straight to libc.  Async-signal-safe. */
HIDDEN NO_TSAN int sigstate_mine(void);

/* handover.c, sigstate lock held: whether sig is the sampling signal (or
 * the one it is moving to), and sigaction() as the program sees it. */
HIDDEN NO_TSAN int signal_owns_locked(int sig);
HIDDEN NO_TSAN int signal_user_sigaction_locked(int sig, const struct sigaction *act,
                                        struct sigaction *oact);
/* exec.c: the sampling signal set to SIG_IGN (on) or back to ours. */
HIDDEN void signal_ignore(int sig, int on);
/* sigwrap.c: the public sigaction(), for our own dispositions (a
 * sanitizer runtime interposing it sees them); our interposer passes the
 * call straight to libc. */
/* handover.c: nonzero while this thread is inside
 * signal_sigaction_internal() (sigwrap.c then passes straight to libc). */
extern __thread int signal_internal __attribute__((tls_model("initial-exec"))) HIDDEN;
HIDDEN NO_TSAN int signal_sigaction_internal(int sig, const struct sigaction *act,
                                     struct sigaction *oact);

/* fork.c: hold the sigstate lock across fork (every signal blocked). */
HIDDEN NO_TSAN void fault_atfork_prepare(void);
HIDDEN NO_TSAN void fault_atfork_parent(void);
HIDDEN NO_TSAN void fault_atfork_child(void);  /* also: this process owns */
/* libc's sigaction, bypassing our interposer (sigwrap.c). */
HIDDEN NO_TSAN int fault_real_sigaction(int sig, const struct sigaction *act,
                                struct sigaction *oact);

#endif
