/*
 * record.c - `profil record [-F HZ] [-o FILE] [--max-depth N]
 * [--no-children] [-v] [--] CMD [ARGS...]`: run CMD with the agent preloaded, read its samples
 * while it runs, then symbolize and write a pprof file.
 *
 * The samples live in ring files on tmpfs (agent/, src/base/ring.h),
 * which we read every READ_MS to IDLE_MS: whatever CMD does, killed by
 * SIGKILL included, what was sampled until then is in them, and the last
 * read after CMD ends takes it.  Symbolization happens here, after the run, never in
 * the profiled process.
 */
#include "record.h"
#include "record_int.h"
#include "../format/out.h"
#include "../format/pprof.h"
#include "../model/profile.h"
#include "../symbol/symbolize.h"
#include "../../src/base/ring.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The rings are read every READ_MS to IDLE_MS: at the rate they filled,
 * each is read before it is an eighth full (8 MB rings: a hundred
 * threads at 1000 Hz with deep stacks fill a few MB in IDLE_MS). */
#define READ_MS 20
#define IDLE_MS 100
#define DEFAULT_HZ 1000u
#define MAX_HZ 100000u

static void usage(FILE *f)
{
	fputs("usage: profil record [-F HZ] [-o FILE] [--max-depth N] [--no-children] [-v] [--]"
	      " CMD [ARGS...]\n", f);
}

static int parse(int argc, char **argv, struct record_opts *o)
{
	static const struct option longs[] = {
		{"freq", required_argument, 0, 'F'}, {"output", required_argument, 0, 'o'},
		{"no-children", no_argument, 0, 'n'}, {"verbose", no_argument, 0, 'v'},
		{"help", no_argument, 0, 'h'}, {"max-depth", required_argument, 0, 'D'},
		{0, 0, 0, 0}};
	memset(o, 0, sizeof *o);
	o->hz = DEFAULT_HZ;
	o->output = "profil.pprof";
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "+F:o:vh", longs, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'F':
			errno = 0;
			unsigned long hz = strtoul(optarg, &end, 10);
			if (errno || *end || hz < 1 || hz > MAX_HZ || *optarg == '-') {
				fprintf(stderr, "profil record: -F %s: want a rate from 1 to %u\n",
				        optarg, MAX_HZ);
				return -1;
			}
			o->hz = (unsigned)hz;
			break;
		case 'D':
			/* Frames per sample, leaf included (1: no stacks); the
			 * agent reads it from the environment CMD inherits. */
			errno = 0;
			unsigned long depth = strtoul(optarg, &end, 10);
			if (errno || *end || depth < 1 || depth > RING_MAX_DEPTH || *optarg == '-') {
				fprintf(stderr, "profil record: --max-depth %s: want 1 to %u\n",
				        optarg, RING_MAX_DEPTH);
				return -1;
			}
			setenv("PROFIL_STACK_DEPTH", optarg, 1);
			break;
		case 'o': o->output = optarg; break;
		case 'n': o->no_children = 1; break;
		case 'v': o->verbose = 1; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "profil record: no command to run\n");
		usage(stderr);
		return -1;
	}
	o->argv = argv + optind;
	return 0;
}

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A nap of ms that ends at once when CMD, our only child, exits, or
 * when an agent asks for a ring file (SIGIO, ringserve.c): both are
 * blocked while the loop runs, so one sent before the nap waits for it.  (A pidfd would do the same from Linux 5.3, but valgrind, which
 * runs this command in make valgrind-unit, does not know pidfd_open.) */
static void nap(const sigset_t *chld, long ms)
{
	struct timespec ts = {ms / 1000, ms % 1000 * 1000000L};
	sigtimedwait(chld, NULL, &ts);
}

/* The next nap, from the one before (ms) and what the last poll read. */
static long next_nap(const struct images *set, long ms)
{
	if (!set->max_read)
		return IDLE_MS;
	double want = (double)ms * (double)set->min_ring / 8 / (double)set->max_read;
	return want < READ_MS ? READ_MS : want > IDLE_MS ? IDLE_MS : (long)want;
}

/* Reads the rings until CMD ends, then once more. */
static int run(const struct record_opts *o, struct images *set, pid_t pid, struct rusage *ru,
               uint64_t *children_ns, uint64_t *orphans_ns)
{
	int wstatus = 0;
	long ms = READ_MS;
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigaddset(&chld, SIGIO);
	pthread_sigmask(SIG_BLOCK, &chld, &old);
	for (;;) {
		int done = spawn_reap(pid, &wstatus, ru, children_ns);
		*orphans_ns += spawn_reap_orphans(pid);
		images_poll(set);
		if (done)
			break;
		ms = next_nap(set, ms);
		nap(&chld, ms);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	*orphans_ns += spawn_reap_orphans(pid);
	images_poll(set);
	(void)o;
	return wstatus;
}

static char *join(char **argv)
{
	size_t n = 1;
	for (char **a = argv; *a; a++)
		n += strlen(*a) + 1;
	char *s = prof_xcalloc(n, 1);
	for (char **a = argv; *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

static double cpu_of(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + ru->ru_utime.tv_usec / 1e6 +
	       (double)ru->ru_stime.tv_sec + ru->ru_stime.tv_usec / 1e6;
}

/* "SIGTRAP", "SIGRTMIN+30": which signal the samples came on (the perf
 * engine's sigtrap delivery uses SIGTRAP, which debuggers stop on). */
static void signal_name(int sig, char *out, size_t cap)
{
	const char *abbrev = sig > 0 && sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;
	if (abbrev)
		snprintf(out, cap, "SIG%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(out, cap, "SIGRTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(out, cap, "none");
}

/*
 * CPU time the kernel counted for the command's processes (the waited-for
 * ones) that no sample covers.  Some may be missing: each process's exit,
 * the kernel's teardown after the agent's last look (0.05-0.13 ms a
 * process here), when its parent did not reap it through the calls the
 * agent interposes (reaped.c credits the others: shell loops of /bin/true
 * were 0.77-0.82 covered before), which EXIT_ALLOWANCE_S a process allows
 * for.  Much more means programs the
 * agent could not enter, which ran unseen: statically linked, set-uid or
 * with file capabilities (the loader drops LD_PRELOAD for them), 32-bit
 * or another machine's, or linked against musl (agent/loadercheck.c
 * leaves the agent out for them), or
 * started by a raw execve with an environment without it, or exec'd in a
 * root where neither the agent's path nor /proc reaches its file (a bare
 * chroot: agent/selfreach.c leaves it out of LD_PRELOAD); or processes
 * whose agent could not write its ring file (another user's: it says so
 * itself, and cannot leave us a note in our directory); or a `profil
 * record` run by the command, whose own command's processes it records
 * (their agent is its: spawn.c); or exits no parent told (a Go program's
 * children, reaped by raw wait4 system calls: a dynamically linked Go
 * test binary that runs itself 20 times left 10% so).  (Samples lost
 * to a full ring count as covered: the summary gives their number.)  Not
 * said with
 * --no-children (children are unsampled by request), nor when processes
 * were left out for a reason another line gives (a tracer, a zygote, a
 * program that took our signals).
 */
#define UNCOVERED_MIN_S 0.05
#define UNCOVERED_MIN_SHARE 0.10
#define EXIT_ALLOWANCE_S 0.0005
static void uncovered_warning(const struct record_opts *o, const struct images *set,
                              size_t procs, double cpu, double sampled)
{
	double missing = cpu - sampled;
	if (o->no_children || missing < UNCOVERED_MIN_S || missing < UNCOVERED_MIN_SHARE * cpu ||
	    missing < (double)procs * EXIT_ALLOWANCE_S)
		return;
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].signal < 0)
			return;
	if (record_count_left(set->dir))
		return;
	fprintf(stderr, "profil record: warning: the samples cover %.2f of the %.2f CPU s the "
	        "command's processes used; the rest ran unsampled, in programs the agent cannot "
	        "enter (statically linked, set-uid or with file capabilities, 32-bit or linked against "
	        "musl, or started without "
	        "LD_PRELOAD), in a root without the agent's file or /proc (a bare chroot), "
	        "where it said it could not record, in a sandbox that shares "
	        "neither the recording's directory nor its network namespace, or in a profil "
	        "record run inside this one; or it is the exits of processes reaped where no "
	        "agent sees it (a raw wait4 system call, as Go's runtime reaps, or waitid())\n",
	        sampled, cpu);
}

/* Processes whose sampling stopped at a write into their ring that
 * faulted (ring.h RING_FLAG_FAULTED): the rings' file system was full. */
static void faulted_warning(const struct images *set)
{
	size_t n = 0;
	uint32_t first = 0;
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].faulted && !n++)
			first = set->v[i].pid;
	if (!n)
		return;
	const char *slash = strrchr(set->dir, '/');
	int len = slash ? (int)(slash - set->dir) : (int)strlen(set->dir);
	fprintf(stderr, "profil record: warning: %zu process%s (pid %u%s) stopped being sampled "
	        "when a write into its ring file faulted: the file system of %.*s was full\n", n,
	        n == 1 ? "" : "es", first, n == 1 ? "" : " and others", len, set->dir);
}

static double own_cpu(void)
{
	struct rusage self;
	getrusage(RUSAGE_SELF, &self);
	return cpu_of(&self);
}

/*
 * The kernel's total is what the command's processes reaped of their
 * children, down from the command: a process whose parent ended first
 * (`timeout` killing a shell that ran a pipeline; Python's forkserver) is
 * reaped by init or a subreaper outside the recording, and a child of a
 * parent that ignores SIGCHLD by the kernel, which adds its CPU to no
 * total; its agent sampled it all the same (making us a subreaper would
 * count orphans, but change the getppid() such programs see).
 * Say so rather than leave a ratio of 172 unexplained.
 */
#define ORPHANS_MIN_S 0.05
#define ORPHANS_MIN_RATIO 1.05
static void orphans_line(double cpu, double sampled)
{
	if (sampled - cpu < ORPHANS_MIN_S || sampled < ORPHANS_MIN_RATIO * cpu)
		return;
	fprintf(stderr, "profil record: the samples hold %.2f CPU s more than that total: processes "
	        "whose CPU time no parent in the command collected (orphans reaped by init, children "
	        "of a parent that ignores SIGCHLD) are sampled but not in the kernel's total\n",
	        sampled - cpu);
}

/* own_running: our CPU when CMD had ended (starting it, reading the rings
 * while it ran); the rest is after (symbolizing, writing). */
static void summary(const struct record_opts *o, const struct images *set,
                    const struct profile *p, const struct rusage *ru, double orphans_s)
{
	double cpu = cpu_of(ru) + orphans_s; /* ours to reap as pid 1 */
	size_t procs, threads;
	prof_count_tasks(p, &procs, &threads);
	int64_t total = prof_total(p);
	fprintf(stderr, "profil record: %lld samples, %.2f CPU s, %zu process%s, %zu thread%s, "
	        "%llu lost -> %s\n", (long long)total, (double)total / o->hz, procs,
	        procs == 1 ? "" : "es", threads, threads == 1 ? "" : "s",
	        (unsigned long long)p->lost, o->output);
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].signal < 0)
			fprintf(stderr, "profil record: warning: process %u (%s) took profil's signals "
			        "(sampling: %d) by a raw system call, as Go's runtime does, leaving none "
			        "free: it was not sampled after that\n",
			        set->v[i].pid, set->v[i].comm, -set->v[i].signal);
	record_engine_hints(set, ru, cpu, o->verbose);
	faulted_warning(set);
	uncovered_warning(o, set, procs, cpu, (double)(total + (int64_t)p->lost) / o->hz);
	record_unnamed_code_hint(p);
	record_unsampled_hint(p);
	if (!o->verbose || !set->n)
		return;
	char name[32];
	const struct image *first = images_described(set);
	signal_name(first->signal, name, sizeof name);
	fprintf(stderr, "profil record: engine %s, signal %d (%s), %u samples per CPU second; "
	        "CPU time measured by the kernel (waited-for processes): %.2f s, "
	        "samples / (CPU s x rate) = %.3f\n", first->engine, first->signal, name,
	        o->hz, cpu, cpu > 0 ? (double)total / (cpu * o->hz) : 0.0);
	orphans_line(cpu, (double)total / o->hz);
}

/* Our own cost, for bench/ (-v): the goal is under 1% of CMD's CPU (the
 * kernel's total, or the samples' where they hold more: orphans_line()).
 * Split at CMD's exit: what competed with CMD for the CPUs (reading the
 * rings) and what came after (symbolizing, writing, removing the rings,
 * trimming the cache): printed last, so that it counts all of that. */
static void own_line(const struct rusage *ru, double sampled, double own_running)
{
	double cpu = cpu_of(ru), own = own_cpu();
	if (sampled > cpu) /* orphans: see orphans_line() */
		cpu = sampled;
	double pct = cpu > 0 ? 100 / cpu : 0.0;
	fprintf(stderr, "profil record: own CPU %.3f s (%.2f%% of the command's): %.3f s while it "
	        "ran (%.2f%%), %.3f s symbolizing and writing after\n", own, own * pct, own_running,
	        own_running * pct, own - own_running);
}

/* Symbolizes p and writes it; 0 or -1 (message printed). */
static int finish(const struct record_opts *o, struct profile *p)
{
	char err[512], cache[4096];
	struct sym_file *files;
	size_t nfiles = modkeep_files(&files); /* removed, replaced, another root's */
	struct sym_options opt = {.debug_cache = record_cache_dir("debuginfo", cache, sizeof cache),
	                          .leave_to_exit = 1, .files = files, .nfiles = nfiles};
	if (symbolize_profile(p, &opt, err, sizeof err) != 0)
		fprintf(stderr, "profil record: symbols: %s (addresses kept)\n", err);
	free(files);
	modkeep_free();
	return pprof_write(p, o->output);
}

static int root_recorded(const struct images *set, pid_t pid)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].pid == (uint32_t)pid && image_valid(&set->v[i]))
			return 1;
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	int status;
	char agent[PATH_MAX];
	char err[PATH_MAX + 64];
	if (parse(argc, argv, &o) != 0)
		return 2;
	if (out_check(o.output, err, sizeof err) != 0) { /* before the run, not after */
		fprintf(stderr, "profil record: %s\n", err);
		return 2;
	}
	spawn_note_ignored();
	if (spawn_check(o.argv[0], &status) != 0)
		return status;
	if (spawn_find_agent(agent, sizeof agent) != 0) {
		fprintf(stderr, "profil record: cannot find libprofil-agent.so beside the profil "
		        "executable or in ../lib/profil (set PROFIL_AGENT to its path)\n");
		return 2;
	}
	char unwind[4096];
	o.unwind_cache = record_cache_dir("unwind", unwind, sizeof unwind);
	struct images set;
	memset(&set, 0, sizeof set);
	set.dir = record_workdir_make(err, sizeof err);
	if (!set.dir) {
		fprintf(stderr, "profil record: cannot make a directory for samples in %s\n", err);
		return 2;
	}
	if (spawn_agent_carried(agent, sizeof agent, set.dir) != 0) {
		images_free(&set);
		return 2;
	}
	set.pids_fd = nspid_open(set.dir) + 1;
	set.rings_fd = ringserve_open(&set) + 1;
	int64_t t0 = now_ns(CLOCK_REALTIME), m0 = now_ns(CLOCK_MONOTONIC);
	pid_t pid = spawn_start(&o, agent, set.dir, &status);
	if (pid < 0) {
		images_free(&set);
		return status;
	}
	spawn_forward_signals(pid);
	struct rusage ru;
	memset(&ru, 0, sizeof ru);
	uint64_t root_children_ns = 0, orphans_ns = 0;
	int wstatus = run(&o, &set, pid, &ru, &root_children_ns, &orphans_ns);
	double own_running = own_cpu();
	status = spawn_exit_status(wstatus);

	int rc = 0;
	double sampled = 0; /* CPU s */
	if (!root_recorded(&set, pid)) {
		if (record_report_traced(set.dir, pid))
			fprintf(stderr, "profil record: %s was not profiled: another program traced "
			        "it; no profile written\n", o.argv[0]);
		else if (record_left_out(set.dir, (uint32_t)pid)) /* a zygote: said above */
			fprintf(stderr, "profil record: %s was not profiled, for the reason above; no "
			        "profile written\n", o.argv[0]);
		else
			fprintf(stderr, "profil record: %s was not profiled: the agent did not start "
			        "in it (LD_PRELOAD removed, or the program exited first); no profile "
			        "written\n", o.argv[0]);
		rc = -1;
	} else {
		struct profile *p = prof_new();
		p->period_ns = 1000000000LL / o.hz;
		p->time_ns = t0;
		p->duration_ns = now_ns(CLOCK_MONOTONIC) - m0;
		char *command = join(o.argv);
		prof_set_string(&p->command, command);
		prof_set_string(&p->engine, set.v[0].engine);
		free(command);
		record_build(p, &set, p->period_ns);
		record_credit_exits(p, &set, p->period_ns, (uint32_t)pid,
		                    (uint64_t)(cpu_of(&ru) * 1e9 + 0.5), root_children_ns,
		                    !o.no_children);
		rc = finish(&o, p);
		if (rc == 0)
			summary(&o, &set, p, &ru, (double)orphans_ns / 1e9);
		sampled = (double)prof_total(p) / o.hz;
		record_report_traced(set.dir, pid);
		prof_free(p);
	}
	images_free(&set);
	char root[4096];
	if (record_cache_root(root, sizeof root))
		record_cache_trim(root);
	if (rc == 0 && o.verbose)
		own_line(&ru, sampled, own_running);
	if (rc != 0 && status == 0)
		status = 1;
	return status;
}
