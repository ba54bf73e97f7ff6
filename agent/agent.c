/*
 * agent.c - start profiling when `profil record` preloads us (agent.h).
 *
 * At load: make this image's ring file, log its modules, and publish a
 * ring table to the engine, which then samples every thread into it.
 * In a forked child (the engine's fork hook): a scratch ring in its own
 * memory (defer.c), a ring file of its own when it needs one, or stop
 * when children are not wanted.  An exec'd program loads the agent again
 * through the inherited LD_PRELOAD and gets a new file.
 *
 * Failures never reach the program: the agent prints one line naming the
 * problem and the program runs unprofiled (`profil record` then reports
 * the process as missing).
 */
#include "agent.h"
#include "../src/engine/engine.h"
#include "../src/engine/perf_engine.h"
#include "../src/base/ring.h"
#include "../src/unwind/unwind.h"
#include "../src/process/process.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>

extern char **environ;

/* Of /proc/self/cmdline, read at a start (base_keep_open()); the ring
 * file's header takes 2 KiB of it (ring.h). */
#define ARGS_MAX 8192

/* PROFIL_RECORD_DIR, set once at load; a /proc name of a descriptor of
 * the directory when the process cannot see that path (ringreach.c,
 * which renames it in place when that descriptor goes).  Kept
 * (base_keep_open()) in agent_dir_size bytes, at least AGENT_DIR_ROOM so
 * that any such name fits: not a page of its own (a page fault at every
 * start), and "" until set. */
static char no_dir[1];
char *agent_dir = no_dir;
size_t agent_dir_size = sizeof no_dir;

/* The directory named d kept as agent_dir: 0, or -1 (too long, no room). */
static int agent_dir_keep(const char *d)
{
	size_t n = strnlen(d, PATH_MAX) + 1, size = n < AGENT_DIR_ROOM ? AGENT_DIR_ROOM : n, room;
	if (n > PATH_MAX)
		return -1;
	char *at = base_keep_open(&room);
	if (!at)
		return -1;
	if (room < size) {
		base_keep_close(0);
		return -1;
	}
	memcpy(at, d, n);
	memset(at + n, 0, size - n);
	agent_dir = (char *)base_keep_close(size); /* ours to write: kept for it */
	agent_dir_size = size;
	return 0;
}

/* PROFIL_STACK_DEPTH: frames per sample, leaf included; 1: the leaf only
 * (no unwind tables are built).  Set once at load. */
uint32_t agent_stack_depth = 128;
int agent_only_root;  /* PROFIL_RECORD_NOCHILD */

/* What went wrong, said by the recorder (ringask_tell()), which names our
 * pid as it sees it; on our stderr only when it cannot be told. */
void agent_say(const char *what)
{
	char line[RINGASK_TELL_MAX - 64];
	/* not strerror(): its translation may malloc (src/base/alloc.c) */
	const char *why = strerrordesc_np(errno);
	int n = base_fmt(line, sizeof line, "%s: %s", what, why ? why : "unknown error");
	if (n < 0 || ringask_tell(agent_dir, line) == 0)
		return;
	char out[sizeof line + 48];
	n = base_fmt(out, sizeof out, "profil agent (pid %d): %s\n", (int)getpid(), line);
	if (n > 0)
		(void)!write(2, out, (size_t)n < sizeof out ? (size_t)n : sizeof out - 1);
}

/* A ring table for rf, published to the engine: the table, or NULL.
 * by_helper: from the helper thread, which must not wait for a lock its
 * joiner holds (engine_publish_helper(): NULL, ECANCELED). */
struct ptable *agent_publish(struct ring_file *rf, int by_helper)
{
	struct ptable *t = ptable_new(0);
	if (!t)
		return NULL;
	t->mode = PTABLE_RING;
	t->form = PFORM_RING;
	t->ring = rf;
	t->ring_data = (unsigned char *)rf + rf->data_offset;
	t->stack_depth = agent_stack_depth;
	rf->hz = hz_current();
	return (by_helper ? engine_publish_helper(t) : engine_publish(t)) == 0 ? t : NULL;
}

/* The sampling signal (negative: the one the program took from us) and
 * the engine's name into rf; async-signal-safe (no stdio). */
static void describe_as(struct ring_file *rf, int sig, enum profil_engine engine)
{
	atomic_store(&rf->signal, signal_lost() ? -signal_lost() : sig);
	const char *name = profil_engine_name(engine);
	size_t n = strlen(name);
	n = n < sizeof rf->engine - 1 ? n : sizeof rf->engine - 1;
	memcpy(rf->engine, name, n);
	rf->engine[n] = '\0';
}

/* Refreshes what the ring file says about the engine (the sampling signal
 * moves when the program takes ours). */
void agent_describe(struct ring_file *rf)
{
	struct profil_stats st;
	if (profil_get_stats(&st) == 0)
		describe_as(rf, st.signal, st.engine);
}

/* The same without the engine's lock (an exec holds it): the signal now
 * and the engine chosen; async-signal-safe. */
void agent_describe_unlocked(struct ring_file *rf)
{
	int sig = signal_sampling();
	describe_as(rf, sig, sig ? perf_engine_kind() : PROFIL_ENGINE_OFF);
}

struct ring_file *_Atomic agent_ring; /* the ring being written */
static int64_t agent_entry_cpu = -1; /* thread CPU ns at our constructor */

/* Signals the engine dropped (a thread pointer not libc's, as Go without
 * cgo sets, or too little alternate stack left): reported as lost samples. */
static void report_dropped(struct ring_file *rf)
{
	static unsigned long long reported;
	unsigned long long now = atomic_load(&profil_pstats.dropped);
	if (now > reported) {
		atomic_fetch_add(&rf->lost, now - reported);
		reported = now;
	}
}

/*
 * Whether `profil record` still reads our ring: while it runs it holds an
 * exclusive flock(2) on its directory's ".lock" (cli/record/workdir.c).
 * No directory (the recording ended and it was removed), or a lock
 * anyone may share (the recorder was killed): nobody will read what we
 * write.  A directory without a lock file is one no recorder made (the
 * library's tests drive the agent themselves), or one being removed (the
 * next sweep sees it gone).  Any other answer (no descriptor to spare,
 * an odd error) counts as alive: stopping a recording in progress would
 * lose samples.
 */
int agent_recorder_alive(void)
{
	ringreach_check(agent_dir, agent_dir_size);
	char lock[PATH_MAX + 8];
	base_fmt(lock, sizeof lock, "%s/.lock", agent_dir);
	/* In the helper, one descriptor for every sweep (helper_files.c):
	 * the lock file, even unlinked with its directory, is shared the
	 * moment the recorder is gone. */
	int kept = helper_file(HELPER_LOCK, lock, O_RDONLY | O_NOFOLLOW);
	if (kept >= 0)
		return flock(kept, LOCK_SH | LOCK_NB) != 0;
	int fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		struct stat st;
		if (errno != ENOENT || stat(agent_dir, &st) == 0 || errno != ENOENT)
			return 1;
		/* No directory: the recording is over, or the process has
		 * moved since its start to a mount namespace of its own with
		 * a tmpfs over the directory (unshare -m, then a mount): the
		 * recorder, if it answers, says which (ringreach.c) */
		return ringreach_start(agent_dir, agent_dir_size) == 1 && agent_recorder_alive();
	}
	int alive = flock(fd, LOCK_SH | LOCK_NB) != 0;
	close(fd); /* and with it the shared lock, if it was had */
	return alive;
}

/* The ring is no longer ours to write: forgotten, and its mapping (up to
 * 9 MiB) undone as ringfile_create() made it.  rf may be NULL. */
static void drop_ring(struct ring_file *rf)
{
	atomic_store(&agent_ring, NULL);
	if (rf)
		munmap(rf, rf->modlog_offset + rf->modlog_size);
}

/* Sampling ends in this process while it goes on running: the recording
 * is over in a descendant the command left running (a daemon, a
 * background job: sampling it would cost its CPU for samples nobody
 * reads), or a debugger attached to it (its samples would stop it for
 * the debugger: traced.c).  From the helper thread, so by withdrawal
 * (engine.h); then nothing writes into the ring (no handler holds the
 * table, the module log is off), and its mapping, up to 9 MiB of a file
 * the recorder reads or nobody reads, goes, and the helper thread after
 * it (sweeper_retire()).  What was sampled before stays in the file.
 * rf NULL: a forked child still deferred, which has no file (child.c).
 * 0, or -1 to try again at the next sweep. */
int agent_stop_by_withdrawal(struct ring_file *rf)
{
	if (engine_withdraw() != 0)
		return -1;
	envfix_unfollow(); /* its execs are not followed */
	modules_stop();
	drop_ring(rf);
	sweeper_retire(); /* and this helper thread goes after the reap */
	return 0;
}

/*
 * Sampling ends in this process now, from the program's own thread, just
 * before it installs a seccomp filter that would refuse calls the agent
 * makes (seccomp.c): after the install none of them may be made, so
 * everything is released here and at once, the helper thread joined
 * (engine_publish(NULL)), not left to a sweep as agent_stop_by_withdrawal()
 * does.
 * What was sampled before stays in the ring; the recorder is told
 * ("<pid>.sandboxed") and says so at the end, and no program this one
 * execs or spawns starts sampling under the same filter (envfix_stop()).
 */
_Atomic int agent_sandboxed;

void agent_stop_sandboxed(void)
{
	if (!atomic_load(&agent_ring) && !defer_active())
		return; /* not sampling */
	atomic_store(&agent_sandboxed, 1); /* its forked children too */
	agent_note_left(agent_dir, "sandboxed", 0);
	envfix_stop();
	modules_stop();
	engine_publish(NULL);
	/* read once the helper is joined: a forked child's helper may have
	 * made the ring file meanwhile, then given up its publish */
	drop_ring(atomic_load(&agent_ring));
	/* a forked child whose ring file could not be made: its scratch
	 * ring goes unwritten (no exit may make the file now) */
	if (defer_active() && defer_claim(0))
		defer_release(1);
}

/* A tracer attached since the start (gdb -p, strace -p): told to the
 * recorder, and sampling ends (the samples of up to a sweep after the
 * attach still reach the tracer).  1 when it has. */
static int attached(struct ring_file *rf)
{
	pid_t tracer = agent_tracer();
	if (tracer <= 0)
		return 0;
	agent_note_traced(agent_dir, tracer, 1);
	return agent_stop_by_withdrawal(rf) == 0;
}

/* Every sweep (100 ms), in the engine's helper thread. */
static void tick(void)
{
	if (defer_active()) /* its start hook could not end it: again */
		agent_defer_end();
	reaps_settle();
	modules_poll();
	aliases_poll();
	struct ring_file *rf = atomic_load(&agent_ring);
	if (rf && !agent_recorder_alive() && agent_stop_by_withdrawal(rf) == 0) {
		envfix_over(); /* the programs it runs from now on: no agent */
		return;
	}
	if (rf && attached(rf))
		return;
	if (rf)
		report_dropped(rf);
	if (rf) /* negative: the program took it (handover.c, signal_check_taken) */
		atomic_store(&rf->signal, signal_lost() ? -signal_lost() : signal_sampling());
	if (rf && engine_switch_moved() > 0) /* the sweep just made may have moved one */
		atomic_fetch_or(&rf->flags, RING_FLAG_SWITCHED);
	if (rf && atomic_load_explicit(&profil_pstats.stopped, memory_order_relaxed) ==
	                  PROFIL_STOP_FAULT)
		atomic_fetch_or(&rf->flags, RING_FLAG_FAULTED);
}

static int start(const char *args, size_t nargs)
{
	if (!agent_recorder_alive()) { /* a descendant of a recording that is over */
		envfix_over();
		return -1;
	}
	struct ring_file *rf = agent_new_ring(args, nargs);
	if (!rf) {
		/* The usual cause: a program that changed user (setpriv, a
		 * daemon dropping root) and then exec'd cannot write into
		 * record's private directory.  No directory at all: the
		 * recording is over, and this is a descendant the command left
		 * running: its stderr is not ours to write on. */
		if (errno != ENOENT)
			agent_say(errno == EACCES ? "cannot create its ring file (it runs as another user "
			                      "than profil record, which did not make one for it; "
			                      "not profiled)"
			                    : "cannot create its ring file");
		return -1;
	}
	modules_init(rf);
	/* unwind rows are kept where `profil record` says (its cache, shared
	 * by every recording), else with the ring files of this recording.
	 * Also without stacks (--max-depth 1): the lazy helper's proof walks
	 * the interrupted stack (lazy_helper.c), and without the tables every
	 * process made its helper at once, a thread's creation and ending
	 * each (a loop of /bin/true ran 1.8 ms a process slower than with
	 * stacks on a PVM guest). */
	const char *rows = profil_getenv("PROFIL_UNWIND_CACHE");
	if (unwind_start(rows && *rows ? rows : agent_dir) != 0 && agent_stack_depth > 1)
		agent_say("cannot build unwind tables for every module");
	int64_t cpu = account_cpu_now();
	if (!agent_publish(rf, 0)) {
		agent_say("cannot start profiling");
		return -1;
	}
	agent_describe(rf);
	atomic_store(&agent_ring, rf);
	account_startup(agent_entry_cpu, cpu, 1, hz_current());
	return 0;
}

int agent_running(void)
{
	return atomic_load(&agent_ring) != NULL || defer_active();
}

void agent_mark_exec(int on)
{
	struct ring_file *rf = atomic_load(&agent_ring);
	if (rf && rf->pid == (uint32_t)getpid())
		atomic_store(&rf->done, on ? RING_EXECING : 0u);
}


static void process_start(void)
{
	const char *d = profil_getenv("PROFIL_RECORD_DIR");
	if (!d || !*d || agent_dir_keep(d) != 0)
		return;
	const char *nochild = profil_getenv("PROFIL_RECORD_NOCHILD");
	const char *root = profil_getenv("PROFIL_RECORD_ROOT");
	agent_only_root = nochild && strcmp(nochild, "1") == 0;
	const char *depth = profil_getenv("PROFIL_STACK_DEPTH");
	if (depth && *depth) {
		long v = base_strtoll(depth, NULL, 10);
		agent_stack_depth = v < 1 ? 1 : v > (long)RING_MAX_DEPTH ? RING_MAX_DEPTH : (uint32_t)v;
	}
	if (agent_only_root && root && base_strtoll(root, NULL, 10) != (long)getpid())
		return;
	signal_avoid_prof = 1; /* SIGPROF is the program's (engine.h) */
	nspid_init();
	ringask_init();
	/* a sandbox's own mount namespace or root may hide the directory */
	if (ringreach_start(agent_dir, agent_dir_size) < 0) {
		agent_say("cannot reach the recording's directory from this process's "
		          "mount namespace (no /proc to name it by, or profil record did "
		          "not answer); not profiled");
		return;
	}
	pid_t tracer = agent_tracer();
	if (tracer > 0) { /* a debugger's or strace's: not sampled (traced.c) */
		if (agent_recorder_alive())
			agent_note_traced(agent_dir, tracer, 0);
		return;
	}
	/* read once, for the zygote test and the ring file's header, into
	 * the strings kept from the start (base_keep()): not on the stack,
	 * where 8 KiB pushed the calls below onto fresh pages, nor in a page
	 * of its own (a page fault each) */
	size_t nargs = 0, room;
	const char *args = NULL;
	char *at = base_keep_open(&room);
	if (at) {
		nargs = room > 1 ? agent_read_small("/proc/self/cmdline", at,
		                                    room < ARGS_MAX ? room : ARGS_MAX) : 0;
		args = base_keep_close(nargs ? nargs + 1 : 0);
		nargs = args ? nargs : 0;
	}
	if (agent_is_zygote(args, nargs)) { /* must stay single-threaded (zygote.c) */
		if (agent_recorder_alive())
			agent_note_left(agent_dir, "zygote", 0);
		return;
	}
	/* The helper thread at a safe point later (the program's first
	 * pthread_create or dlclose, or a sample after 50 ms of CPU), not
	 * now (lazy_helper.c): most processes never need it. */
	atomic_store(&helper_lazy, 1);
	if (start(args, nargs) != 0)
		return;
	process_mask_take_inherited(); /* a "block everything" mask from exec */
	envfix_init(environ, agent_only_root);
	atomic_store(&exec_failed_hook, agent_exec_returned);
	atomic_store(&sweeper_tick_hook, tick);
	atomic_store(&sweeper_start_hook, agent_defer_end);
	atomic_store(&exec_begin_hook, agent_exec_begins);
	atomic_store(&fork_child_hook, agent_in_child);
	atomic_store(&fork_prepare_hook, agent_fork_prepare);
	atomic_store(&ns_change_hook, agent_ns_changing);
}

/*
 * The agent is linked with -z initfirst (DF_1_INITFIRST): the dynamic
 * loader runs its constructors before any other object's, so that the
 * constructors of the program's libraries are sampled (a C++ library's
 * static initialisers: 15-45 ms of a 0.25 s clang run were `[start-up]`).
 * libc's own constructor has not run yet either, and it is what sets
 * environ; the loader passes every constructor the environment, the same
 * array libc is about to store there, so the agent stores it first.
 * Nothing else the agent calls at load depends on libc's constructor
 * (its threads, TLS, malloc and vDSO are set up before any constructor).
 * Nothing it calls at load may dlopen(), RTLD_NOLOAD included: a dlopen
 * runs the constructors not yet run, libc's among them, with the
 * arguments libc keeps, which it has not been given yet (0 and NULL: the
 * constructors of every library dlopen()ed later got those, and a Go
 * library crashed; src/engine/lazy_helper.c note_wrappers()).
 */
__attribute__((constructor)) static void agent_start(int argc, char **argv, char **envp)
{
	(void)argc, (void)argv;
	if (!environ)
		environ = envp;
	/* Not one system call in an image no recording wants (a program
	 * exec'd under a filter the agent stopped for: envfix_stop()). */
	const char *d = profil_getenv("PROFIL_RECORD_DIR");
	if (!d || !*d)
		return;
	agent_entry_cpu = account_cpu_now();
	perf_probe_status_hold(1);
	process_start();
	perf_probe_status_hold(0);
}
