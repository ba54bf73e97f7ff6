/*
 * test-unwind.c - call stacks recorded with every sample (src/unwind/unwind.h).
 *
 * The stack tests run test/unwind/prog.c (uwprog, built -O2
 * -fomit-frame-pointer with a library built the same way) under the
 * agent; uwprog checks its own ring file and prints what it found, which
 * is judged here.  The row builder is checked against readelf's
 * interpretation of the same .eh_frame (binutils, an independent reader).
 */
#include "runner.h"

#include "../src/unwind/unwind_cfi.c"
#include "../src/unwind/unwind_table.c"
#include "../src/unwind/unwind_cache.c" /* uw_module_free() */
#include "../src/unwind/unwind.c"       /* unwind_walk(), on rows built here */

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

/* BUILD/test, where the runner and uwprog live. */
static void test_dir(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	ASSERT(n > 0);
	buf[n] = '\0';
	*strrchr(buf, '/') = '\0';
}

struct uwresult {
	long hot, full, main, thread, truncated, unknown, cut, forked, dirty;
};

/* Runs uwprog MODE under the agent with a depth limit `runs` times in
 * one recording directory (the later runs map the tables the first one
 * cached there); the counts of all runs, and in *cached how many tables
 * the directory held. */
static struct uwresult uwprog_runs(const char *mode, int depth, int runs, long *cached)
{
	char dir[PATH_MAX], tmp[] = "/tmp/profil-unwind.XXXXXX", cmd[4 * PATH_MAX];
	test_dir(dir, sizeof dir);
	ASSERT(mkdtemp(tmp) != NULL);
	snprintf(cmd, sizeof cmd,
	         "for i in $(seq %d); do PROFIL_HZ=1000 PROFIL_STACK_DEPTH=%d PROFIL_RECORD_DIR=%s "
	         "LD_PRELOAD=%s/../libprofil-agent.so %s/uwprog %s || exit 1; done; "
	         "echo cached $(ls %s | grep -c '^uw'); rm -rf %s",
	         runs, depth, tmp, dir, dir, mode, tmp, tmp);
	FILE *p = popen(cmd, "r");
	ASSERT(p != NULL);
	struct uwresult r = {0, 0, 0, 0, 0, 0, 0, 0, 0};
	long c = 0;
	char key[32];
	long v;
	while (fscanf(p, "%31s %ld", key, &v) == 2) {
		long *f = !strcmp(key, "hot") ? &r.hot : !strcmp(key, "full") ? &r.full :
		          !strcmp(key, "main") ? &r.main : !strcmp(key, "thread") ? &r.thread :
		          !strcmp(key, "truncated") ? &r.truncated :
		          !strcmp(key, "unknown") ? &r.unknown : !strcmp(key, "cut") ? &r.cut :
		          !strcmp(key, "forked") ? &r.forked : !strcmp(key, "dirty") ? &r.dirty :
		          !strcmp(key, "cached") ? &c : NULL;
		if (f)
			*f += v;
	}
	ASSERT_EQ(pclose(p), 0);
	printf("%s: hot %ld, full chain %ld (main %ld, thread %ld), truncated %ld, unknown %ld\n",
	       mode, r.hot, r.full, r.main, r.thread, r.truncated, r.unknown);
	if (cached)
		*cached = c;
	return r;
}

static struct uwresult uwprog(const char *mode, int depth)
{
	return uwprog_runs(mode, depth, 1, NULL);
}

/* 1 when the test is to be skipped under the tool it runs under.  Not
 * SKIP_IF_SAMPLES_DEFERRED(), whose `return 0` means "skipped" only in a
 * test's own body: here it made the caller go on and count samples under
 * TSan. */
static int skip_tools(void)
{
	return skip_under("tsan", "TSan defers asynchronous signals; sample counts mean nothing there") ||
	       skip_under("valgrind", "valgrind defers signals and serialises threads") ||
	       skip_under("asan", "uwprog runs under the agent, not built for ASan");
}

/* >= 99% of the samples in uw_hot have the whole chain to their root. */
static void assert_complete(const struct uwresult *r)
{
	ASSERT(r->hot >= 100);
	if (r->full < r->hot * 99 / 100)
		FAIL_AT("%ld of %ld stacks complete, want 99%%", r->full, r->hot);
}

/* Through libc's qsort, a library and back, on main and a second thread. */
TEST_IMPL(unwind_qsort_callback)
{
	if (skip_tools())
		return 0;
	struct uwresult r = uwprog("chain", 128);
	assert_complete(&r);
	ASSERT(r.main >= 30);
	ASSERT(r.thread >= 30);
	return 0;
}

TEST_IMPL(unwind_recursion_50)
{
	if (skip_tools())
		return 0;
	struct uwresult r = uwprog("recurse", 128);
	assert_complete(&r);
	ASSERT_EQ(r.truncated, 0);
	return 0;
}

/* A SIGALRM handler on a sigaltstack: handler, trampoline, the
 * interrupted function, main. */
TEST_IMPL(unwind_signal_handler)
{
	if (skip_tools())
		return 0;
	struct uwresult r = uwprog("signal", 128);
	assert_complete(&r);
	return 0;
}

/* 201 frames deep at a limit of 16: 16 frames and the marker, always. */
TEST_IMPL(unwind_truncated)
{
	if (skip_tools())
		return 0;
	struct uwresult r = uwprog("truncate", 16);
	assert_complete(&r);
	ASSERT(r.truncated >= r.hot * 99 / 100);
	return 0;
}

/* A stack read that faults (the page holding a return address made
 * PROT_NONE) ends that sample's stack [unknown] and nothing else: the
 * samples keep coming, every one with the frames below the page. */
TEST_IMPL(unwind_fault_costs_one_stack)
{
	if (skip_tools())
		return 0;
	struct uwresult r = uwprog("fault", 128);
	assert_complete(&r);
	ASSERT(r.unknown >= r.hot * 99 / 100);
	return 0;
}

/* Three processes of one recording: the first builds the tables and
 * caches them (unwind_cache.c), the others map them; all stacks whole. */
TEST_IMPL(unwind_cached_tables)
{
	if (skip_tools())
		return 0;
	long cached;
	struct uwresult r = uwprog_runs("recurse", 128, 3, &cached);
	assert_complete(&r);
	ASSERT(cached >= 3); /* uwprog, libc, ld.so (and the vDSO...) */
	return 0;
}

/* PROFIL_UNWIND_CACHE (profil record's cache, kept across recordings):
 * tables go there, not to the recording's directory; the next recording
 * reads them; a table cut short there is not trusted but rebuilt. */
TEST_IMPL(unwind_cache_across_recordings)
{
	if (skip_tools())
		return 0;
	char dir[PATH_MAX], keep[] = "/tmp/profil-uwkeep.XXXXXX", cmd[4 * PATH_MAX], env[PATH_MAX];
	test_dir(dir, sizeof dir);
	ASSERT(mkdtemp(keep) != NULL);
	snprintf(env, sizeof env, "PROFIL_UNWIND_CACHE=%s", keep);
	ASSERT_EQ(putenv(env), 0);
	long in_recording;
	struct uwresult r = uwprog_runs("recurse", 128, 1, &in_recording);
	assert_complete(&r);
	ASSERT_EQ(in_recording, 0);
	/* the sizes of the tables kept, then every one cut to half */
	snprintf(cmd, sizeof cmd, "cd %s && n=$(ls | grep -c '^uw') && sz=$(cat uw* | wc -c) && "
	         "byfile=$(ls | grep -c '^uw[0-9a-f]*-file-'; true) && "
	         "for f in uw*; do truncate -s $(( $(stat -c %%s $f) / 2 )) $f; done && "
	         "echo $n $sz $byfile", keep);
	FILE *p = popen(cmd, "r");
	ASSERT(p != NULL);
	long n = 0, bytes = 0, byfile = 0;
	ASSERT_EQ(fscanf(p, "%ld %ld %ld", &n, &bytes, &byfile), 3);
	ASSERT_EQ(pclose(p), 0);
	ASSERT(n >= 4); /* uwprog, libuwchain, libc, ld.so (and the vDSO...) */
	ASSERT_EQ(byfile, 1); /* libuwchain.so has no build-id */
	/* read back whole (a later recording, the same tables) or rebuilt */
	r = uwprog_runs("recurse", 128, 1, &in_recording);
	assert_complete(&r);
	snprintf(cmd, sizeof cmd, "cd %s && cat uw* | wc -c; rm -rf %s", keep, keep);
	p = popen(cmd, "r");
	ASSERT(p != NULL);
	long after = 0;
	ASSERT_EQ(fscanf(p, "%ld", &after), 1);
	ASSERT_EQ(pclose(p), 0);
	ASSERT_EQ(after, bytes); /* every cut table was rebuilt in full */
	return 0;
}

/* A cache directory of its own (PROFIL_UNWIND_CACHE) in keep, a mkdtemp
 * template, for the agents this test starts, filled by one whole run. */
static void fill_own_cache(char *keep)
{
	static char env[PATH_MAX]; /* putenv keeps the string */
	ASSERT(mkdtemp(keep) != NULL);
	snprintf(env, sizeof env, "PROFIL_UNWIND_CACHE=%s", keep);
	ASSERT_EQ(putenv(env), 0);
	struct uwresult r = uwprog_runs("recurse", 128, 1, NULL);
	assert_complete(&r);
}

static void remove_dir(const char *dir)
{
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	ASSERT_EQ(system(cmd), 0);
}

/* The rows of a cached table are mapped from its file (unwind_cache.c).
 * Every file cut to nothing under a running process's mappings: the stack
 * walks fault on their first row, which costs each sample its callers and
 * nothing else (sample.c's recovery): the process lives, the samples go
 * on, each stack [uw_hot, unknown]. */
TEST_IMPL(unwind_cache_cut_while_mapped)
{
	if (skip_tools())
		return 0;
	char keep[] = "/tmp/profil-uwcut.XXXXXX";
	fill_own_cache(keep);
	struct uwresult r = uwprog_runs("cutcache", 128, 1, NULL); /* pclose: exit status 0 */
	remove_dir(keep);
	printf("tables cut: %ld\n", r.cut);
	ASSERT(r.cut >= 3); /* uwprog, libuwchain, libc, ld.so */
	assert_complete(&r);
	ASSERT(r.unknown >= r.hot * 99 / 100);
	return 0;
}

/*
 * The cache files' layout (unwind_cache.c's struct cache_hdr): a 48-byte
 * header whose last two words are nrows and nidx, the rows (12 bytes
 * each), the index (4 bytes an entry).  Overwrites every entry of the
 * index of each "uw" file in dir with `fill`; how many files, -1 if one
 * is not laid out so.  With check set, writes nothing and counts the
 * files whose index is still all `fill`.
 */
static long fill_indexes(const char *dir, unsigned char fill, int check)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	long n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char path[PATH_MAX];
		uint64_t hdr[6];
		if (strncmp(de->d_name, "uw", 2) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		int fd = open(path, O_RDWR | O_CLOEXEC);
		off_t size = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
		if (fd < 0 || pread(fd, hdr, sizeof hdr, 0) != (ssize_t)sizeof hdr ||
		    size != (off_t)(sizeof hdr + hdr[4] * 12 + hdr[5] * 4)) {
			n = -1;
			if (fd >= 0)
				close(fd);
			break;
		}
		size_t len = hdr[5] * 4;
		unsigned char *idx = malloc(len), *want = malloc(len);
		ASSERT(idx && want);
		memset(want, fill, len);
		off_t at = size - (off_t)len;
		if (!check)
			n += pwrite(fd, want, len, at) == (ssize_t)len;
		else
			n += pread(fd, idx, len, at) == (ssize_t)len && memcmp(idx, want, len) == 0;
		free(idx), free(want);
		close(fd);
	}
	closedir(d);
	return n;
}

/* A cached table's index is mapped and used as it is, unchecked
 * (unwind_cache.c).  Every entry of every kept index overwritten with
 * 0xffffffff, past the last row, the files' sizes and headers intact, so
 * that the next process takes them: the handler bounds each entry it
 * reads and then searches the whole table (find_row()), so the stacks
 * stay whole.  Unbounded, each lookup read far past the rows and faulted:
 * no stack was complete. */
TEST_IMPL(unwind_cache_index_damaged)
{
	if (skip_tools())
		return 0;
	char keep[] = "/tmp/profil-uwidx.XXXXXX";
	fill_own_cache(keep);
	long damaged = fill_indexes(keep, 0xff, 0);
	printf("indexes damaged: %ld\n", damaged);
	ASSERT(damaged >= 3); /* uwprog, libc, ld.so (and the vDSO...) */
	struct uwresult r = uwprog_runs("recurse", 128, 1, NULL);
	long kept = fill_indexes(keep, 0xff, 1); /* taken as they were, not rebuilt */
	remove_dir(keep);
	ASSERT_EQ(kept, damaged);
	assert_complete(&r);
	return 0;
}

/* Tables rebuilt and retired under the handler's feet: a thread
 * dlopen()s and dlclose()s a library without pause while main is sampled
 * (engine_drain() at every dlclose); the stacks stay whole. */
TEST_IMPL(unwind_dlopen_storm)
{
	if (skip_tools())
		return 0;
	char dir[PATH_MAX], mode[PATH_MAX + 32];
	test_dir(dir, sizeof dir);
	snprintf(mode, sizeof mode, "dlstorm %s/libspin.so", dir);
	struct uwresult r = uwprog(mode, 128);
	assert_complete(&r);
	return 0;
}

/* Samples of `profil record --max-depth DEPTH uwprog MODE` whose leaf is
 * uw_hot, and how many of those start (root end) with `root`. */
static void recorded(const char *mode, int depth, const char *root, long *hot, long *rooted)
{
	char dir[PATH_MAX], tmp[] = "/tmp/profil-unwind.XXXXXX", cmd[4 * PATH_MAX], line[8192];
	test_dir(dir, sizeof dir);
	ASSERT(mkdtemp(tmp) != NULL);
	snprintf(cmd, sizeof cmd,
	         "%s/../profil record --max-depth %d -o %s/p.pprof %s/uwprog %s >/dev/null && "
	         "%s/../profil report --format folded %s/p.pprof; rm -rf %s",
	         dir, depth, tmp, dir, mode, dir, tmp, tmp);
	FILE *p = popen(cmd, "r");
	ASSERT(p != NULL);
	*hot = *rooted = 0;
	while (fgets(line, sizeof line, p)) {
		char *sp = strrchr(line, ' ');
		if (!sp || sp - line < 7 || strncmp(sp - 7, ";uw_hot", 7) != 0)
			continue;
		long n = atol(sp + 1);
		*hot += n;
		*rooted += strncmp(line, root, strlen(root)) == 0 ? n : 0;
	}
	ASSERT_EQ(pclose(p), 0);
	printf("%s at --max-depth %d: %ld of %ld samples in uw_hot start %s\n", mode, depth,
	       *rooted, *hot, root);
}

/* A forked child writes the fork's callers with its word (ring.h
 * RING_FORKED): the first is the function that called fork(), the agent's
 * and libc's frames left out; and the words the walk wrote beyond them
 * are zero again when the rest of the reservation goes back to the ring
 * (30 bytes of the free space were not, which the reader took for a
 * record: a forking program's ring was dropped, once in ten recordings) */
TEST_IMPL(unwind_fork_words_leave_ring_clean)
{
	if (skip_tools())
		return 0;
	struct uwresult r = uwprog("forkwords", 128);
	printf("forked %ld, dirty %ld\n", r.forked, r.dirty);
	ASSERT_EQ(r.forked, 20);
	ASSERT_EQ(r.dirty, 0);
	return 0;
}

/* Through `profil record`: the depth option reaches the agent, and a cut
 * stack is shown cut ([truncated] at its root end), a whole one whole. */
TEST_IMPL(unwind_record_markers)
{
	if (skip_tools())
		return 0;
	long hot, rooted;
	recorded("truncate", 8, "[truncated];uw_recurse;", &hot, &rooted);
	ASSERT(hot >= 100 && rooted >= hot * 99 / 100);
	recorded("recurse", 128, "_start;", &hot, &rooted);
	ASSERT(hot >= 100 && rooted >= hot * 99 / 100);
	return 0;
}

/* --- the row builder against readelf --debug-dump=frames-interp --- */

static const struct uw_row *row_at(const struct uw_module *m, uintptr_t pc)
{
	const struct uw_row *best = NULL;
	size_t lo = 0, hi = m->nrows;
	if (pc < m->lo || pc >= m->hi)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pc - m->lo < m->rows[mid].pc)
			hi = mid;
		else
			best = &m->rows[mid], lo = mid + 1;
	}
	return best;
}

struct target {
	const char *suffix;
	struct uw_module *m;
	uintptr_t bias;
	char path[PATH_MAX];
};

static int find_target(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct target *t = arg;
	const char *n = info->dlpi_name;
	size_t ln = strlen(n), ls = strlen(t->suffix);
	if (t->m || ln < ls || strcmp(n + ln - ls, t->suffix) != 0)
		return 0;
	uintptr_t hdr = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	t->m = uw_module_build(info, hdr);
	t->bias = info->dlpi_addr;
	snprintf(t->path, sizeof t->path, "%s", n);
	return 1;
}

/* The DWARF number of a general register as readelf names it ("rax",
 * "r11"; rbp and rsp have kinds of their own), or -1. */
static int gpr_number(const char *name, size_t len)
{
	static const char *const names[16] = {"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "",  "",
	                                      "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
	for (int i = 0; i < 16; i++)
		if (names[i][0] && strlen(names[i]) == len && !strncmp(name, names[i], len))
			return i;
	return -1;
}

/* What readelf's rbx column says, as our row's rbx rule would. */
static uint8_t readelf_rbx(const char *rbx)
{
	if (!rbx || !strcmp(rbx, "u") || !strcmp(rbx, "s"))
		return UW_RBX_SAME;
	int off = rbx[0] == 'c' ? atoi(rbx + 1) : 0;
	if (off >= 0 || off % 8 != 0 || -off / 8 > UW_RBX_SLOT_LAST - UW_RBX_SLOT_FIRST + 1)
		return UW_RBX_UNKNOWN;
	return (uint8_t)(UW_RBX_SLOT_FIRST - 1 - off / 8);
}

/* What readelf's CFA, rbp and ra columns say, as our row would; -1 for a
 * rule the handler does not follow (our row must then stop the walk). */
static int readelf_row(const char *cfa, const char *rbp, const char *ra, struct uw_row *want)
{
	memset(want, 0, sizeof *want);
	if (ra && !strcmp(ra, "u")) {
		want->cfa = UW_CFA_END;
		return 0;
	}
	int in_rdi = ra && !strcmp(ra, "r5"); /* glibc's vfork */
	if (ra && strcmp(ra, "c-8") != 0 && !in_rdi)
		return -1; /* the return address elsewhere: not followed */
	if (in_rdi && !strncmp(cfa, "rsp+", 4)) {
		want->cfa = UW_CFA_RA_RDI;
		want->cfa_off = atoi(cfa + 4);
	} else if (!in_rdi && (!strncmp(cfa, "rsp+", 4) || !strncmp(cfa, "rbp+", 4))) {
		want->cfa = cfa[1] == 's' ? UW_CFA_RSP : UW_CFA_RBP;
		want->cfa_off = atoi(cfa + 4);
	} else if (!in_rdi && strchr(cfa, '+') && gpr_number(cfa, strcspn(cfa, "+")) >= 0) {
		want->cfa = (uint8_t)(UW_CFA_GPR + gpr_number(cfa, strcspn(cfa, "+")));
		want->cfa_off = atoi(strchr(cfa, '+') + 1);
	} else {
		return -1; /* an expression, another register: not followed */
	}
	if (!rbp || !strcmp(rbp, "u") || !strcmp(rbp, "s")) {
		want->rbp = UW_RBP_SAME;
	} else if (rbp[0] == 'c') {
		want->rbp = UW_RBP_SAVED;
		want->rbp_off = (int16_t)atoi(rbp + 1);
	} else {
		want->rbp = UW_RBP_UNKNOWN;
	}
	return 0;
}

/* Compares every row readelf prints for t against ours; returns the
 * number of rows compared, fails on the first difference. */
static long compare_rows(struct target *t)
{
	char cmd[PATH_MAX + 64], line[512], col[16][32];
	snprintf(cmd, sizeof cmd, "readelf --debug-dump=frames-interp '%s'", t->path);
	FILE *p = popen(cmd, "r");
	ASSERT(p != NULL);
	int ncol = 0, rbp_col = -1, ra_col = -1, rbx_col = -1, in_fde = 0;
	unsigned long end = 0;
	long rows = 0, exprs = 0;
	while (fgets(line, sizeof line, p)) {
		unsigned long lo, hi;
		if (strstr(line, " FDE ")) {
			char *pc = strstr(line, "pc=");
			in_fde = pc && sscanf(pc, "pc=%lx..%lx", &lo, &hi) == 2;
			end = in_fde ? hi : 0;
			continue;
		}
		if (strstr(line, " CIE ") || strstr(line, "ZERO terminator")) {
			in_fde = 0;
			continue;
		}
		/* "r10 (r10)": a register rule is one column */
		for (char *q; (q = strstr(line, " (")) != NULL;) {
			char *close = strchr(q, ')');
			if (!close)
				break;
			memmove(q, close + 1, strlen(close + 1) + 1);
		}
		/* every column: the ra column comes last, after up to 15
		 * others (glibc's clone3 has 12) */
		int n = 0;
		for (char *w = strtok(line, " \t\n"); w && n < 16; w = strtok(NULL, " \t\n"))
			snprintf(col[n++], sizeof col[0], "%s", w);
		if (n >= 2 && !strcmp(col[0], "LOC")) {
			ncol = n, rbp_col = ra_col = rbx_col = -1;
			for (int i = 0; i < n; i++) {
				rbp_col = !strcmp(col[i], "rbp") ? i : rbp_col;
				ra_col = !strcmp(col[i], "ra") ? i : ra_col;
				rbx_col = !strcmp(col[i], "rbx") ? i : rbx_col;
			}
			continue;
		}
		if (!in_fde || n != ncol || n < 2 || sscanf(col[0], "%lx", &lo) != 1 || lo >= end)
			continue;
		struct uw_row want;
		const struct uw_row *got = row_at(t->m, t->bias + lo);
		if (readelf_row(col[1], rbp_col > 0 ? col[rbp_col] : NULL,
		                ra_col > 0 ? col[ra_col] : NULL, &want) != 0) {
			/* readelf -wF shows any expression as "exp": the deref
			 * rules' offsets are checked by unwind_cfa_saved_in_frame */
			int deref = got && (got->cfa == UW_CFA_RSP_DEREF || got->cfa == UW_CFA_RBP_DEREF);
			if (deref && strcmp(col[1], "exp") != 0)
				FAIL_AT("%s at %#lx: readelf says %s, we have a deref rule", t->path, lo,
				        col[1]);
			if (!got || (got->cfa != UW_CFA_PLT && got->cfa != UW_CFA_UNKNOWN &&
			             got->cfa != UW_CFA_SIGNAL && !deref))
				FAIL_AT("%s at %#lx: readelf says %s, we have kind %d", t->path, lo,
				        col[1], got ? got->cfa : -1);
			exprs++;
			continue;
		}
		want.rbx = readelf_rbx(rbx_col > 0 ? col[rbx_col] : NULL) & 0x3f;
		if (!got || got->cfa != want.cfa ||
		    (want.cfa != UW_CFA_END &&
		     (got->cfa_off != want.cfa_off || got->rbp != want.rbp ||
		      (want.rbp == UW_RBP_SAVED && got->rbp_off != want.rbp_off) ||
		      got->rbx != want.rbx)))
			FAIL_AT("%s at %#lx: readelf says %s (rbp %s, rbx %s), we have cfa kind %d "
			        "off %d, rbp %d off %d, rbx %d", t->path, lo, col[1],
			        rbp_col > 0 ? col[rbp_col] : "-", rbx_col > 0 ? col[rbx_col] : "-",
			        got ? got->cfa : -1, got ? got->cfa_off : 0, got ? got->rbp : -1,
			        got ? got->rbp_off : 0, got ? got->rbx : -1);
		rows++;
	}
	pclose(p); /* its status: 1 on Debian's libc, which it reads whole */
	printf("%s: %ld rows agree with readelf, %ld CFA expressions (PLT, signal frame)\n",
	       t->path, rows, exprs);
	return rows;
}

TEST_IMPL(unwind_cfi_rows)
{
	if (system("readelf --version >/dev/null 2>&1") != 0) {
		printf("readelf not found: nothing to compare against\n");
		return 0;
	}
	char dir[PATH_MAX], lib[PATH_MAX + 32];
	test_dir(dir, sizeof dir);
	snprintf(lib, sizeof lib, "%s/libuwchain.so", dir);
	void *h = dlopen(lib, RTLD_NOW);
	ASSERT(h != NULL);
	/* C++: CIEs with personality routines and LSDAs; OpenSSL's assembly:
	 * CFAs on rax, r11, rsi, r9 (both when installed). */
	void *cxx = dlopen("libstdc++.so.6", RTLD_NOW);
	void *crypto = dlopen("libcrypto.so.3", RTLD_NOW);
	/* Our own test library, and Debian's libc and libm (no frame
	 * pointers). */
	static const char *const suffixes[] = {"/libuwchain.so", "/libc.so.6", "/libm.so.6",
	                                       "/libstdc++.so.6", "/libcrypto.so.3"};
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		struct target t = {suffixes[i], NULL, 0, ""};
		dl_iterate_phdr(find_target, &t);
		if (!t.m && ((i == 3 && !cxx) || (i == 4 && !crypto)))
			continue;
		ASSERT(t.m != NULL);
		ASSERT(compare_rows(&t) > 0);
		uw_module_free(t.m);
	}
	if (cxx)
		dlclose(cxx);
	if (crypto)
		dlclose(crypto);
	dlclose(h);
	return 0;
}

/*
 * An object whose .eh_frame lists its FDEs out of address order, with no
 * search table: the rows must come out as from the same FDEs in order
 * (finish() orders them then, through uw_rows_order()).  Built in memory: one
 * PT_LOAD segment holding a header, a CIE, two FDEs and the "code" they
 * describe.
 */
struct fake_object {
	_Alignas(16) uint8_t b[0x200];
	ElfW(Phdr) ph;
	struct dl_phdr_info info;
};

static size_t put(uint8_t *at, const void *bytes, size_t n)
{
	memcpy(at, bytes, n);
	return n;
}

/* An FDE at at over [pc, pc + 0x40) whose CIE starts at cie: push rbp,
 * mov rsp->rbp (CFA rsp+8, rsp+16 with rbp at CFA-16, rbp+16). */
static size_t put_fde(uint8_t *at, const uint8_t *cie, uintptr_t pc)
{
	static const uint8_t insns[] = {0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06};
	uint32_t len = 4 + 8 + 8 + sizeof insns, id = (uint32_t)(at + 4 - cie);
	uint64_t begin = pc, range = 0x40;
	size_t n = put(at, &len, 4);
	n += put(at + n, &id, 4);
	n += put(at + n, &begin, 8);
	n += put(at + n, &range, 8);
	return n + put(at + n, insns, sizeof insns);
}

/* The object with its FDEs for [0x100, 0x140) and [0x140, 0x180) in
 * that order, or reversed. */
static void fake_object(struct fake_object *o, int reversed)
{
	/* version 1, no augmentation, code align 1, data align -8, ra 16;
	 * CFA = rsp + 8, ra at CFA - 8 */
	static const uint8_t cie[] = {14, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0x78, 16,
	                              0x0c, 0x07, 0x08, 0x90, 0x01};
	memset(o, 0, sizeof *o);
	uint8_t *b = o->b;
	/* .eh_frame_hdr: version 1, eh_frame_ptr pcrel sdata4, no table */
	int32_t eh_rel = 0x20 - 4;
	b[0] = 1, b[1] = 0x1b, b[2] = 0xff, b[3] = 0xff;
	memcpy(b + 4, &eh_rel, 4);
	size_t at = 0x20 + put(b + 0x20, cie, sizeof cie);
	uintptr_t first = (uintptr_t)b + 0x100, second = first + 0x40;
	at += put_fde(b + at, b + 0x20, reversed ? second : first);
	at += put_fde(b + at, b + 0x20, reversed ? first : second);
	memset(b + at, 0, 4); /* the zero terminator */
	o->ph = (ElfW(Phdr)){.p_type = PT_LOAD, .p_flags = PF_R | PF_X,
	                     .p_vaddr = (uintptr_t)b, .p_memsz = sizeof o->b};
	o->info = (struct dl_phdr_info){.dlpi_addr = 0, .dlpi_name = "fake",
	                                .dlpi_phdr = &o->ph, .dlpi_phnum = 1};
}

TEST_IMPL(unwind_fdes_out_of_order)
{
	static struct fake_object in_order, reversed;
	fake_object(&in_order, 0);
	fake_object(&reversed, 1);
	struct uw_module *a = uw_module_build(&in_order.info, (uintptr_t)in_order.b);
	struct uw_module *b = uw_module_build(&reversed.info, (uintptr_t)reversed.b);
	ASSERT(a != NULL && b != NULL);
	/* per function: rsp+8, rsp+16 (rbp saved), rbp+16; then the end */
	ASSERT_EQ(a->nrows, 7);
	ASSERT_EQ(b->nrows, a->nrows);
	ASSERT_EQ(b->lo - (uintptr_t)reversed.b, a->lo - (uintptr_t)in_order.b);
	ASSERT_EQ(memcmp(a->rows, b->rows, a->nrows * sizeof *a->rows), 0);
	size_t nidx = ((a->hi - a->lo) >> UW_INDEX_SHIFT) + 2;
	ASSERT_EQ(memcmp(a->index, b->index, nidx * 4), 0);
	uintptr_t f = 0x140 + (uintptr_t)in_order.b - a->lo;
	const struct uw_row *r = &a->rows[3]; /* the second function's first row */
	ASSERT_EQ(r->pc, f);
	ASSERT_EQ(r->cfa, UW_CFA_RSP);
	ASSERT_EQ(r->cfa_off, 8);
	ASSERT_EQ(a->rows[5].cfa, UW_CFA_RBP);
	ASSERT_EQ(a->rows[5].rbp, UW_RBP_SAVED);
	ASSERT_EQ(a->rows[5].rbp_off, -16);
	ASSERT_EQ(a->rows[6].cfa, UW_CFA_NONE);
	uw_module_free(a);
	uw_module_free(b);
	return 0;
}

/* A published table of one module, as the handler reads it (free()). */
static struct uw_table *table_of(const struct uw_module *m)
{
	struct uw_table *table = malloc(sizeof *table + sizeof table->mods[0]);
	ASSERT(table != NULL);
	table->nmods = 1;
	table->mods[0] = m;
	return table;
}

/* This program's own module (the first object), its rows built from
 * its .eh_frame (uw_module_free()). */
static struct uw_module *program_module(void)
{
	struct target t = {"", NULL, 0, ""};
	dl_iterate_phdr(find_target, &t);
	ASSERT(t.m != NULL);
	return t.m;
}

#include "rec/asmcfa.h" /* OpenSSL's two ways, as asm: never run here */

/*
 * A CFA on rax (UW_CFA_GPR): interrupted in the frame that keeps it,
 * the walk takes rax from the interrupted registers; interrupted in its
 * callee, whose CFI says nothing of rax, the same value.  Before, every
 * such walk ended there, failed: openssl speed's AES-GCM had 37% of its
 * samples rooted at [unknown].  Without the registers it still does.
 */
TEST_IMPL(unwind_cfa_on_another_register)
{
	struct uw_module *m = program_module();
	const struct uw_row *r = row_at(m, (uintptr_t)asm_rax_frame_ret);
	ASSERT(r != NULL);
	ASSERT_EQ(r->cfa, UW_CFA_GPR + 0); /* rax */
	ASSERT_EQ(r->cfa_off, 8);
	struct uw_table *table = table_of(m);
	uintptr_t stack[64] = {0}, caller = 0x1234560;
	greg_t regs[NGREG] = {[REG_RAX] = (greg_t)&stack[10]}; /* the frame's base */
	stack[10] = caller;                                      /* at rax = CFA - 8 */
	stack[4] = (uintptr_t)asm_rax_frame_ret;                 /* pushed by the call */
	uint64_t pcs[8];
	volatile uint32_t n = 0;
	/* interrupted in the frame itself */
	uintptr_t pc = (uintptr_t)asm_rax_frame_ret;
	enum uw_end end = unwind_walk(table, pc, (uintptr_t)&stack[2], 0, regs, pcs, 8, &n);
	printf("in the frame: %u frames, end %d\n", (unsigned)n, (int)end);
	ASSERT_EQ(n, 2u);
	ASSERT_EQ(pcs[1], (uint64_t)caller);
	ASSERT_EQ(end, UW_END_FAILED); /* the caller is in no module */
	end = unwind_walk(table, pc, (uintptr_t)&stack[2], 0, NULL, pcs, 8, &n);
	ASSERT_EQ(n, 1u);
	/* interrupted in its callee */
	pc = (uintptr_t)asm_rax_leaf;
	end = unwind_walk(table, pc, (uintptr_t)&stack[4], 0, regs, pcs, 8, &n);
	printf("in its callee: %u frames, end %d\n", (unsigned)n, (int)end);
	ASSERT_EQ(n, 3u);
	ASSERT_EQ(pcs[0], (uint64_t)pc);
	ASSERT_EQ(pcs[1], (uint64_t)(uintptr_t)asm_rax_frame_ret);
	ASSERT_EQ(pcs[2], (uint64_t)caller);
	end = unwind_walk(table, pc, (uintptr_t)&stack[4], 0, NULL, pcs, 8, &n);
	ASSERT_EQ(n, 2u);
	ASSERT_EQ(end, UW_END_FAILED);
	/* above the interrupted frame, a register callees save and restore
	 * is not taken as interrupted: r12-r15 end the walk; rbx is what
	 * the rows followed up to the frame (unwind_cfa_on_rbx below) */
	struct uw_row on_r12 = {0, 24, 0, UW_CFA_GPR + 12, UW_RBP_SAME, UW_RBX_UNKNOWN};
	struct uw_row on_r11 = {0, 8, 0, UW_CFA_GPR + 11, UW_RBP_SAME, UW_RBX_UNKNOWN};
	greg_t g[NGREG] = {[REG_R12] = 0x7000, [REG_R11] = 0x9000};
	struct frame f = {0x1000, 0x100, 0, g, 1, 1, 0, 0};
	struct bounds b = {0x100, 0x10000};
	uintptr_t cfa = 0;
	ASSERT_EQ(cfa_of(&f, &on_r12, 0x1000, &b, &cfa), 0);
	ASSERT_EQ(cfa, 0x7000u + 24);
	f.exact = 0;
	ASSERT_EQ(cfa_of(&f, &on_r12, 0x1000, &b, &cfa), -1);
	ASSERT_EQ(cfa_of(&f, &on_r11, 0x1000, &b, &cfa), 0);
	ASSERT_EQ(cfa, 0x9000u + 8);
	free(table);
	uw_module_free(m);
	return 0;
}

/*
 * A CFA on rbx above the interrupted frame (glibc's lazy-binding
 * trampoline, which keeps its frame in rbx across its call of _dl_fixup,
 * which saves rbx and reuses it): the walk takes rbx from where the
 * callee's row says it saved it.  Before, rbx's rule was not kept and
 * the walk ended at the trampoline: 1% of a cmake configure's samples
 * rooted at [unknown], each process's first calls through its PLT.
 */
TEST_IMPL(unwind_cfa_on_rbx)
{
	struct uw_module *m = program_module();
	const struct uw_row *r = row_at(m, (uintptr_t)asm_rbx_callee_body);
	ASSERT(r != NULL);
	ASSERT_EQ(r->cfa, UW_CFA_RSP);
	ASSERT_EQ(r->rbx, UW_RBX_SLOT_FIRST + 1); /* at CFA - 16 */
	r = row_at(m, (uintptr_t)asm_rbx_frame_ret);
	ASSERT(r != NULL);
	ASSERT_EQ(r->cfa, UW_CFA_GPR + 3);
	ASSERT_EQ(r->cfa_off, 16);
	ASSERT_EQ(r->rbx, UW_RBX_SLOT_FIRST + 1);
	r = row_at(m, (uintptr_t)asm_rbx_frame);
	ASSERT(r != NULL && r->rbx == UW_RBX_SAME);
	struct uw_table *table = table_of(m);
	uintptr_t stack[64] = {0}, caller = 0x1234560;
	stack[11] = caller;                    /* the trampoline's CFA - 8 */
	stack[10] = 0x5150;                    /* its caller's rbx, pushed */
	stack[3] = (uintptr_t)asm_rbx_frame_ret;
	stack[2] = (uintptr_t)&stack[10];      /* the trampoline's rbx, saved by the callee */
	greg_t regs[NGREG] = {[REG_RBX] = 77}; /* the callee's count */
	uint64_t pcs[8];
	volatile uint32_t n = 0;
	uintptr_t pc = (uintptr_t)asm_rbx_callee_body;
	enum uw_end end = unwind_walk(table, pc, (uintptr_t)&stack[2], 0, regs, pcs, 8, &n);
	printf("rbx saved by the callee: %u frames, end %d\n", (unsigned)n, (int)end);
	ASSERT_EQ(n, 3u);
	ASSERT_EQ(pcs[1], (uint64_t)(uintptr_t)asm_rbx_frame_ret);
	ASSERT_EQ(pcs[2], (uint64_t)caller);
	ASSERT_EQ(end, UW_END_FAILED); /* the caller is in no module */
	/* the callee's slot out of the stack's bounds: rbx unknown, the walk
	 * stops at the trampoline instead of taking the interrupted value */
	stack[2] = 0;
	regs[REG_RBX] = (greg_t)&stack[10];
	struct frame f = {pc, (uintptr_t)&stack[2], 0, regs, 1, 1, (uintptr_t)regs[REG_RBX], 1};
	struct bounds b = {(uintptr_t)&stack[2], (uintptr_t)&stack[2]};
	step_rbx(&f, row_at(m, pc), (uintptr_t)&stack[4], &b);
	ASSERT_EQ(f.bx_ok, 0);
	/* a frame-pointer step says nothing of rbx either */
	f.bx_ok = 1;
	step_rbx(&f, NULL, (uintptr_t)&stack[4], &b);
	ASSERT_EQ(f.bx_ok, 0);
	/* interrupted in the trampoline itself: rbx as interrupted */
	end = unwind_walk(table, (uintptr_t)asm_rbx_frame_ret, (uintptr_t)&stack[4], 0, regs, pcs,
	                  8, &n);
	ASSERT_EQ(n, 2u);
	ASSERT_EQ(pcs[1], (uint64_t)caller);
	free(table);
	uw_module_free(m);
	return 0;
}

/*
 * A CFA computed from a word the frame saved (UW_CFA_RSP_DEREF): the walk
 * reads the caller's rsp at rsp + 24 and finds the return address below
 * it.  Before, such rows were "an expression we do not follow": openssl
 * speed's SHA-512 (AVX2) had 80% of its samples rooted at [unknown].
 */
TEST_IMPL(unwind_cfa_saved_in_frame)
{
	struct uw_module *m = program_module();
	const struct uw_row *r = row_at(m, (uintptr_t)asm_saved_frame_body);
	ASSERT(r != NULL);
	ASSERT_EQ(r->cfa, UW_CFA_RSP_DEREF);
	ASSERT_EQ(r->cfa_off, 24);
	struct uw_table *table = table_of(m);
	uintptr_t stack[64] = {0}, caller = 0x1234560;
	stack[20] = caller;                    /* the return address, at CFA - 8 */
	stack[2 + 3] = (uintptr_t)&stack[20];  /* rsp = &stack[2]; its + 24: rsp at entry */
	uint64_t pcs[8];
	volatile uint32_t n = 0;
	uintptr_t pc = (uintptr_t)asm_saved_frame_body;
	enum uw_end end = unwind_walk(table, pc, (uintptr_t)&stack[2], 0, NULL, pcs, 8, &n);
	printf("saved rsp: %u frames, end %d\n", (unsigned)n, (int)end);
	ASSERT_EQ(n, 2u);
	ASSERT_EQ(pcs[1], (uint64_t)caller);
	ASSERT_EQ(end, UW_END_FAILED); /* the caller is in no module */
	/* a saved rsp at or below this frame's: the CFA must grow, the walk stops */
	stack[2 + 3] = (uintptr_t)&stack[1];
	end = unwind_walk(table, pc, (uintptr_t)&stack[2], 0, NULL, pcs, 8, &n);
	ASSERT_EQ(n, 1u);
	/* the word below an interrupted frame's rsp is its own (the red zone) */
	r = row_at(m, (uintptr_t)asm_saved_frame_red);
	ASSERT(r != NULL && r->cfa == UW_CFA_RSP_DEREF);
	ASSERT_EQ(r->cfa_off, -8);
	stack[5] = (uintptr_t)&stack[20];
	pc = (uintptr_t)asm_saved_frame_red;
	end = unwind_walk(table, pc, (uintptr_t)&stack[6], 0, NULL, pcs, 8, &n);
	printf("saved rsp in the red zone: %u frames, end %d\n", (unsigned)n, (int)end);
	ASSERT_EQ(n, 2u);
	ASSERT_EQ(pcs[1], (uint64_t)caller);
	free(table);
	uw_module_free(m);
	return 0;
}

/* The order uw_rows_order() promises, the slow way: by pc, end markers
 * first at one pc, then in the order emitted (cfa_off holds that order
 * here). */
static int reference_order(const void *a, const void *b)
{
	const struct uw_row *x = a, *y = b;
	int rx = x->cfa != UW_CFA_NONE, ry = y->cfa != UW_CFA_NONE;
	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	if (rx != ry)
		return rx - ry;
	return x->cfa_off < y->cfa_off ? -1 : x->cfa_off > y->cfa_off;
}

/*
 * Rows emitted in order up to some point and in any order after it (what
 * unwind_crt.c's rows of _init and _fini make of every object's), with
 * repeated pcs and end markers among them: uw_rows_order() sorts the
 * part after that point alone and merges; the result must be the full
 * sort's, ties included, whatever the split.  1,000 random cases.
 */
TEST_IMPL(unwind_rows_order_merges_the_tail)
{
	uint64_t seed = 0x9e3779b97f4a7c15u;
	struct uw_row want[300];
	for (int round = 0; round < 1000; round++) {
		struct trows t = {0};
		t.origin = 0x400000;
		size_t n = 1 + (size_t)(seed % 300), prefix = (size_t)((seed >> 20) % (n + 1));
		uint32_t pc = 0;
		for (size_t i = 0; i < n; i++) {
			seed = seed * 6364136223846793005u + 1442695040888963407u;
			uint32_t r = (uint32_t)(seed >> 33);
			/* in order: pc steps by 0-3; after: anywhere in [0, 3n) */
			uint32_t at = i < prefix ? (pc += r % 4) : r % (3 * (uint32_t)n);
			int end = (r >> 8) % 5 == 0;
			/* an end marker never follows a row at its pc in the
			 * ordered part (that would be out of order already) */
			if (i < prefix && end && i && t.v[i - 1].pc == at && t.v[i - 1].cfa != UW_CFA_NONE)
				end = 0;
			struct uw_row row = {.cfa = end ? UW_CFA_NONE : UW_CFA_RSP, .cfa_off = (int32_t)i};
			uw_emit(&t, t.origin + at, row);
		}
		ASSERT(!t.oom && t.n == n);
		memcpy(want, t.v, n * sizeof *want);
		qsort(want, n, sizeof *want, reference_order);
		ASSERT_EQ(uw_rows_order(&t), 0);
		for (size_t i = 0; i < n; i++)
			if (t.v[i].pc != want[i].pc || t.v[i].cfa != want[i].cfa ||
			    t.v[i].cfa_off != want[i].cfa_off)
				FAIL_AT("round %d, row %zu of %zu (in order up to %zu): pc %u "
				        "emitted %d, want pc %u emitted %d",
				        round, i, n, prefix, t.v[i].pc, t.v[i].cfa_off, want[i].pc,
				        want[i].cfa_off);
		mem_free(t.v);
	}
	return 0;
}

/*
 * glibc's vfork pops its return address into rdi before the system call
 * and pushes it back after (parent and child share the stack), and says
 * so in its CFI (DW_CFA_register ra, rdi).  A sample there, the vfork
 * system call's own time in the parent or the child's first, ended
 * "[unknown];__vfork": its row was a rule not followed.  Walked from an
 * interrupted frame at such a row (Debian's libc has two), the caller
 * is at rdi: here an address in no module, where the walk then ends
 * (no frame there: failed), after two frames, not one.
 */
TEST_IMPL(unwind_vfork_return_in_rdi)
{
	struct target t = {"/libc.so.6", NULL, 0, ""};
	dl_iterate_phdr(find_target, &t);
	ASSERT(t.m != NULL);
	const struct uw_row *in_rdi = NULL;
	for (size_t i = 0; i < t.m->nrows && !in_rdi; i++)
		if (t.m->rows[i].cfa == UW_CFA_RA_RDI)
			in_rdi = &t.m->rows[i];
	ASSERT(in_rdi != NULL); /* glibc's x86-64 vfork.S has had this CFI for years */
	struct uw_table *table = table_of(t.m);
	uintptr_t stack[64] = {0};
	uintptr_t pc = t.m->lo + in_rdi->pc, caller = 0x1234560;
	uint64_t pcs[8];
	volatile uint32_t n = 0;
	greg_t regs[NGREG] = {[REG_RDI] = (greg_t)caller};
	enum uw_end end = unwind_walk(table, pc, (uintptr_t)&stack[8], 0, regs, pcs, 8, &n);
	printf("vfork row at libc+%#x (CFA rsp+%d): %u frames, end %d\n", in_rdi->pc,
	       (int)in_rdi->cfa_off, (unsigned)n, (int)end);
	ASSERT_EQ(n, 2u);
	ASSERT_EQ(pcs[0], (uint64_t)pc);
	ASSERT_EQ(pcs[1], (uint64_t)caller);
	ASSERT_EQ(end, UW_END_FAILED);
	free(table);
	uw_module_free(t.m);
	return 0;
}
