/*
 * test-cli.c - runs the profil command's test cases, which are data:
 * the files test/cli/NAME.t (the Makefile makes each case a test cli_<file>_<n>).
 *
 * A case file is a list of cases; "#" lines and blank lines are comments.
 *
 *   $ COMMAND                 opens a case: run with /bin/sh -c in a fresh
 *                             directory holding the fixtures (see below)
 *   exit N                    its exit status (default 0; "exit !0": any
 *                             failure)
 *   stdout /ERE/              some line of standard output matches
 *   !stdout /ERE/             no line matches
 *   stderr /ERE/, !stderr /ERE/
 *   stdout-lines N, stderr-lines N    exactly N lines
 *   row /ERE/ K OP V          in the first stdout line matching ERE, the
 *                             K-th whitespace-separated field (1-based,
 *                             a trailing % ignored) compares OP (== != <
 *                             <= > >=) with the number V
 *   file PATH /ERE/           PATH exists and a line of it matches
 *   nofile PATH               PATH does not exist (no partial output)
 *   needs TOOL                skip the case, saying so, without TOOL
 *                             ("needs root": unless we run as root;
 *                             "needs io_uring": unless io_uring_setup()
 *                             works here: kernel.io_uring_disabled, or a
 *                             container's seccomp profile, refuse it;
 *                             "needs i386": unless the kernel runs a
 *                             32-bit x86 program;
 *                             "needs no valgrind": not under `make
 *                             valgrind`, for a case that takes from the
 *                             command what valgrind needs too, as a
 *                             writable TMPDIR)
 *
 * The command runs with PATH starting with the build directory (so
 * `profil` is the one just built), in a temporary directory where
 * $MKPROFILE (test/cli/mkprofile.c) has written the fixture profiles;
 * the directory is removed afterwards.
 */
#include "runner.h"

#include <ctype.h>
#include <elf.h>
#include <limits.h>
#include <regex.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int cli_case(const char *file, int n);

struct text {
	char **lines;
	size_t n;
};

static void slurp(const char *path, struct text *t)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	t->lines = NULL, t->n = 0;
	while (f && (len = getline(&line, &cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			line[len - 1] = '\0';
		t->lines = realloc(t->lines, (t->n + 1) * sizeof *t->lines);
		ASSERT(t->lines);
		t->lines[t->n++] = strdup(line);
	}
	free(line);
	if (f)
		fclose(f);
}

static void text_free(struct text *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->lines[i]);
	free(t->lines);
	t->lines = NULL, t->n = 0;
}

/* The regex between slashes at s (the last '/' of the line ends it). */
static void regex_at(const char *s, regex_t *re, const char **rest)
{
	const char *a = strchr(s, '/'), *b = a ? strrchr(a + 1, '/') : NULL;
	if (!a || !b)
		FAIL_AT("no /regex/ in: %s", s);
	char *src = strndup(a + 1, (size_t)(b - a - 1));
	if (regcomp(re, src, REG_EXTENDED | REG_NOSUB) != 0)
		FAIL_AT("bad regex /%s/", src);
	free(src);
	if (rest)
		*rest = b + 1;
}

static const char *match(const struct text *t, regex_t *re)
{
	for (size_t i = 0; i < t->n; i++)
		if (regexec(re, t->lines[i], 0, NULL, 0) == 0)
			return t->lines[i];
	return NULL;
}

static void dump(const char *what, const struct text *t)
{
	fprintf(stderr, "--- %s (%zu lines)\n", what, t->n);
	for (size_t i = 0; i < t->n && i < 40; i++)
		fprintf(stderr, "%s\n", t->lines[i]);
}

/* row /ERE/ K OP V */
static int row_check(const struct text *out, const char *arg)
{
	regex_t re;
	const char *rest;
	regex_at(arg, &re, &rest);
	const char *line = match(out, &re);
	regfree(&re);
	int k;
	char op[3];
	double want;
	if (sscanf(rest, "%d %2s %lf", &k, op, &want) != 3)
		FAIL_AT("bad row check: %s", arg);
	if (!line)
		return 0;
	char *copy = strdup(line), *save, *tok = strtok_r(copy, " \t", &save);
	for (int i = 1; tok && i < k; i++)
		tok = strtok_r(NULL, " \t", &save);
	double v = tok ? strtod(tok, NULL) : NAN;
	free(copy);
	int ok = !strcmp(op, "==") ? v == want : !strcmp(op, "!=") ? v != want
	       : !strcmp(op, "<") ? v < want : !strcmp(op, "<=") ? v <= want
	       : !strcmp(op, ">") ? v > want : !strcmp(op, ">=") ? v >= want : -1;
	if (ok < 0)
		FAIL_AT("bad operator in: %s", arg);
	if (!ok)
		fprintf(stderr, "field %d of \"%s\" is %g\n", k, line, v);
	return ok;
}

static int file_check(const char *arg, int want)
{
	char path[PATH_MAX];
	if (sscanf(arg, "%4095s", path) != 1)
		FAIL_AT("bad file check: %s", arg);
	if (!want)
		return access(path, F_OK) != 0;
	struct text t;
	regex_t re;
	slurp(path, &t);
	regex_at(arg + strlen(path), &re, NULL);
	int ok = match(&t, &re) != NULL;
	regfree(&re);
	text_free(&t);
	return ok;
}

/* Lines of case n (1-based) of file: its command first. */
static void load_case(const char *file, int n, struct text *c)
{
	struct text all;
	slurp(file, &all);
	if (all.n == 0)
		FAIL_AT("cannot read %s", file);
	int k = 0;
	c->lines = calloc(all.n, sizeof *c->lines);
	c->n = 0;
	for (size_t i = 0; i < all.n; i++) {
		const char *l = all.lines[i];
		if (!strncmp(l, "$ ", 2))
			k++;
		if (k == n && *l && *l != '#')
			c->lines[c->n++] = strdup(all.lines[i]);
	}
	text_free(&all);
	if (c->n == 0)
		FAIL_AT("%s has no case %d", file, n);
}

/*
 * Under `make valgrind` (PROFIL_TEST_TOOL=valgrind) the command itself
 * runs under memcheck: DIR.vg/profil is a script that runs BUILD/profil
 * so, logging to DIR.vg/log.PID, and PATH finds it first.  A log with
 * anything in it fails the case (vg_errors()); an exit status would not
 * do, since many cases expect the command to fail.  Returns DIR.vg.
 */
static const char *valgrind_wrapper(const char *dir, const char *build)
{
	static char vg[PATH_MAX];
	char script[PATH_MAX + 32];
	snprintf(vg, sizeof vg, "%s.vg", dir);
	ASSERT(mkdir(vg, 0700) == 0 || errno == EEXIST);
	snprintf(script, sizeof script, "%s/profil", vg);
	FILE *f = fopen(script, "w");
	ASSERT(f);
	fprintf(f, "#!/bin/sh\nexec valgrind -q --leak-check=full --errors-for-leak-kinds=definite "
	        "--log-file='%s/log.%%p' '%s/profil' \"$@\"\n", vg, build);
	ASSERT_OK(fclose(f));
	ASSERT_OK(chmod(script, 0755));
	return vg;
}

/* The valgrind logs of a case (see valgrind_wrapper()): 1 if any says
 * anything, which is printed; the directory is removed. */
static int vg_errors(const char *dir)
{
	char cmd[2 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "d='%s.vg'; [ -d \"$d\" ] || exit 0; "
	         "for f in \"$d\"/log.*; do [ -s \"$f\" ] && { cat \"$f\" >&2; bad=1; }; done; "
	         "rm -rf \"$d\"; exit ${bad:-0}", dir);
	return system(cmd) != 0;
}

static int run(const char *cmd, const char *dir)
{
	char self[PATH_MAX], build[PATH_MAX], env[3 * PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
	ASSERT(len > 0);
	self[len] = '\0';
	*strrchr(self, '/') = '\0';                 /* BUILD/test */
	snprintf(build, sizeof build, "%s", self);
	*strrchr(build, '/') = '\0';                /* BUILD */
	const char *tool = getenv("PROFIL_TEST_TOOL");
	if (tool && !strcmp(tool, "valgrind"))
		snprintf(build, sizeof build, "%s", valgrind_wrapper(dir, build));
	snprintf(env, sizeof env, "%s:%s", build, getenv("PATH") ? getenv("PATH") : "/bin:/usr/bin");
	setenv("PATH", env, 1);
	snprintf(env, sizeof env, "%s/mkprofile", self);
	setenv("MKPROFILE", env, 1);
	setenv("LC_ALL", "C", 1);
	snprintf(env, sizeof env, "%s/rec", self);   /* test/rec/ programs */
	setenv("REC", env, 1);
	/* profil record's cache (cli/record/cache.c) in the build tree */
	snprintf(env, sizeof env, "%s/cache", self);
	setenv("PROFIL_CACHE", env, 0);
	char mk[2 * PATH_MAX];
	snprintf(mk, sizeof mk, "'%s/mkprofile' '%s'", self, dir);
	if (system(mk) != 0)
		FAIL_AT("mkprofile failed");
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		if (chdir(dir) != 0)
			_exit(126);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		ASSERT(errno == EINTR);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* One check line; 1 if it holds. */
static int check(const char *l, int status, const struct text *out, const struct text *err,
                 int *skip)
{
	regex_t re;
	int neg = *l == '!';
	const char *w = l + neg;
	if (!strncmp(w, "exit ", 5))
		return !strcmp(w + 5, "!0") ? status != 0 : status == atoi(w + 5);
	if (!strncmp(w, "stdout ", 7) || !strncmp(w, "stderr ", 7)) {
		regex_at(w + 7, &re, NULL);
		int found = match(w[3] == 'o' ? out : err, &re) != NULL;
		regfree(&re);
		return found != neg;
	}
	if (!strncmp(w, "stdout-lines ", 13))
		return out->n == (size_t)atoi(w + 13);
	if (!strncmp(w, "stderr-lines ", 13))
		return err->n == (size_t)atoi(w + 13);
	if (!strncmp(w, "row ", 4))
		return row_check(out, w + 4);
	if (!strncmp(w, "file ", 5))
		return file_check(w + 5, 1);
	if (!strncmp(w, "nofile ", 7))
		return file_check(w + 7, 0);
	(void)skip;
	FAIL_AT("unknown check: %s", l);
}

static int io_uring_refused(void)
{
	unsigned char params[120] = {0}; /* struct io_uring_params: 120 bytes */
	long fd = syscall(SYS_io_uring_setup, 1, params);
	if (fd >= 0)
		close((int)fd);
	return fd < 0;
}

/* Whether this kernel runs 32-bit x86 programs (IA32 emulation: some
 * kernels are built or booted without it, and exec says ENOEXEC): a
 * minimal static i386 program that only exits 0, written and run. */
static int i386_refused(void)
{
	static const unsigned char code[] = {0xb8, 1, 0, 0, 0, 0x31, 0xdb, 0xcd, 0x80};
	unsigned char img[sizeof(Elf32_Ehdr) + sizeof(Elf32_Phdr) + sizeof code];
	Elf32_Ehdr eh = {{0x7f, 'E', 'L', 'F', ELFCLASS32, ELFDATA2LSB, EV_CURRENT}, ET_EXEC,
	                 EM_386, EV_CURRENT, 0x08048000 + sizeof eh + sizeof(Elf32_Phdr),
	                 sizeof eh, 0, 0, sizeof eh, sizeof(Elf32_Phdr), 1, 0, 0, 0};
	Elf32_Phdr ph = {PT_LOAD, 0, 0x08048000, 0x08048000, sizeof img, sizeof img,
	                 PF_R | PF_X, 0x1000};
	memcpy(img, &eh, sizeof eh);
	memcpy(img + sizeof eh, &ph, sizeof ph);
	memcpy(img + sizeof eh + sizeof ph, code, sizeof code);
	char path[] = "/tmp/profil-i386-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 1;
	int ok = write(fd, img, sizeof img) == (ssize_t)sizeof img && fchmod(fd, 0700) == 0;
	close(fd);
	pid_t pid = ok ? fork() : -1;
	if (pid == 0) {
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	int status = -1;
	if (pid > 0)
		waitpid(pid, &status, 0);
	unlink(path);
	return !(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int tool_missing(const struct text *c)
{
	for (size_t i = 1; i < c->n; i++) {
		char cmd[512];
		if (strncmp(c->lines[i], "needs ", 6))
			continue;
		if (!strcmp(c->lines[i] + 6, "root")) {
			if (geteuid() == 0)
				continue;
			snprintf(test_skip_reason, sizeof test_skip_reason, "it needs root");
			printf("skipped: %s\n", test_skip_reason);
			return 1;
		}
		if (!strcmp(c->lines[i] + 6, "no valgrind")) {
			const char *tool = getenv("PROFIL_TEST_TOOL");
			if (!tool || strcmp(tool, "valgrind"))
				continue;
			snprintf(test_skip_reason, sizeof test_skip_reason, "not under valgrind");
			printf("skipped: %s\n", test_skip_reason);
			return 1;
		}
		if (!strcmp(c->lines[i] + 6, "i386")) {
			if (!i386_refused())
				continue;
			snprintf(test_skip_reason, sizeof test_skip_reason,
			         "this kernel does not run 32-bit x86 programs");
			printf("skipped: %s\n", test_skip_reason);
			return 1;
		}
		if (!strcmp(c->lines[i] + 6, "io_uring")) {
			if (!io_uring_refused())
				continue;
			snprintf(test_skip_reason, sizeof test_skip_reason, "io_uring is refused here");
			printf("skipped: %s\n", test_skip_reason);
			return 1;
		}
		snprintf(cmd, sizeof cmd, "command -v '%s' >/dev/null 2>&1", c->lines[i] + 6);
		if (system(cmd) != 0) { /* reported as skipped (runner.h) */
			snprintf(test_skip_reason, sizeof test_skip_reason, "%s is not installed",
			         c->lines[i] + 6);
			printf("skipped: %s\n", test_skip_reason);
			return 1;
		}
	}
	return 0;
}

int cli_case(const char *file, int n)
{
	struct text c, out, err;
	load_case(file, n, &c);
	if (tool_missing(&c)) {
		text_free(&c);
		return 0;
	}
	char dir[] = "/tmp/profil-cli-XXXXXX", cmd[8192], path[64];
	ASSERT(mkdtemp(dir));
	snprintf(cmd, sizeof cmd, "exec >'%s/.stdout' 2>'%s/.stderr'; %s", dir, dir, c.lines[0] + 2);
	int status = run(cmd, dir);
	snprintf(path, sizeof path, "%s/.stdout", dir);
	slurp(path, &out);
	snprintf(path, sizeof path, "%s/.stderr", dir);
	slurp(path, &err);
	int failed = 0, has_exit = 0, skip = 0;
	ASSERT_OK(chdir(dir)); /* file checks name files of the case's directory */
	for (size_t i = 1; i < c.n; i++) {
		const char *l = c.lines[i];
		if (!strncmp(l, "needs ", 6))
			continue;
		has_exit |= !strncmp(l, "exit ", 5);
		if (!check(l, status, &out, &err, &skip)) {
			fprintf(stderr, "%s case %d: %s\n  failed: %s (exit status %d)\n", file, n,
			        c.lines[0], l, status);
			failed = 1;
		}
	}
	if (!has_exit && status != 0) {
		fprintf(stderr, "%s case %d: %s\n  failed: exit status %d, want 0\n", file, n,
		        c.lines[0], status);
		failed = 1;
	}
	if (vg_errors(dir)) {
		fprintf(stderr, "%s case %d: %s\n  failed: valgrind found errors (above)\n", file, n,
		        c.lines[0]);
		failed = 1;
	}
	if (failed) {
		dump("stdout", &out);
		dump("stderr", &err);
	}
	ASSERT_OK(chdir("/"));
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	text_free(&c), text_free(&out), text_free(&err);
	return failed;
}
