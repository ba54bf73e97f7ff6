/*
 * spawn.c - running the recorded command.
 *
 * The command inherits our standard streams, environment (plus the
 * agent's LD_PRELOAD entry and configuration) and process group, so it
 * behaves as it would without us; a terminal's ^C reaches it directly.
 * Signals sent to `profil record` alone (kill, a job controller) are
 * passed on, so stopping the recording stops the command, and the
 * recording then ends with what was sampled.
 */
#include "record_int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* The file execvp would run for cmd, into buf; 0 or -1 (ENOENT...). */
static int resolve(const char *cmd, char *buf, size_t size)
{
	if (strchr(cmd, '/')) {
		snprintf(buf, size, "%s", cmd);
		return access(buf, X_OK);
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t n = strcspn(p, ":");
		snprintf(buf, size, "%.*s/%s", (int)n, n ? p : ".", cmd);
		if (access(buf, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	errno = ENOENT;
	return -1;
}

int spawn_check(const char *cmd, int *status)
{
	char file[4096];
	struct stat st;
	if (!*cmd) {
		fprintf(stderr, "profil record: the command's name is empty\n");
		*status = 127;
		return -1;
	}
	if (resolve(cmd, file, sizeof file) != 0 || stat(file, &st) != 0) {
		fprintf(stderr, "profil record: %s: %s\n", cmd,
		        errno == ENOENT ? "command not found" : strerror(errno));
		*status = errno == ENOENT ? 127 : 126;
		return -1;
	}
	if (S_ISDIR(st.st_mode)) { /* as the shells say it; exec would say EACCES */
		fprintf(stderr, "profil record: %s: Is a directory\n", cmd);
		*status = 126;
		return -1;
	}
	const char *secure = secure_exec_reason(file, &st);
	if (secure) {
		fprintf(stderr, "profil record: %s %s: the dynamic loader ignores LD_PRELOAD "
		        "for it, so it cannot be profiled\n", file, secure);
		*status = 2;
		return -1;
	}
	char buf[PATH_MAX + 256];
	const char *why = elf_refusal(file, &st, buf, sizeof buf);
	if (why) {
		fprintf(stderr, "profil record: %s %s\n", file, why);
		*status = 2;
		return -1;
	}
	return 0;
}

/* Whether one LD_PRELOAD item (len bytes) is a profil agent: an outer
 * recording's, when `profil record` runs inside another.  That agent
 * would read the variables we set for our command and record into our
 * directory too, beside ours, in the same processes (two agents sharing
 * one signal, each taking the other's handler for the program's). */
static int is_agent_item(const char *item, size_t len)
{
	static const char name[] = "libprofil-agent.so";
	size_t n = sizeof name - 1;
	return len >= n && memcmp(item + len - n, name, n) == 0 &&
	       (len == n || item[len - n - 1] == '/');
}

/* The agent first, then the user's preloads without any other agent
 * (items separated by colons or spaces, as the loader reads them).  Not
 * inlined into spawn_start(), whose vfork() would then have its locals
 * to keep (-Wclobbered). */
static __attribute__((noinline)) char *preload_value(const char *agent)
{
	const char *old = getenv("LD_PRELOAD");
	size_t n = strlen(agent) + (old ? strlen(old) + 1 : 0) + 1;
	char *v = malloc(n);
	if (!v)
		return NULL;
	size_t at = (size_t)snprintf(v, n, "%s", agent);
	for (const char *p = old ? old : ""; *p;) {
		size_t len = strcspn(p, ": ");
		if (len && !is_agent_item(p, len)) {
			v[at++] = ':';
			memcpy(v + at, p, len);
			at += len;
		}
		p += len + (p[len] != '\0');
	}
	v[at] = '\0';
	return v;
}

static sigset_t ignored_at_start;

void spawn_note_ignored(void)
{
	struct sigaction sa;
	sigemptyset(&ignored_at_start);
	for (int sig = 1; sig < NSIG; sig++)
		if (sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
		    sa.sa_handler == SIG_IGN)
			sigaddset(&ignored_at_start, sig);
}

/*
 * The command is started by vfork(), not fork(): the child runs in our
 * memory until its exec, so our page tables are not copied and our
 * pages not made copy-on-write, each of which then took a fault at our
 * next write to it (25 of the record process's 240 faults on a short
 * recording, at about 10 us each on a virtual machine).  The child only
 * writes its pid into the environment made for it (spawnenv.c) and calls
 * execvpe() (the PATH search, and a file without "#!" run by /bin/sh, as
 * execvp() did); when that fails, it writes its errno to a close-on-exec
 * pipe: it may not touch our stdio or heap, and a pipe says it under a
 * sanitizer whose vfork() is a fork() too.  An exec that failed is said
 * in one line, with a shell's exit status (127 for a file not found, 126
 * otherwise); there is nothing to record.
 *
 * Signals we were started with ignored (a parent that ignores them
 * passes that on across exec: nohup's SIGHUP, a daemon's SIGCHLD) are
 * noted before we change any (spawn_note_ignored()), and the child sets
 * each ignored again before its exec: the command starts with the
 * dispositions it would have had without us, not the default that our
 * own handlers (SIGIO: ringserve.c; SIGBUS: images.c) leave at an exec.
 * SIGCHLD ignored would make the kernel reap the command as it ended:
 * no status to wait for, and `profil record` waited for ever; we take
 * the default for ourselves, before the vfork.
 */
pid_t spawn_start(const struct record_opts *o, const char *agent, const char *dir,
                  int *status)
{
	char *preload = preload_value(agent);
	struct spawn_env env;
	int said[2];
	*status = 2;
	if (!preload || spawn_env_make(&env, o, preload, dir) != 0) {
		free(preload);
		goto failed;
	}
	if (pipe2(said, O_CLOEXEC) != 0) {
		spawn_env_free(&env);
		free(preload);
		goto failed;
	}
	if (sigismember(&ignored_at_start, SIGCHLD) == 1)
		signal(SIGCHLD, SIG_DFL);
	pid_t pid = vfork();
	if (pid == 0) {
		for (int sig = 1; sig < NSIG; sig++) /* vfork copies the table */
			if (sigismember(&ignored_at_start, sig) == 1)
				signal(sig, SIG_IGN);
		spawn_env_set_root(&env, getpid());
		execvpe(o->argv[0], o->argv, env.v);
		int err = errno;
		ssize_t w = write(said[1], &err, sizeof err);
		(void)w;
		_exit(127);
	}
	int err = errno, exec_err = 0;
	close(said[1]);
	ssize_t got = 0;
	while (pid > 0 && (got = read(said[0], &exec_err, sizeof exec_err)) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof exec_err) /* end of file: the exec closed it */
		exec_err = 0;
	close(said[0]);
	spawn_env_free(&env);
	free(preload);
	if (pid > 0 && !exec_err)
		return pid;
	if (pid > 0) { /* it never ran: nothing to record */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		fprintf(stderr, "profil record: %s: %s\n", o->argv[0], strerror(exec_err));
		*status = exec_err == ENOENT ? 127 : 126;
		return -1;
	}
	errno = err;
failed:
	fprintf(stderr, "profil record: cannot start %s: %s\n", o->argv[0], strerror(errno));
	return -1;
}

static volatile sig_atomic_t forward_to;

static void forward(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	/* A terminal's ^C or ^\ went to the command's process group too:
	 * the kernel sent it (SI_KERNEL); don't deliver it twice. */
	if (si->si_code == SI_KERNEL)
		return;
	if (forward_to > 0)
		kill((pid_t)forward_to, sig);
}

/* Not a signal we were started with ignored (nohup's SIGHUP, a
 * background job's SIGINT and SIGQUIT): the command was started with it
 * ignored too, and we ignore it as it does. */
void spawn_forward_signals(pid_t pid)
{
	forward_to = pid;
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (sigismember(&ignored_at_start, sigs[i]) != 1)
			sigaction(sigs[i], &sa, NULL);
}

/*
 * The children the ended command reaped, by its /proc/PID/stat (fields
 * 16 and 17, cutime and cstime, in clock ticks, truncated: never more
 * than the kernel's sum, at most two ticks less), read while it is a
 * zombie; 0 if unreadable.  Its agent tells each reap and, at every
 * sweep and at exit, those no hook saw (agent/reap.c), but a program
 * that ends by a raw exit_group (Go's runtime: `go build` reaps its
 * linker, a static program, and exits) runs no destructor, and what it
 * reaped after the last sweep was taken for its exit.
 */
static uint64_t zombie_children_ns(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (record_read_small(path, 0, buf, sizeof buf) <= 0)
		return 0;
	char *at = strrchr(buf, ')'); /* the name may hold spaces and ')' */
	unsigned long long v[2] = {0, 0};
	for (int field = 2; at && field < 17; field++) { /* at: end of field */
		at = strchr(at + 1, ' ');
		if (at && field >= 15)
			v[field - 15] = strtoull(at + 1, NULL, 10);
	}
	long tick = sysconf(_SC_CLK_TCK);
	return at && tick > 0 ? (uint64_t)(v[0] + v[1]) * (1000000000u / (uint64_t)tick) : 0;
}

int spawn_reap(pid_t pid, int *wstatus, struct rusage *ru, uint64_t *children_ns)
{
	siginfo_t si;
	si.si_pid = 0;
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid != pid)
		return 0;
	*children_ns = zombie_children_ns(pid);
	pid_t r = wait4(pid, wstatus, WNOHANG, ru);
	return r == pid;
}

/*
 * As the init of a PID namespace (`docker run IMAGE profil record CMD`,
 * `unshare --pid --fork profil record CMD`) the command's orphans are
 * reparented to us, and a zombie nobody reaps stays in the process table
 * for as long as we run: a server's finished daemons piled up.  Reaped
 * here, but never the command itself (spawn_reap() takes it, with its
 * children's total); their CPU time, which no parent of the command
 * collected, is returned in ns.
 */
uint64_t spawn_reap_orphans(pid_t cmd)
{
	uint64_t ns = 0;
	if (getpid() != 1)
		return 0;
	for (;;) {
		siginfo_t si;
		si.si_pid = 0;
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) != 0 || si.si_pid == 0 ||
		    si.si_pid == cmd)
			return ns;
		struct rusage ru;
		int st;
		if (wait4(si.si_pid, &st, WNOHANG, &ru) != si.si_pid)
			return ns;
		ns += (uint64_t)(record_cpu_of(&ru) * 1e9 + 0.5);
	}
}

int spawn_exit_status(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}
