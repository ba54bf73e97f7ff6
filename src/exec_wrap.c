/*
 * exec_wrap.c - the exec family, interposed (like pthread_create in
 * threads.c: our definitions come before libc's in symbol lookup).
 *
 * Every entry point funnels into one of four libc calls wrapped by
 * exec.c.  The list forms (execl, execle, execlp) build their argument
 * vector on the stack, as glibc does, so they stay async-signal-safe.
 * glibc's own internal calls (posix_spawn, system) do not come through
 * here; they do not need to (see exec.c).
 */
#include "exec_impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>
#include <sys/syscall.h>

#define API __attribute__((visibility("default")))

struct exec_real_fns exec_real;

static int raw_execve(const char *path, char *const argv[], char *const envp[])
{
	return (int)syscall(SYS_execve, path, argv, envp);
}

static void resolve(void)
{
	exec_real.execve = (int (*)(const char *, char *const[], char *const[]))
		dlsym(RTLD_NEXT, "execve");
	exec_real.execvpe = (int (*)(const char *, char *const[], char *const[]))
		dlsym(RTLD_NEXT, "execvpe");
	exec_real.fexecve = (int (*)(int, char *const[], char *const[]))
		dlsym(RTLD_NEXT, "fexecve");
	exec_real.execveat = (int (*)(int, const char *, char *const[], char *const[], int))
		dlsym(RTLD_NEXT, "execveat");
	if (!exec_real.execve)
		exec_real.execve = raw_execve;
}

/* Before main(); also called by an exec that comes first (another
 * library's constructor), where dlsym is as safe as anywhere. */
__attribute__((constructor)) static void exec_init(void)
{
	if (!exec_real.execve)
		resolve();
}

static int missing(void)
{
	errno = ENOSYS;
	return -1;
}

API int execve(const char *path, char *const argv[], char *const envp[])
{
	exec_init();
	return exec_around_execve(path, argv, envp);
}

API int execv(const char *path, char *const argv[])
{
	exec_init();
	return exec_around_execve(path, argv, environ);
}

API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	exec_init();
	return exec_real.execvpe ? exec_around_execvpe(file, argv, envp) : missing();
}

API int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

API int fexecve(int fd, char *const argv[], char *const envp[])
{
	exec_init();
	return exec_real.fexecve ? exec_around_fexecve(fd, argv, envp) : missing();
}

API int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                 int flags);
API int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                 int flags)
{
	exec_init();
	return exec_around_execveat(dirfd, path, argv, envp, flags);
}

/* Number of arguments after arg0 up to and including the NULL. */
#define COUNT_ARGS(ap, arg0, n) do { \
	va_list c_; \
	va_copy(c_, ap); \
	n = 1; \
	for (const char *a_ = arg0; a_; a_ = va_arg(c_, const char *)) \
		n++; \
	va_end(c_); \
} while (0)

#define FILL_ARGS(ap, arg0, argv, n) do { \
	argv[0] = (char *)arg0; \
	for (size_t i_ = 1; i_ < n; i_++) \
		argv[i_] = va_arg(ap, char *); \
} while (0)

API int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	size_t n;
	va_start(ap, arg);
	COUNT_ARGS(ap, arg, n);
	char *argv[n];
	FILL_ARGS(ap, arg, argv, n);
	va_end(ap);
	return execv(path, argv);
}

API int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	size_t n;
	va_start(ap, arg);
	COUNT_ARGS(ap, arg, n);
	char *argv[n];
	FILL_ARGS(ap, arg, argv, n);
	va_end(ap);
	return execvp(file, argv);
}

API int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	size_t n;
	va_start(ap, arg);
	COUNT_ARGS(ap, arg, n);
	char *argv[n];
	FILL_ARGS(ap, arg, argv, n);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}
