/*
 * exec_impl.h - exec.c (stop profiling around an exec) and exec_wrap.c
 * (the interposed entry points and libc's own).
 */
#ifndef PROFIL_EXEC_IMPL_H
#define PROFIL_EXEC_IMPL_H

#include "process/process.h"

/* libc's functions, resolved by exec_wrap.c's constructor (dlsym is not
 * async-signal-safe; exec is).  Written once before main, then read-only. */
struct exec_real_fns {
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	int (*execveat)(int, const char *, char *const[], char *const[], int);
};
extern struct exec_real_fns exec_real HIDDEN;

/* The real call, wrapped in exec.c's prepare/resume. */
HIDDEN int exec_around_execve(const char *path, char *const argv[], char *const envp[]);
HIDDEN int exec_around_execvpe(const char *file, char *const argv[], char *const envp[]);
HIDDEN int exec_around_fexecve(int fd, char *const argv[], char *const envp[]);
HIDDEN int exec_around_execveat(int dirfd, const char *path, char *const argv[],
                                char *const envp[], int flags);

#endif
