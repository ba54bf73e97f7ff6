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
/* sigaction() as the program sees it: for SIGSEGV/SIGBUS while ours is
 * installed, reads and writes the saved disposition instead of the
 * kernel's.  Async-signal-safe. */
HIDDEN NO_TSAN int fault_user_sigaction(int sig, const struct sigaction *act,
                                struct sigaction *oact);
/* fork.c: hold the state lock across fork (every signal blocked). */
HIDDEN NO_TSAN void fault_atfork_prepare(void);
HIDDEN NO_TSAN void fault_atfork_release(void);  /* in the parent and the child */
/* libc's sigaction, bypassing our interposer (sigwrap.c). */
HIDDEN NO_TSAN int fault_real_sigaction(int sig, const struct sigaction *act,
                                struct sigaction *oact);

#endif
