/*
 * summary.c - the lines `profil record` ends with on stderr: what was
 * recorded, the warnings a reader of the profile needs (CPU time no
 * sample covers, rings whose writes faulted), and with -v the engine,
 * the ratio of samples to the kernel's CPU time and the record process's
 * own cost.
 */
#include "record_int.h"
#include "images.h"
#include "../model/profile.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

double record_cpu_of(const struct rusage *ru)
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

double record_own_cpu(void)
{
	struct rusage self;
	getrusage(RUSAGE_SELF, &self);
	return record_cpu_of(&self);
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
void record_summary(const struct record_opts *o, const struct images *set,
                    const struct profile *p, const struct rusage *ru, double orphans_s)
{
	double cpu = record_cpu_of(ru) + orphans_s; /* ours to reap as pid 1 */
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
	record_unsampled_hint(p, o->hz, record_ran_on(set, "perf-events"));
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
void record_own_line(const struct rusage *ru, double sampled, double own_running)
{
	double cpu = record_cpu_of(ru), own = record_own_cpu();
	if (sampled > cpu) /* orphans: see orphans_line() */
		cpu = sampled;
	double pct = cpu > 0 ? 100 / cpu : 0.0;
	fprintf(stderr, "profil record: own CPU %.3f s (%.2f%% of the command's): %.3f s while it "
	        "ran (%.2f%%), %.3f s symbolizing and writing after\n", own, own * pct, own_running,
	        own_running * pct, own - own_running);
}

