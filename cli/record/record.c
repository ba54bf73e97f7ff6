/*
 * record.c - `profil record [-F HZ] [-o FILE] [--max-depth N]
 * [--no-children] [-v] [--] CMD [ARGS...]`: run CMD with the agent preloaded, read its samples
 * while it runs, then symbolize and write a pprof file.
 *
 * The samples live in ring files on tmpfs (agent/, src/base/ring.h),
 * which we read every READ_MS to IDLE_MS: whatever CMD does, killed by
 * SIGKILL included, what was sampled until then is in them, and the last
 * read after CMD ends takes it.  Symbolization happens here, after the run, never in
 * the profiled process.  The lines printed at the end: summary.c.
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
	set->closing = 1; /* every ring read, however lately it was */
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

/* The profile, once written, is left to the process's exit rather than
 * freed: freeing a build's (48,000 locations, each with its lines, and
 * 10,000 samples, each with its names) was 18 of the record process's
 * 420 million instructions, to no end, as the exit drops the whole heap
 * at once (symbolize.h's leave_to_exit does the same for the symbol
 * tables).  Held here, so that it stays reachable for leak checkers. */
static struct profile *left_to_exit;

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
	double own_running = record_own_cpu();
	status = spawn_exit_status(wstatus);
	notes_print(&set); /* what agents could not do, before what it cost */

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
		record_build(p, &set);
		record_credit_exits(p, &set, p->period_ns, (uint32_t)pid,
		                    (uint64_t)(record_cpu_of(&ru) * 1e9 + 0.5), root_children_ns,
		                    !o.no_children);
		rc = finish(&o, p);
		if (rc == 0)
			record_summary(&o, &set, p, &ru, (double)orphans_ns / 1e9);
		sampled = (double)prof_total(p) / o.hz;
		record_report_traced(set.dir, pid);
		prof_free(left_to_exit); /* a caller's earlier recording, if any */
		left_to_exit = p;
	}
	images_free(&set);
	char root[4096];
	if (record_cache_root(root, sizeof root))
		record_cache_trim(root);
	if (rc == 0 && o.verbose)
		record_own_line(&ru, sampled, own_running);
	if (rc != 0 && status == 0)
		status = 1;
	return status;
}
