/*
 * rec-prog MODE [UNITS]: the workloads of the `profil record` tests.
 *
 *   threads   main_hot on the main thread, lib_hot (librec.so) on a second
 *             thread, equal work
 *   blockall  as threads, but the second thread is made while the main
 *             thread blocks every signal and blocks every signal itself
 *             (as xz makes its workers); it prints "mask as set" when it
 *             reads back the mask it set
 *   slower    as threads, but main_hot does three times the work (the
 *             "made slower" side of the HTML report's diff test)
 *   dlopen    plug_hot in librecplug.so (dlopen'ed, then dlclose'd), then
 *             main_hot, equal work
 *   plugswap  UNITS rounds of plug_hot in librecplug.so and alt_hot in
 *             librecalt.so, a unit each, each library dlopen'ed before
 *             its call and dlclose'd after it (400 module events at 100)
 *   named     UNITS threads one after another, each named "w<i>" and
 *             running child_hot for 2 units
 *   initcode  dlopen()s librecinit.so, whose _init runs init_hot for 120
 *             units (code of its .init section), then main_hot
 *   initbare  as initcode, the library named "librecinit.so": found along
 *             this program's DT_RUNPATH, so a call the agent leaves to
 *             glibc (agent/dlopen.c)
 *   plugexit  plug_hot in librecplug.so (dlopen'ed), then exit(0) with the
 *             library still loaded: with few UNITS, before the agent's
 *             first sweep, which would have logged the load
 *   plugbare  as dlopen, the library named "librecplug.so": found only
 *             along this program's DT_RUNPATH (the caller's, which a
 *             wrapper of dlopen must not replace with its own)
 *   plugorigin  as dlopen, named "$ORIGIN/librecplug.so": the caller's
 *             directory, as the loader expands it
 *   plugrpath as dlopen, opened by librecrpath.so (itself dlopen'ed by
 *             full path) by its bare name, along that library's DT_RPATH
 *   coro      main_hot in a coroutine made by makecontext(), on a stack
 *             of its own, which it leaves back to main twenty times
 *   fork      a forked child runs child_hot while the parent runs main_hot
 *   closefork as fork, after closing every descriptor above 2 (as a
 *             daemon does at its start: close_range)
 *   hidedir   enters a mount namespace of its own (unshare) and mounts a
 *             tmpfs over the recording's directory's parent, as a
 *             sandbox's supervisor might, then as threads (whose
 *             pthread_create makes the agent's helper); exits 3 if the
 *             directory is still seen, 2 if it cannot do that
 *   rawhide   as a sandbox made by a raw clone system call (bubblewrap):
 *             a user, mount and network namespace of its own by a raw
 *             unshare system call (no libc wrapper sees it), then the C
 *             library's mount() of a tmpfs over the recording's
 *             directory's parent, then execs this program as "fork";
 *             exits 3 if the directory is still seen, 2 if it cannot
 *   forkthread  as fork, but a second thread forks, and the child's one
 *             thread returns from its start routine, which ends the
 *             process (issue 9); exits 1 if the child is still running
 *             after 10 s
 *   forkiter  a second thread sits in dl_iterate_phdr (a callback that
 *             sleeps) while main forks 3 children that each run child_hot;
 *             exits 1 if a child is still running after 10 s (glibc does
 *             not reset that lock in a child: one that calls
 *             dl_iterate_phdr never returns)
 *   exec      a child execs this program as "execd", which runs exec_hot
 *   execd     exec_hot (what the exec mode runs)
 *   shortexit 100 x UNITS / 30 children, one at a time, each running
 *             short_hot (a quarter unit, about 1.5 ms) and ending with
 *             _exit(0): each is shorter than the kernel's tick, so most
 *             of its samples are the expiries settled at _exit
 *             (agent/account.c)
 *   burnexec  a child runs child_hot, then execs this program as "execd 0"
 *             (which does nothing): the CPU time the child had sampled
 *             before its exec must not count again as the new image's
 *             start-up (agent/account.c)
 *   rename    a second thread named "early" runs lib_hot, then renames
 *             itself "late-name" and ends; main joins it, then main_hot
 *   inline    outer_hot, whose loop is the always-inline inner_hot
 *   clocks    clock_hot for UNITS: work in pieces of 1/100 unit, reading
 *             the thread's CPU clock after each, as a timing loop does
 *   spin      main_hot for UNITS, prints "ready", then spins for ever
 *   exit      main_hot, then _exit(3) without flushing or atexit
 *   echo      copies stdin to stdout, writes "to stderr" on stderr, exits 7
 *   rawsig    main_hot, then takes every signal by raw system calls as Go's
 *             runtime does (x86-64), then main_hot again; prints "done"
 *             (built as rec-go, it passes for a Go program, below)
 *   spawnmasked  posix_spawn()s this program as "maskedd" with every
 *             signal blocked (POSIX_SPAWN_SETSIGMASK, a full set), as a
 *             thread that blocked them all would; waits for it
 *   maskedd   prints "mask as set" when the mask it was started with
 *             reads back full, then exec_hot
 *   ignexec CMD...  execs CMD with SIGHUP, SIGTRAP, SIGCHLD and SIGIO
 *             ignored, as a parent that ignores them (nohup, a daemon,
 *             a launcher that ignores what it can) passes them on
 *   keydtor   a second thread runs lib_hot, and its pthread_key destructor
 *             (which glibc runs after the start routine returns) dtor_hot,
 *             equal work; main waits in pthread_join
 *   ignored   prints "ignored:" and the signals below 32 that sigaction()
 *             says are ignored
 *   ownprof   profiles itself as glibc's gmon (-pg) does: a SIGPROF
 *             handler set by a raw system call (glibc's internal
 *             sigaction, which no interposer sees) and ITIMER_PROF at
 *             100 Hz, then main_hot; prints "foreign N", the SIGPROFs
 *             its handler got that its own timer did not send (x86-64;
 *             elsewhere "foreign 0")
 */
#include "rec.h"
#include "../rawsig.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>

static unsigned long units = 30;

__attribute__((noinline)) static void main_hot(unsigned long n) { REC_BURN(n, 3); }
__attribute__((noinline)) static void child_hot(unsigned long n) { REC_BURN(n, 4); }
__attribute__((noinline)) static void exec_hot(unsigned long n) { REC_BURN(n, 5); }

static inline __attribute__((always_inline)) void inner_hot(unsigned long n)
{
	REC_BURN(n, 6);
}

__attribute__((noinline)) static void clock_hot(unsigned long n)
{
	struct timespec ts;
	for (unsigned long i = 0; i < n * 100; i++) {
		volatile unsigned long acc = 7;
		for (unsigned long k = 0; k < REC_UNIT / 100; k++)
			acc += k ^ (acc >> 3);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	}
}

__attribute__((noinline)) static void outer_hot(unsigned long n)
{
	inner_hot(n);
}

static void *second(void *arg)
{
	(void)arg;
	lib_hot(units);
	return NULL;
}

static void *named_worker(void *arg)
{
	char name[16];
	snprintf(name, sizeof name, "w%lu", (unsigned long)(uintptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	child_hot(2);
	return NULL;
}

/* UNITS threads, one at a time, each of a name of its own. */
static int named_threads(void)
{
	for (unsigned long i = 0; i < units; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, named_worker, (void *)(uintptr_t)i) != 0)
			return 1;
		pthread_join(t, NULL);
	}
	return 0;
}

static int threads(unsigned long main_units)
{
	pthread_t t;
	if (pthread_create(&t, NULL, second, NULL) != 0)
		return 1;
	main_hot(main_units);
	pthread_join(t, NULL);
	return 0;
}

/* Signals the kernel or glibc never blocks. */
static int unblockable(int s)
{
	return s == SIGKILL || s == SIGSTOP || s == 32 || s == 33;
}

static void *second_blocked(void *arg)
{
	(void)arg;
	sigset_t all, now;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	int same = 1;
	for (int s = 1; s < NSIG; s++)
		if (!unblockable(s) && sigismember(&all, s) != sigismember(&now, s))
			same = 0;
	puts(same ? "mask as set" : "mask differs");
	fflush(stdout);
	lib_hot(units);
	return NULL;
}

static int blockall(unsigned long main_units)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_t t;
	int rc = pthread_create(&t, NULL, second_blocked, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return 1;
	main_hot(main_units);
	pthread_join(t, NULL);
	return 0;
}

static int plugin_named(void *h, int then_exit)
{
	if (!h)
		return 1;
	void (*hot)(unsigned long) = (void (*)(unsigned long))dlsym(h, "plug_hot");
	hot(units);
	if (then_exit)
		exit(0);
	dlclose(h);
	main_hot(units);
	return 0;
}

/* One unit of the named library's function, between its dlopen and its
 * dlclose. */
static int swap_in(const char *self, const char *lib, const char *fn)
{
	void *h = rec_open_beside(self, lib);
	void (*hot)(unsigned long) = h ? (void (*)(unsigned long))dlsym(h, fn) : NULL;
	if (!hot)
		return 1;
	hot(1);
	dlclose(h);
	return 0;
}

static int plugins_in_turn(const char *self)
{
	for (unsigned long r = 0; r < units; r++)
		if (swap_in(self, "librecplug.so", "plug_hot") ||
		    swap_in(self, "librecalt.so", "alt_hot"))
			return 1;
	return 0;
}

static int plugin(const char *self, int then_exit)
{
	return plugin_named(rec_open_plug(self), then_exit);
}

/* The plugin by a name only the caller's object gives a meaning to. */
static int plugin_as(const char *name)
{
	void *h = dlopen(name, RTLD_NOW);
	if (!h)
		fprintf(stderr, "rec-prog: %s\n", dlerror());
	return plugin_named(h, 0);
}

static ucontext_t coro_main, coro_self;

__attribute__((noinline)) static void coro_body(void)
{
	for (int k = 0; k < 20; k++) {
		main_hot(units / 20);
		swapcontext(&coro_self, &coro_main);
	}
}

/* main_hot on a coroutine's stack (glibc's __start_context under it). */
static int coroutine(void)
{
	size_t size = 256 << 10;
	char *stack = malloc(size);
	if (!stack || getcontext(&coro_self) != 0)
		return 1;
	coro_self.uc_stack.ss_sp = stack;
	coro_self.uc_stack.ss_size = size;
	coro_self.uc_link = &coro_main;
	makecontext(&coro_self, coro_body, 0);
	for (int k = 0; k < 20; k++)
		swapcontext(&coro_main, &coro_self);
	free(stack);
	return 0;
}

/* The plugin as librecrpath.so opens it (by its DT_RPATH). */
static int plugin_by_rpath(const char *self)
{
	char path[4096];
	const char *slash = strrchr(self, '/');
	snprintf(path, sizeof path, "%.*slibrecrpath.so", slash ? (int)(slash - self + 1) : 0, self);
	void *lib = dlopen(path, RTLD_NOW);
	void *(*open_plug)(void) = lib ? (void *(*)(void))dlsym(lib, "rpath_open_plug") : NULL;
	if (!open_plug) {
		fprintf(stderr, "rec-prog: %s\n", dlerror());
		return 1;
	}
	return plugin_named(open_plug(), 0);
}

static int forked(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		child_hot(units);
		_exit(0);
	}
	main_hot(units);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int hide_dir(unsigned long n)
{
	const char *dir = getenv("PROFIL_RECORD_DIR");
	char parent[4096];
	if (!dir || snprintf(parent, sizeof parent, "%s", dir) >= (int)sizeof parent)
		return 2;
	char *slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return 2;
	*slash = '\0';
	if (unshare(CLONE_NEWNS) != 0 || mount("none", parent, "tmpfs", 0, NULL) != 0) {
		perror("rec-prog hidedir");
		return 2;
	}
	if (access(dir, F_OK) == 0)
		return 3;
	return threads(n);
}

/* /proc/self/FILE := text; 0 or -1. */
static int write_self(const char *file, const char *text)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/%s", file);
	int fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

static int raw_hide(const char *self, unsigned long n)
{
	const char *dir = getenv("PROFIL_RECORD_DIR");
	char parent[4096], map[64], units_arg[32];
	if (!dir || snprintf(parent, sizeof parent, "%s", dir) >= (int)sizeof parent)
		return 2;
	char *slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return 2;
	*slash = '\0';
	uid_t uid = getuid();
	gid_t gid = getgid();
	if (syscall(SYS_unshare, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET) != 0) {
		perror("rec-prog rawhide: unshare");
		return 2;
	}
	snprintf(map, sizeof map, "0 %u 1\n", (unsigned)uid);
	if (write_self("setgroups", "deny") != 0 || write_self("uid_map", map) != 0)
		return 2;
	snprintf(map, sizeof map, "0 %u 1\n", (unsigned)gid);
	if (write_self("gid_map", map) != 0 || mount("none", parent, "tmpfs", 0, NULL) != 0) {
		perror("rec-prog rawhide: mount");
		return 2;
	}
	if (access(dir, F_OK) == 0)
		return 3;
	snprintf(units_arg, sizeof units_arg, "%lu", n);
	execl(self, self, "fork", units_arg, (char *)NULL);
	return 2;
}

static volatile int iterating;

static int slow_visit(struct dl_phdr_info *info, size_t size, void *unused)
{
	(void)info, (void)size, (void)unused;
	iterating = 1;
	nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
	return 1;
}

static void *iterate_for_ever(void *unused)
{
	for (;;)
		dl_iterate_phdr(slow_visit, unused);
	return NULL;
}

/* Waits up to 10 s for pid: its exit status, or 1. */
static int wait_bounded(pid_t pid)
{
	int st;
	for (int i = 0; i < 1000; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	fprintf(stderr, "rec-prog: child %d still running after 10 s\n", (int)pid);
	return 1;
}

static int fork_while_iterating(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, iterate_for_ever, NULL) != 0)
		return 2;
	int rc = 0;
	for (int k = 0; k < 3; k++) {
		while (!iterating)
			sched_yield();
		pid_t pid = fork(); /* most likely while the thread holds the lock */
		if (pid == 0) {
			child_hot(units / 3);
			_exit(0);
		}
		rc |= pid < 0 ? 1 : wait_bounded(pid);
	}
	return rc;
}

static void *fork_in_thread(void *arg)
{
	int *res = arg;
	pid_t pid = fork();
	if (pid < 0)
		return NULL;
	if (pid == 0) {
		child_hot(units);
		return NULL; /* the child's last thread ends: glibc's exit(0) */
	}
	main_hot(units);
	int st;
	for (int i = 0; i < 1000; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid) {
			*res = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
			return NULL;
		}
		nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
	}
	fprintf(stderr, "rec-prog: child %d still running after 10 s\n", (int)pid);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return NULL;
}

static int fork_thread(void)
{
	int res = 1;
	pthread_t t;
	if (pthread_create(&t, NULL, fork_in_thread, &res) != 0)
		return 1;
	pthread_join(t, NULL);
	return res;
}

__attribute__((noinline)) static void dtor_hot(void *value)
{
	REC_BURN((unsigned long)value, 11);
}

static void *keyed(void *key)
{
	pthread_setspecific(*(pthread_key_t *)key, (void *)units);
	lib_hot(units);
	return NULL;
}

static int key_destructor(void)
{
	static pthread_key_t key;
	pthread_t t;
	if (pthread_key_create(&key, dtor_hot) != 0 || pthread_create(&t, NULL, keyed, &key) != 0)
		return 1;
	pthread_join(t, NULL);
	return 0;
}

/* Whether this thread's mask reads back as every signal that can be
 * blocked. */
static int mask_full(void)
{
	sigset_t now;
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	for (int s = 1; s < NSIG; s++)
		if (!unblockable(s) && !sigismember(&now, s))
			return 0;
	return 1;
}

static int spawn_masked(const char *self)
{
	sigset_t all;
	sigfillset(&all);
	posix_spawnattr_t sa;
	posix_spawnattr_init(&sa);
	posix_spawnattr_setsigmask(&sa, &all);
	posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETSIGMASK);
	char n[32];
	snprintf(n, sizeof n, "%lu", units);
	char *argv[] = {(char *)self, "maskedd", n, NULL};
	pid_t pid;
	extern char **environ;
	if (posix_spawn(&pid, self, NULL, &sa, argv, environ) != 0)
		return 1;
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int execed(const char *self)
{
	pid_t pid = fork();
	if (pid == 0) {
		char n[32];
		snprintf(n, sizeof n, "%lu", units);
		execl(self, self, "execd", n, (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

__attribute__((noinline)) static void short_hot(void)
{
	volatile unsigned long acc = 6;
	for (unsigned long i = 0; i < REC_UNIT / 4; i++)
		acc += i ^ (acc >> 3);
}

static int short_exits(void)
{
	for (unsigned long i = 0; i < 100 * units / 30; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			short_hot();
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) != pid)
			return 1;
	}
	return 0;
}

static int burn_then_exec(const char *self)
{
	pid_t pid = fork();
	if (pid == 0) {
		child_hot(units);
		execl(self, self, "execd", "0", (char *)NULL);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

static int echo(void)
{
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
		fwrite(buf, 1, n, stdout);
	fputs("to stderr\n", stderr);
	return 7;
}

#if RAWSIG_OK
/* Built as rec-go (-DREC_GO): the note Go's linker puts in every program
 * (owner "Go\0\0", type 4, the build ID), and a handler that dies of a
 * SIGTRAP it did not raise, as Go's runtime does ("SIGTRAP: trace trap") */
#ifdef REC_GO
__asm__(".pushsection .note.go.buildid,\"a\",@note\n"
        ".balign 4\n"
        ".long 4\n.long 8\n.long 4\n"
        ".asciz \"Go\"\n.byte 0\n"
        ".ascii \"rec-go-1\"\n"
        ".popsection\n");
#endif

static void go_like_handler(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)info, (void)uc;
#ifdef REC_GO
	if (sig == SIGTRAP) {
		static const char msg[] = "SIGTRAP: trace trap\n";
		(void)!write(2, msg, sizeof msg - 1);
		_exit(2);
	}
#endif
}
#endif

static int raw_signals(void)
{
	main_hot(units);
#if RAWSIG_OK
	if (rawsig_set_all(go_like_handler) != 0)
		return 1;
#endif
	main_hot(units);
	printf("done\n");
	return 0;
}

static volatile sig_atomic_t own_ticks, foreign_ticks;

static void own_prof_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if (si->si_code == SI_KERNEL)
		own_ticks++;
	else
		foreign_ticks++;
}

static int own_profiler(void)
{
#if RAWSIG_OK
	if (rawsig_set(SIGPROF, own_prof_handler) != 0)
		return 1;
	struct itimerval it = {{0, 10000}, {0, 10000}};
	if (setitimer(ITIMER_PROF, &it, NULL) != 0)
		return 1;
	main_hot(units);
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_PROF, &off, NULL);
#endif
	printf("foreign %d\n", (int)foreign_ticks);
	return 0;
}

static void *renamed(void *arg)
{
	pthread_setname_np(pthread_self(), "early");
	lib_hot(units);
	pthread_setname_np(pthread_self(), "late-name");
	return arg;
}

static int rename_thread(void)
{
	pthread_t th;
	if (pthread_create(&th, NULL, renamed, NULL) != 0)
		return 2;
	pthread_join(th, NULL);
	main_hot(units);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "threads";
	if (argc > 2)
		units = strtoul(argv[2], NULL, 10);
	if (!strcmp(mode, "threads"))
		return threads(units);
	if (!strcmp(mode, "slower"))
		return threads(3 * units);
	if (!strcmp(mode, "blockall"))
		return blockall(units);
	if (!strcmp(mode, "dlopen"))
		return plugin(argv[0], 0);
	if (!strcmp(mode, "initcode") || !strcmp(mode, "initbare")) {
		if (mode[4] == 'c' ? !rec_open_beside(argv[0], "librecinit.so")
		                   : !dlopen("librecinit.so", RTLD_NOW))
			return 1;
		main_hot(units);
		return 0;
	}
	if (!strcmp(mode, "plugswap"))
		return plugins_in_turn(argv[0]);
	if (!strcmp(mode, "plugexit"))
		return plugin(argv[0], 1);
	if (!strcmp(mode, "plugbare"))
		return plugin_as("librecplug.so");
	if (!strcmp(mode, "plugorigin"))
		return plugin_as("$ORIGIN/librecplug.so");
	if (!strcmp(mode, "plugrpath"))
		return plugin_by_rpath(argv[0]);
	if (!strcmp(mode, "coro"))
		return coroutine();
	if (!strcmp(mode, "fork"))
		return forked();
	if (!strcmp(mode, "closefork")) {
		close_range(3, ~0u, 0);
		return forked();
	}
	if (!strcmp(mode, "hidedir"))
		return hide_dir(units);
	if (!strcmp(mode, "rawhide"))
		return raw_hide(argv[0], units);
	if (!strcmp(mode, "forkthread"))
		return fork_thread();
	if (!strcmp(mode, "forkiter"))
		return fork_while_iterating();
	if (!strcmp(mode, "exec"))
		return execed(argv[0]);
	if (!strcmp(mode, "shortexit"))
		return short_exits();
	if (!strcmp(mode, "burnexec"))
		return burn_then_exec(argv[0]);
	if (!strcmp(mode, "execd"))
		return exec_hot(units), 0;
	if (!strcmp(mode, "inline"))
		return outer_hot(units), 0;
	if (!strcmp(mode, "rename"))
		return rename_thread();
	if (!strcmp(mode, "named"))
		return named_threads();
	if (!strcmp(mode, "clocks"))
		return clock_hot(units), 0;
	if (!strcmp(mode, "spin")) {
		main_hot(units);
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		for (;;)
			main_hot(1);
	}
	if (!strcmp(mode, "exit")) {
		main_hot(units);
		printf("never flushed");
		_exit(3);
	}
	if (!strcmp(mode, "echo"))
		return echo();
	if (!strcmp(mode, "rawsig"))
		return raw_signals();
	if (!strcmp(mode, "ignexec") && argc > 2) {
		signal(SIGHUP, SIG_IGN);
		signal(SIGTRAP, SIG_IGN);
		signal(SIGCHLD, SIG_IGN);
		signal(SIGIO, SIG_IGN);
		execvp(argv[2], argv + 2);
		perror("rec-prog: execvp");
		return 127;
	}
	if (!strcmp(mode, "keydtor"))
		return key_destructor();
	if (!strcmp(mode, "ignored")) {
		struct sigaction sa;
		printf("ignored:");
		for (int sig = 1; sig < 32; sig++)
			if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
				printf(" %d", sig);
		putchar('\n');
		return 0;
	}
	if (!strcmp(mode, "spawnmasked"))
		return spawn_masked(argv[0]);
	if (!strcmp(mode, "maskedd")) {
		puts(mask_full() ? "mask as set" : "mask differs");
		fflush(stdout);
		return exec_hot(units), 0;
	}
	if (!strcmp(mode, "ownprof"))
		return own_profiler();
	fprintf(stderr, "rec-prog: unknown mode %s\n", mode);
	return 2;
}
