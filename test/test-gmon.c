/*
 * test-gmon.c - gmon.out files read back by the real GNU gprof: monitor()
 * in a PIE and a non-PIE program, counters above 65535 from 32-bit
 * ranges, and write errors that must leave no partial file.
 */
#include "runner.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "profil.h"

#define GPROF "gprof"

/* 16-byte aligned: the test's 4-byte bins must not straddle the function
 * before it (a sanitizer build put spin_big at ...0a, sharing bin 0 with a
 * module constructor that gprof then credited with half of it). */
__attribute__((aligned(16))) unsigned long spin_big(unsigned long iters);
SPIN_FN(spin_big, 51)

/* Linker-defined start of this program's image. */
extern char __executable_start[];

/* A fresh directory under /tmp, removed by clean_dir(). */
static char *make_dir(void)
{
	static char tmpl[64];
	snprintf(tmpl, sizeof tmpl, "/tmp/profil-gmon-XXXXXX");
	ASSERT(mkdtemp(tmpl));
	return tmpl;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	ASSERT(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static void clean_dir(const char *dir)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	ASSERT_EQ(system(cmd), 0);
}

/* A file next to this test binary (the helpers are built there). */
static void sibling(char *out, size_t size, const char *name)
{
	char self[2048];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	ASSERT(n > 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	snprintf(out, size, "%s/%s", self, name);
}

/* gprof's output, shown when a check on it fails. */
static char gprof_log[32768];
static int show_log(void)
{
	fputs(gprof_log, stderr);
	return 0;
}
#define CHECK(cond) ASSERT((cond) || show_log())
#define CHECK_NEAR(x, want, tol) \
	ASSERT_NEAR(x, want, fabs((x) - (want)) <= (tol) || show_log() ? (tol) : (tol))

/* Self seconds gprof's flat profile gives fn (-1 if absent), and through
 * *first the name on its first line.  Fails when gprof fails. */
static double gprof_self(const char *exe, const char *gmon, const char *fn, char *first,
                         double *rate)
{
	char cmd[8192], line[1024], name[512];
	snprintf(cmd, sizeof cmd, GPROF " -p -b '%s' '%s' 2>&1", exe, gmon);
	FILE *p = popen(cmd, "r");
	ASSERT(p);
	double found = -1, pct, cum, self;
	first[0] = '\0';
	gprof_log[0] = '\0';
	while (fgets(line, sizeof line, p)) {
		size_t used = strlen(gprof_log);
		snprintf(gprof_log + used, sizeof gprof_log - used, "%s", line);
		if (sscanf(line, "Each sample counts as %lf", &pct) == 1)
			*rate = 1.0 / pct;
		if (sscanf(line, "%lf %lf %lf %*[^\n]", &pct, &cum, &self) != 3)
			continue;
		char *last = strrchr(line, ' ');
		ASSERT(last && sscanf(last, "%511s", name) == 1);
		if (!first[0])
			snprintf(first, 512, "%s", name);
		if (strcmp(name, fn) == 0)
			found = self;
	}
	int rc = pclose(p);
	CHECK(rc == 0);
	return found;
}

/* Runs a monitor() helper and checks gprof's flat profile against the
 * CPU time the helper measured for its two functions. */
static void monitor_with_gprof(const char *helper, int fraction)
{
	char exe[4096], cmd[8192], first[512];
	char *dir = make_dir();
	sibling(exe, sizeof exe, helper);
	snprintf(cmd, sizeof cmd, "PROFIL_GMON='%s/gmon.out' '%s' 0.5 %d", dir, exe, fraction);
	FILE *p = popen(cmd, "r");
	ASSERT(p);
	double hot = 0, cold = 0, rate = 0;
	ASSERT_EQ(fscanf(p, "hot %lf cold %lf", &hot, &cold), 2);
	ASSERT_EQ(pclose(p), 0);
	snprintf(cmd, sizeof cmd, "%s/gmon.out", dir);
	double g_hot = gprof_self(exe, cmd, "hot_function", first, &rate);
	double g_cold = gprof_self(exe, cmd, "cold_function", first, &rate);
	CHECK(strcmp(first, "hot_function") == 0);
	CHECK_NEAR(rate, 1000, 0.5); /* the helper runs at the default rate */
	/* about 400 and 100 samples: 6 sigma of Poisson plus clock overhead */
	CHECK_NEAR(g_hot, hot, 6 * sqrt(hot / 1000) + 0.05 * hot + 0.01);
	CHECK_NEAR(g_cold, cold, 6 * sqrt(cold / 1000) + 0.05 * cold + 0.01);
	ASSERT_EQ(count_entries(dir), 1); /* nothing but gmon.out */
	clean_dir(dir);
}

TEST_IMPL(gmon_monitor_gprof_pie)
{
	SKIP_IF_SAMPLES_DEFERRED();
	monitor_with_gprof("gmon-hot", 1);
	return 0;
}

TEST_IMPL(gmon_monitor_gprof_nopie)
{
	SKIP_IF_SAMPLES_DEFERRED();
	/* a quarter-size buffer: scale about 0x4000, bins of ~8 bytes */
	monitor_with_gprof("gmon-hot-nopie", 4);
	return 0;
}

/* Tru64 32-bit counters over spin_big (which does not run), filled by
 * hand while profiling is on, then stopped: the counts are kept at the
 * stop, so the buffer must hold them by then. */
static unsigned int *big_counts(unsigned int c0, unsigned int c1)
{
	unsigned long lo, hi;
	ASSERT_OK(function_range((void *)spin_big, &lo, &hi));
	lo &= ~3ul;
	size_t nbins = (hi - lo + 3) / 4;
	unsigned int *buf = calloc(nbins, sizeof *buf);
	ASSERT(buf && nbins >= 2);
	struct profil_args a = {buf, (void *)hi, (void *)lo, (void *)lo, 0x10000};
	ASSERT_OK(profil((unsigned short *)(void *)&a, 1, (size_t)-1, 0));
	memset(buf, 0, nbins * sizeof *buf);
	buf[0] = c0, buf[1] = c1;
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	return buf;
}

TEST_IMPL(gmon_counts_over_65535)
{
	unsigned int *buf = big_counts(200000, 70001);
	char exe[4096], path[256], first[512];
	char *dir = make_dir();
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	ASSERT(n > 0);
	exe[n] = '\0';
	snprintf(path, sizeof path, "%s/gmon.out", dir);
	ASSERT_OK(profil_write_gmon(path));
	double rate = 0, self = gprof_self(exe, path, "spin_big", first, &rate);
	CHECK_NEAR(rate, profil_hz(), 0.5);
	CHECK(strcmp(first, "spin_big") == 0);
	CHECK_NEAR(self, 270001.0 / profil_hz(), 0.0051);
	clean_dir(dir);
	free(buf);
	return 0;
}

/* A small stopped histogram, so writes have something to write: filled
 * while profiling is on (the counts are kept when it stops). */
static unsigned short *some_histogram(size_t nbins)
{
	unsigned short *h = calloc(nbins, sizeof *h);
	ASSERT(h);
	ASSERT_OK(profil(h, nbins * sizeof *h, (size_t)(uintptr_t)__executable_start, 0x10000));
	for (size_t i = 0; i < nbins; i++)
		h[i] = (unsigned short)(1 + i % 7); /* every bin nonzero: a big file */
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	return h;
}

TEST_IMPL(gmon_write_errors)
{
	ASSERT_ERR(profil_write_gmon("/tmp/never-written"), ENOENT); /* no histogram yet */
	unsigned short *h = some_histogram(4096);
	char *dir = make_dir(), path[512], link[512];
	/* /dev/full itself, and through a symbolic link: ENOSPC, link kept */
	ASSERT_ERR(profil_write_gmon("/dev/full"), ENOSPC);
	snprintf(link, sizeof link, "%s/gmon.out", dir);
	ASSERT_OK(symlink("/dev/full", link));
	ASSERT_ERR(profil_write_gmon(link), ENOSPC);
	struct stat st;
	ASSERT_OK(lstat(link, &st));
	ASSERT(S_ISLNK(st.st_mode));
	ASSERT_EQ(count_entries(dir), 1);
	/* a missing directory */
	snprintf(path, sizeof path, "%s/none/gmon.out", dir);
	ASSERT_ERR(profil_write_gmon(path), ENOENT);
	ASSERT_EQ(count_entries(dir), 1);
	clean_dir(dir);
	free(h);
	return 0;
}

static int file_bytes(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ASSERT(fd >= 0);
	ssize_t n = read(fd, buf, size);
	close(fd);
	ASSERT(n >= 0);
	return (int)n;
}

/* A write that fails half way (file size limit) keeps the old file. */
TEST_IMPL(gmon_failed_write_keeps_old_file)
{
	unsigned short *h = some_histogram(8);
	char *dir = make_dir(), path[512];
	static char before[1 << 16], after[1 << 16];
	snprintf(path, sizeof path, "%s/gmon.out", dir);
	ASSERT_OK(profil_write_gmon(path));
	int n0 = file_bytes(path, before, sizeof before);
	ASSERT(n0 > 20);
	free(h);
	h = some_histogram(4096); /* 8 KiB of counters */
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = {2048, RLIM_INFINITY};
	ASSERT_OK(setrlimit(RLIMIT_FSIZE, &rl));
	ASSERT_ERR(profil_write_gmon(path), EFBIG);
	ASSERT_EQ(file_bytes(path, after, sizeof after), n0);
	ASSERT(memcmp(before, after, (size_t)n0) == 0);
	ASSERT_EQ(count_entries(dir), 1); /* no temporary left behind */
	rl.rlim_cur = RLIM_INFINITY;
	ASSERT_OK(setrlimit(RLIMIT_FSIZE, &rl));
	ASSERT_OK(profil_write_gmon(path));
	ASSERT(file_bytes(path, after, sizeof after) > 8192);
	clean_dir(dir);
	free(h);
	return 0;
}

/* An unwritable directory: EACCES (as an unprivileged user when root,
 * who may write anywhere). */
TEST_IMPL(gmon_unwritable_directory)
{
	unsigned short *h = some_histogram(64);
	char *dir = make_dir(), sub[512], path[600];
	snprintf(sub, sizeof sub, "%s/ro", dir);
	ASSERT_OK(mkdir(sub, 0555));
	ASSERT_OK(chmod(dir, 0755));
	snprintf(path, sizeof path, "%s/gmon.out", sub);
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(3);
		errno = 0;
		int rc = profil_write_gmon(path);
		_exit(rc == -1 && errno == EACCES ? 0 : 1);
	}
	int status;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	ASSERT_EQ(count_entries(sub), 0);
	clean_dir(dir);
	free(h);
	return 0;
}

/* A range in a shared library goes to a file of its own, with addresses
 * relative to the library's load address. */
TEST_IMPL(gmon_shared_object_file)
{
	unsigned long lo, hi;
	ASSERT_OK(function_range((void *)profil_get_stats, &lo, &hi));
	Dl_info info;
	ASSERT(dladdr((void *)profil_get_stats, &info) && info.dli_fname);
	size_t nbins = (hi - lo) / 2 + 1;
	unsigned short *h = calloc(nbins, sizeof *h);
	ASSERT(h);
	ASSERT_OK(profil(h, nbins * sizeof *h, lo & ~1ul, 0x10000));
	memset(h, 0, nbins * sizeof *h); /* before the stop, which keeps it */
	h[nbins / 2] = 1234;
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	char *dir = make_dir(), path[512], lib[1024], first[512];
	snprintf(path, sizeof path, "%s/gmon.out", dir);
	ASSERT_OK(profil_write_gmon(path));
	const char *base = strrchr(info.dli_fname, '/');
	snprintf(lib, sizeof lib, "%s.%s", path, base ? base + 1 : info.dli_fname);
	ASSERT_EQ(access(lib, R_OK), 0);
	ASSERT_EQ(count_entries(dir), 2); /* gmon.out (empty) and the library's */
	double rate = 0, self = gprof_self(info.dli_fname, lib, "profil_get_stats", first, &rate);
	CHECK(strcmp(first, "profil_get_stats") == 0);
	CHECK_NEAR(self, 1234.0 / profil_hz(), 0.0051);
	clean_dir(dir);
	free(h);
	return 0;
}
