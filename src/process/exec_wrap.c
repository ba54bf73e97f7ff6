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
#include "process/process.h"
#include "process/exec_impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

const char process_exec_linked = 1; /* process.h: for static links */

#define API __attribute__((visibility("default")))

struct exec_real_fns exec_real;

static int raw_execve(const char *path, char *const argv[], char *const envp[])
{
	return (int)syscall(SYS_execve, path, argv, envp);
}

/*
 * In a statically linked program dlsym(RTLD_NEXT) finds nothing: execve,
 * fexecve and execvpe are then done here with system calls, execvpe
 * searching PATH as glibc's does (stack only: still async-signal-safe).
 */
static int raw_fexecve(int fd, char *const argv[], char *const envp[])
{
	return (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
}

/* A file that is not an executable format is run by the shell. */
static int try_exec(const char *path, char *const argv[], char *const envp[])
{
	exec_real.execve(path, argv, envp);
	if (errno != ENOEXEC)
		return -1;
	size_t n = 0;
	while (argv[n])
		n++;
	char *sh_argv[n + 2];
	sh_argv[0] = (char *)"/bin/sh";
	sh_argv[1] = (char *)path;
	for (size_t i = 1; i <= n; i++)
		sh_argv[i + 1] = argv[i];
	exec_real.execve("/bin/sh", sh_argv, envp);
	errno = ENOEXEC;
	return -1;
}

static int raw_execvpe(const char *file, char *const argv[], char *const envp[])
{
	if (!*file) {
		errno = ENOENT;
		return -1;
	}
	if (strchr(file, '/'))
		return try_exec(file, argv, envp);
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	size_t flen = strlen(file);
	int denied = 0;
	for (const char *p = path;; p++) {
		const char *end = strchrnul(p, ':');
		char buf[PATH_MAX];
		size_t dlen = (size_t)(end - p);
		if (dlen + flen + 2 <= sizeof buf) {
			memcpy(buf, p, dlen);
			buf[dlen] = '/';
			memcpy(buf + dlen + (dlen > 0), file, flen + 1);
			try_exec(buf, argv, envp);
			if (errno == EACCES)
				denied = 1;
			else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE &&
			         errno != ENODEV && errno != ETIMEDOUT)
				return -1;
		}
		if (!*end)
			break;
		p = end;
	}
	errno = denied ? EACCES : ENOENT;
	return -1;
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
	if (!exec_real.execvpe)
		exec_real.execvpe = raw_execvpe;
	if (!exec_real.fexecve)
		exec_real.fexecve = raw_fexecve;
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
