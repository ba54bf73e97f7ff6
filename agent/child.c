/*
 * child.c - a forked child's sampling: the fork hook (agent_in_child()),
 * and the ring file it makes when it needs one.
 *
 * The child is sampled from the fork on into a scratch ring in its own
 * memory (defer.c, which says why and when it gets a file); here is what
 * makes the file: live (agent_defer_end(), the table published, then the
 * scratch ring copied into it) or final (agent_defer_final(), copied
 * through a table never published, where the engine's publish may not
 * run), and what the child tells its nearest ancestor's ring so that the
 * recorder can account for a child that never made one (ring.h
 * RING_FORKED).  A child not to be followed (--no-children) leaves.
 */
#include "agent.h"
#include "../src/engine/engine.h"
#include "../src/base/base.h"
#include "../src/base/ring.h"
#include "../src/engine/perf_engine.h"
#include "../src/process/process.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>
#include <sys/mman.h>

/* A forked child we do not profile: nothing more is logged or sampled. */
static void leave_child(void)
{
	envfix_unfollow(); /* its execs are not followed either */
	modules_detach();
	atomic_store(&agent_ring, NULL);
	engine_publish(NULL);
}

/* A forked child's ring file, once the recorder is known to read it and
 * no tracer follows the child (strace -f); NULL when it is not to be
 * sampled (a traced child is noted for the recorder). */
static struct ring_file *child_ring(void)
{
	if (!agent_recorder_alive()) {
		envfix_over(); /* the recording is over: its execs get no agent */
		return NULL;
	}
	pid_t tracer = agent_tracer();
	if (tracer > 0) {
		agent_note_traced(agent_dir, tracer, 0);
		return NULL;
	}
	/* its arguments read afresh: a server may have retitled its children
	 * (setproctitle) */
	struct ring_file *rf = agent_new_ring(NULL, 0);
	if (!rf && errno != ENOENT) /* else the recording is over (start()) */
		agent_say("cannot create a ring file for a child");
	return rf;
}

/* A forked child not deferred (defer.c refused: no memory): its ring
 * file at once, as every child had before. */
static void child_start(void)
{
	struct ring_file *rf = child_ring();
	if (!rf) {
		leave_child();
		return;
	}
	modules_adopt(rf, 1);
	atomic_store(&agent_ring, rf);
	if (!agent_publish(rf, 0)) {
		agent_say("cannot profile a child");
		return;
	}
	agent_describe(rf);
	/* the child's timer ran from before this hook (fork.c): its
	 * start-up ends there, not here */
	account_startup(fork_child_timer_cpu, fork_child_timer_cpu, 0, hz_current());
}

/* What the child ran before its timer started (fork.c), on its main
 * thread (its pid), into t: once, with the ring file. */
static void credit_fork_start(struct ptable *t)
{
	if (fork_child_timer_cpu > 0)
		defer_credit(t, getpid(), RING_PC_STARTUP,
		             account_periods((uint64_t)fork_child_timer_cpu, hz_current()));
}

void agent_defer_end(void)
{
	if (!defer_claim(0))
		return;
	struct ring_file *rf = atomic_load(&agent_ring); /* an exec's, if it failed */
	int fresh = !rf;
	if (fresh) {
		perf_probe_status_hold(1);
		rf = child_ring();
		perf_probe_status_hold(0);
		if (!rf) {
			/* not to be sampled after all (the recording is
			 * over, a tracer came) */
			defer_release(agent_stop_by_withdrawal(NULL) == 0);
			return;
		}
		modules_adopt(rf, 1);
		atomic_store(&agent_ring, rf);
	}
	/* published first: once engine_publish() returns, no handler writes
	 * the scratch ring any more, and later samples go to the file */
	struct ptable *t = agent_publish(rf, 1);
	if (!t) {
		/* ECANCELED: a stop is joining this thread (an exec, a
		 * sandbox, the end); the deferral is left to it */
		if (errno != ECANCELED)
			agent_say("cannot profile a child");
		defer_release(0);
		return;
	}
	/* Without the engine's lock: on the helper, a stop may be joining
	 * this thread with the lock held (a sandbox's filter,
	 * agent_stop_sandboxed(), right after the publish above went
	 * through): rec-seccomp forkrace hung there once in 40 runs. */
	agent_describe_unlocked(rf);
	if (fresh)
		credit_fork_start(t);
	defer_copy(t);
	defer_release(1);
	reaps_settle();
}

/* Whether the pages a final ending writes into rf can be had (an exec
 * has put the program's SIGSEGV and SIGBUS handlers back, exec.c, so a
 * write to a file on a full tmpfs would raise SIGBUS in the program:
 * agent_ring_room()): the module log
 * copied into a fresh file, and the records after its head (ring.h:
 * they may wrap, behind a SKIP record). */
static int room_for(struct ring_file *rf, int fresh)
{
	if (fresh && !agent_ring_room(rf, rf->modlog_offset, modules_forked_len()))
		return 0;
	uint64_t size = rf->data_size, from = atomic_load(&rf->head) & (size - 1);
	uint64_t len = defer_bytes() + 64; /* and the start-up credit, a SKIP */
	if (len > size)
		len = size;
	if (from + len <= size)
		return agent_ring_room(rf, rf->data_offset + from, len);
	return agent_ring_room(rf, rf->data_offset + from, size - from) &&
	       agent_ring_room(rf, rf->data_offset, len - (size - from));
}

/* Bounded: an ending under way in another thread (the helper's) is
 * waited for this long, then the scratch ring's samples are given up. */
#define FINAL_WAIT_MS 200

int agent_defer_final(int may_wait)
{
	if (!defer_claim(may_wait ? FINAL_WAIT_MS : 0))
		return 0;
	if (defer_empty()) {
		defer_release(0);
		return 0;
	}
	sigset_t all, old;
	sigfillset(&all); /* no sample meanwhile; a fault still recovers */
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	fault_raw_sigmask(SIG_BLOCK, &all, &old);
	struct ring_file *rf = atomic_load(&agent_ring);
	int fresh = !rf;
	if (fresh)
		rf = agent_new_ring(NULL, 0); /* read afresh, as above */
	if (rf && !room_for(rf, fresh))
		rf = NULL; /* its samples are lost, not the program */
	if (fresh && rf)
		modules_adopt(rf, 0);
	if (rf) {
		struct ptable *t = defer_final_table(rf);
		rf->hz = hz_current();
		agent_describe_unlocked(rf);
		if (fresh)
			credit_fork_start(t);
		defer_copy(t);
		atomic_store(&agent_ring, rf);
	}
	fault_raw_sigmask(SIG_SETMASK, &old, NULL);
	defer_release(0); /* an exec may fail: still sampled into scratch */
	return rf != NULL;
}

static _Atomic int exec_unsampled;
/* The ring of the nearest ancestor that had one when this child was
 * forked (inherited, mapped shared): where a deferred child tells of
 * itself (ring.h RING_FORKED). */
static struct ring_file *ancestor_ring;

/*
 * The forking thread's callers, walked before the fork (agent_fork_prepare())
 * for the child's fork word.  Walked in the child, as they were, they cost
 * page faults: fork copies page table entries for anonymous memory only,
 * so the child's first read of each page of the unwind tables (file
 * mappings) and of the code faults again, 8 to 9 faults a fork of bash's
 * (10-50 us each on a PVM guest), where in the parent they are mapped.
 * FORK_WALK_ROOM words hold most forks' callers (bash's: about 10 frames);
 * a deeper stack is walked in the child as before (fork_walk_n 0).
 * Written by the forking thread under glibc's atfork lock (held from the
 * prepare handlers to the parent's and child's), read by the child.
 */
#define FORK_WALK_ROOM 48u
static uint64_t fork_walk[FORK_WALK_ROOM];
static uint32_t fork_walk_n;

void agent_fork_prepare(void)
{
	fork_walk_n = 0;
	if (agent_only_root || atomic_load(&agent_sandboxed) || agent_stack_depth < 2 ||
	    !(atomic_load(&agent_ring) || ancestor_ring))
		return;
	fork_walk_n = sample_callers_walk(fork_walk, FORK_WALK_ROOM, agent_stack_depth,
	                                  sample_fork_pc);
}

/* at_fork: the word of the fork itself, with the call that made this
 * child (its callers from fork()'s caller out), under which the recorder
 * shows the child's time if no sample reaches it. */
static void tell_forked(uint32_t state, int at_fork)
{
	struct ring_file *rf = ancestor_ring;
	uint32_t walked = fork_walk_n;
	fork_walk_n = 0;
	if (!rf)
		return;
	/* modgen: set by sample_record_*(), under its fault recovery */
	struct ring_forked r = {RING_HDR(RING_FORKED, 2), (uint32_t)getpid(), state, 0};
	struct ptable *t = defer_final_table(rf);
	if (at_fork && walked)
		sample_record_given(t, &r, sizeof r, fork_walk, walked);
	else if (at_fork)
		sample_record_callers(t, &r, sizeof r, agent_stack_depth, sample_fork_pc);
	else
		sample_record_into(t, &r);
}

int agent_exec_unsampled(void)
{
	return atomic_load(&exec_unsampled);
}

/* exec.c's first hook, before the exec's own accounting writes into the
 * scratch ring: whether this deferred child sampled anything. */
void agent_exec_begins(void)
{
	int none = defer_active() && defer_empty() && !atomic_load(&agent_ring);
	atomic_store(&exec_unsampled, none);
	if (none)
		tell_forked(RING_FORKED_EXECING, 0);
}

/* exec.c's hook: the exec (given envp) returned, this program goes on. */
void agent_exec_returned(char *const envp[])
{
	agent_mark_exec(0);
	ringreach_exec_failed(envp); /* the directory's descriptor: ours again */
	selfreach_exec_failed();    /* and the agent file's */
	if (atomic_exchange(&exec_unsampled, 0) && defer_active())
		tell_forked(RING_FORKED_DEFERRED, 0);
}

/* A start reads /proc/self/status once (perf_probe_status_hold()). */
static void start_child_now(void)
{
	perf_probe_status_hold(1);
	child_start();
	perf_probe_status_hold(0);
}

void agent_in_child(void)
{
	filter_after_fork();
	if (atomic_load(&agent_sandboxed))
		return; /* stopped under its filter: not a call more (agent.c) */
	if (agent_only_root) {
		leave_child();
		return;
	}
	struct ring_file *parent = atomic_load(&agent_ring);
	if (!parent && !defer_inherited()) {
		leave_child(); /* the parent's sampling had ended (agent.c) */
		return;
	}
	if (parent) /* else the parent was deferred: its own ancestor's */
		ancestor_ring = parent;
	atomic_store(&agent_ring, NULL);
	uint32_t gen = modules_forked();
	reaps_begin(0); /* a forked child's sum starts at 0 */
	if (defer_begin(agent_stack_depth, gen) != 0) {
		start_child_now();
		return;
	}
	tell_forked(RING_FORKED_DEFERRED, 1);
	/* the helper (fork.c makes it after this hook) at the first safe
	 * sample: it makes the ring file (agent_defer_end()) */
	atomic_store(&lazy_helper_soon, 1);
}
