/*
 * record_int.h - the parts of `profil record` (cli/record/): spawn.c runs
 * the command with the agent preloaded, images.c, ringread.c (young
 * ones, through a descriptor) and records.c (mapped ones) read the ring
 * files, build.c turns them into a profile (modindex.c finding each
 * pc's module), notes.c says what agents told us, cache.c says where files
 * that outlive a recording go (cachetrim.c bounds them), workdir.c makes
 * and cleans the rings' directory, traced.c reports the processes left
 * alone for a tracer, enginehint.c says when the engine fitted the
 * command poorly, record.c ties them together.
 */
#ifndef PROFIL_CLI_RECORD_INT_H
#define PROFIL_CLI_RECORD_INT_H

#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "images.h"

struct profile;

struct record_opts {
	unsigned hz;
	const char *output;
	int no_children;
	int verbose;
	char **argv;         /* the command */
	const char *unwind_cache; /* for the agent's unwind rows; NULL: none */
};

/* spawn.c.  Checks that CMD can take a preload (exists, dynamically
 * linked, not run in secure-execution mode); 0, or -1 after one line on
 * stderr, with the exit status to use in *status. */
int spawn_check(const char *cmd, int *status);
/* secure.c.  Why the loader would run file (st: its stat) in
 * secure-execution mode, ignoring LD_PRELOAD ("is set-user-ID", "has file
 * capabilities", ...), or NULL when it would not. */
struct stat;
const char *secure_exec_reason(const char *file, const struct stat *st);
/* summary.c: the closing lines on stderr (record_summary(): samples,
 * warnings, with -v the engine and the ratio to the kernel's CPU time,
 * orphans_s: CPU time of orphans reaped as pid 1; record_own_line(): -v's
 * cost of the record process, own_running: its CPU when the command
 * ended, sampled: the samples' CPU seconds); the CPU seconds of a rusage,
 * and ours. */
struct rusage;
struct images;
struct profile;
void record_summary(const struct record_opts *o, const struct images *set,
                    const struct profile *p, const struct rusage *ru, double orphans_s);
void record_own_line(const struct rusage *ru, double sampled, double own_running);
double record_cpu_of(const struct rusage *ru);
double record_own_cpu(void);

/* elfcheck.c: why file (st: its stat) cannot load the agent, the end of
 * a sentence after its name ("is statically linked: ..."), possibly in
 * buf; NULL when it can, or is not an ELF file (a script). */
const char *elf_refusal(const char *file, const struct stat *st, char *buf, size_t cap);
/* Starts CMD with the agent and the ring directory; its pid, or -1 after
 * one line on stderr, with the exit status to use in *status. */
pid_t spawn_start(const struct record_opts *o, const char *agent, const char *dir,
                  int *status);
/* spawnenv.c.  The command's environment: ours with the agent's
 * LD_PRELOAD entry and its PROFIL_* variables; v is NULL-terminated, its
 * entries ours or borrowed from environ (owned[] lists those to free).
 * 0, or -1 with errno (nothing kept). */
#define SPAWN_ENV_OWNED 8
struct spawn_env {
	char **v;
	size_t n;
	char *owned[SPAWN_ENV_OWNED];
	size_t nowned;
	char *root; /* PROFIL_RECORD_ROOT's value, room for a pid */
};
int spawn_env_make(struct spawn_env *e, const struct record_opts *o, const char *preload,
                   const char *dir);
void spawn_env_free(struct spawn_env *e);
/* The started command's pid into PROFIL_RECORD_ROOT: by the child of
 * vfork(), which knows it; stores only, no call. */
void spawn_env_set_root(struct spawn_env *e, pid_t pid);
/* The agent's path into buf: 0, or -1 when there is none to read. */
int spawn_find_agent(char *buf, size_t size);
/* That path made one LD_PRELOAD can carry (absolute; through a link in
 * dir when it has a space or colon): 0, or -1 with a message printed. */
int spawn_agent_carried(char *agent, size_t size, const char *dir);
/* Forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to us to pid. */
void spawn_forward_signals(pid_t pid);
/* Notes the signals we were started with ignored, before we change any:
 * the command is started with them ignored too (spawn.c). */
void spawn_note_ignored(void);
/* Non-blocking: 1 when pid has ended (*wstatus, *ru filled, and the
 * total of the children it reaped, as its /proc entry said, in
 * *children_ns), else 0. */
int spawn_reap(pid_t pid, int *wstatus, struct rusage *ru, uint64_t *children_ns);
/* Exit status for ours: the command's, or 128 + the signal that killed it. */
int spawn_exit_status(int wstatus);
/* As a PID namespace's init: reaps the command's orphans (never cmd);
 * their CPU time in ns.  0 when we are not pid 1. */
uint64_t spawn_reap_orphans(pid_t cmd);

/* cache.c.  <cache root>/sub, created if missing; NULL when caching is
 * off ($PROFIL_CACHE set to "") or the directory cannot be had. */
const char *record_cache_dir(const char *sub, char *buf, size_t size);
/* <cache root> itself when it exists, else NULL (nothing to trim). */
const char *record_cache_root(char *buf, size_t size);

/* cachetrim.c.  Removes the least recently used files of the cache under
 * root while it holds more than $PROFIL_CACHE_MAX MiB (default 1024);
 * only when something was added since it last looked. */
void record_cache_trim(const char *root);

/* workdir.c: a small file (a note, /proc's) into buf, NUL-terminated;
 * its length, or -1.  Not stdio: no buffer, no fstat. */
ssize_t record_read_small(const char *path, int flags, char *buf, size_t size);
/* workdir.c.  A new directory for the rings, locked as ours for our
 * whole life; directories of recorders that died are removed first.
 * NULL on failure, err saying where it was tried and why. */
char *record_workdir_make(char *err, size_t cap);
/* Removes dir and the files in it. */
void record_workdir_remove(const char *dir);

/* traced.c.  One line on stderr naming the processes the agent did not
 * sample because another program traced them (agent/traced.c); whether
 * root is one of them. */
int record_report_traced(const char *dir, pid_t root);
/* How many processes the agent left unsampled, or sampled only in part,
 * for one of the reasons record_report_traced() reports. */
size_t record_count_left(const char *dir);
/* Whether process pid is one of them. */
int record_left_out(const char *dir, uint32_t pid);

/* build.c.  record_unnamed_code_hint(): one line on stderr when much of
 * p's samples are in code no file holds (a JIT's, unnamed).
 * record_unsampled_hint(): one when much of its time is at [unsampled]
 * (recorded at hz; on_perf_events: a higher rate would reach more). */
void record_unnamed_code_hint(const struct profile *p);
void record_unsampled_hint(const struct profile *p, unsigned int hz, int on_perf_events);
void record_build(struct profile *p, struct images *set);
/* modindex.c: an image's load events indexed by address range; ids: the
 * mapping id of each event (0: not a mapping).  mod_index_find(): the
 * index in im->mods of the load that holds pc at module generation gen
 * (build.c's rule), SIZE_MAX if none. */
struct mod_index;
struct mod_index *mod_index_build(const struct image *im, const uint64_t *ids);
size_t mod_index_find(const struct mod_index *x, uint64_t pc, uint32_t gen);
void mod_index_free(struct mod_index *x);
/* build.c: the location of a marker (ring.h RING_PC_*), named "[...]". */
uint64_t record_marker_location(struct profile *p, uint64_t marker);
/* reaped.c: adds, for each process whose total CPU time its parent's
 * reap told (or ours, root_ns, for the command root), what none of its
 * images accounted for, at "[process exit]"; the root's children are
 * taken to be at least root_children_ns (spawn_reap()).  children: the
 * recording follows them (then a forked child with no image is credited
 * whole). */
void record_credit_exits(struct profile *p, const struct images *set, int64_t period_ns,
                         uint32_t root, uint64_t root_ns, uint64_t root_children_ns,
                         int children);
/* forked.c: every forked child's last word (ring.h RING_FORKED), by its
 * PID namespace (0: ours; the inode of another) and its pid there;
 * forked_ended_unsampled(): whether that child's last word says it ended
 * before its first sample (it did not exec), and the locations of the
 * call that forked it into *path (*npath of them, 0 if not told: after
 * record_build()). */
struct forked_words;
struct forked_words *forked_words(const struct images *set);
int forked_ended_unsampled(const struct forked_words *w, uint64_t pidns, uint32_t pid,
                           const uint64_t **path, size_t *npath);
void forked_words_free(struct forked_words *w);

/* enginehint.c: a line on stderr when the engine the command ran on
 * fitted it poorly (preempted on timers, switching often on perf
 * events; under verbose, what the agent did about the latter); cpu is
 * ru's CPU time in seconds. */
void record_engine_hints(const struct images *set, const struct rusage *ru, double cpu,
                         int verbose);
/* Whether the recording's processes ran on engine ("perf-events",
 * "thread-cputime-timers"), as the agent that described them says. */
int record_ran_on(const struct images *set, const char *engine);

#endif
