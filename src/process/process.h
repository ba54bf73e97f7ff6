/*
 * process.h - the program's own calls, interposed: fork (fork.c), the exec
 * family (exec.c, exec_wrap.c), pthread_create (threads.c), sigaction and
 * signal (sigwrap.c).  Nothing else calls into process/; the one entry
 * for others is the hook below (agent/).
 */
#ifndef PROFIL_PROCESS_H
#define PROFIL_PROCESS_H

#include "engine/engine.h"

/* fork.c: called last in a forked child, engine lock not held (agent/). */
extern void (*_Atomic fork_child_hook)(void) HIDDEN;

#endif /* PROFIL_PROCESS_H */
