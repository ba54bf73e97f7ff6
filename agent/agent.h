/*
 * agent.h - the profil agent: a library `profil record` preloads into the
 * program it runs.  It profiles every thread with the engine (src/) into
 * a sample ring (src/base/ring.h) in a file the record process reads while the
 * program runs, so nothing is lost if the program is killed.  It does no
 * I/O on the sampling path and no symbolization.
 *
 * Configuration (set by `profil record`, read once at load):
 *   PROFIL_RECORD_DIR     directory for ring files; unset: the agent idles
 *   PROFIL_RECORD_ROOT    pid of the recorded command
 *   PROFIL_RECORD_NOCHILD "1": only the root process is profiled
 *   PROFIL_HZ             sampling rate (the engine reads it)
 *   PROFIL_EXEC_CPU       "pid:ns:children", written by the agent into
 *                         each exec's environment: the CPU time the image
 *                         before the exec had, and its reaped children's
 *                         (account.c, envfix.c)
 *   PROFIL_RECORD_TOKEN   what a request for a ring file must say
 *                         (ringask.c)
 *   PROFIL_STACK_DEPTH    frames per sample, leaf included (default 128,
 *                         at most RING_MAX_DEPTH; 1: no stacks, and no
 *                         unwind tables are built: src/unwind/unwind.h)
 *
 * The public profil() family is hidden in the agent's copy of the engine:
 * a program that calls profil() itself gets glibc's, which runs beside us
 * on SIGPROF: the agent samples on a free real-time signal from the start
 * (signal_avoid_prof, engine.h), since glibc installs that handler where
 * no interposer sees it.
 */
#ifndef PROFIL_AGENT_H
#define PROFIL_AGENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define HIDDEN __attribute__((visibility("hidden")))

struct ring_file;
struct maps_code; /* src/base/base.h */

/* ringfile.c: a new ring file "<dir>/<pid>.<n>.ring", mapped shared and
 * initialised; NULL with errno on failure (the agent then idles).  args:
 * the process's arguments as /proc/self/cmdline gives them, nargs bytes,
 * read just before; NULL to read them here. */
HIDDEN struct ring_file *ringfile_create(const char *dir, size_t data_size,
                                         size_t modlog_size, const char *args,
                                         size_t nargs);

/* modules.c: the module log.  modules_init() records every object loaded
 * now; modules_rescan() records what was loaded or unloaded since
 * (called after dlopen/dlclose).  Both take the module lock themselves. */
HIDDEN void modules_init(struct ring_file *rf);
HIDDEN void modules_rescan(void);
/* modpoll.c: rescans when dl_iterate_phdr's counters moved (called
 * every sweep); and at dlclose and exit(). */
HIDDEN void modules_poll(void);
/* modules.c: dl_iterate_phdr() under the lock a fork waits for; the last
 * rescan, at exit() (modpoll.c). */
struct dl_phdr_info;
HIDDEN int modules_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg);
HIDDEN void modules_rescan_exiting(void);
/* After fork in the child: the parent's log as it is now is noted (its
 * generation returned) and nothing is logged until modules_adopt(rf),
 * which starts rf's log from that copy (no dl_iterate_phdr in a forked
 * child: modules.c); may_wait 0: async-signal-safe, and nothing is done
 * when the module lock is busy. */
HIDDEN uint32_t modules_forked(void);
/* The bytes of that copy. */
HIDDEN uint64_t modules_forked_len(void);
HIDDEN void modules_adopt(struct ring_file *rf, int may_wait);
/* After fork in a child that is not profiled: log nothing more. */
HIDDEN void modules_detach(void);
/* In a process of any number of threads: log nothing more. */
HIDDEN void modules_stop(void);
/* An executable mapping of a file (base/maps.c, as aliases.c finds
 * them): logged as one more load of the loaded object that file is,
 * unless the object's own segments are there or it was logged before. */
HIDDEN void modules_log_alias(const struct maps_code *a);

/* aliases.c: reads /proc/self/maps at some sweeps (called at every one)
 * for code of loaded files mapped again elsewhere (V8's builtins).
 * aliases_match(): whether object info, whose file is path, is the file
 * of a: 1, 0 if not, -1 if its own segments are there (then it is no
 * alias, and the search ends). */
struct dl_phdr_info;
HIDDEN void aliases_poll(void);
HIDDEN int aliases_match(const struct dl_phdr_info *info, const char *path,
                         const struct maps_code *a);

/* account.c: CPU time no sample shows.  account_cpu_now(): this
 * thread's CPU clock, ns (-1 on failure); read just before the timers
 * start.  account_startup(): credits what ran before that (minus what the
 * image before an exec of this process sampled, when after_exec) at the
 * start-up marker, and what ran from cpu_at_agent (the agent's
 * constructor) on at the agent's own, and starts the count of reaps
 * (reaps_begin()) from the children's sum at the last exec an agent saw.
 * account_exec_value(): "pid:ns:children" for PROFIL_EXEC_CPU,
 * async-signal-safe.  The exiting thread is settled by a destructor. */
HIDDEN int64_t account_cpu_now(void);
HIDDEN void account_startup(int64_t cpu_at_agent, int64_t cpu_at_start, int after_exec,
                            unsigned int hz);
HIDDEN int account_exec_value(char *buf, size_t size);
/* account.c: gap ns as a weight at hz, rounded at random by its
 * fraction (many short processes sum right). */
HIDDEN unsigned long account_periods(uint64_t gap_ns, unsigned int hz);

/* reap.c: the children reaped that no hook told of.  reaps_children_ns():
 * the kernel's sum of this process's reaped children (RUSAGE_CHILDREN),
 * ns.  reaps_begin(): this image's count starts from that sum as it was
 * (then).  reaps_settle(): writes what the sum grew by beyond the hooks'
 * reaps as one reap of pid 0; async-signal-safe, any thread. */
HIDDEN uint64_t reaps_children_ns(void);
HIDDEN void reaps_begin(uint64_t then);
HIDDEN void reaps_settle(void);
/* agent.c: whether this process is being recorded now. */
HIDDEN int agent_running(void);
/* agent.c, for child.c: the recording's directory, frames per sample
 * and --no-children (set once at load); the ring being written (NULL in
 * a child not sampled or not yet given one); a new ring file, sized for
 * the process's limits (ringfile.c; NULL with errno); a line on stderr naming the problem with errno's text; rf
 * published (its table, or NULL); rf told the engine and signal now
 * (unlocked: async-signal-safe, without the engine's lock); whether the
 * recorder still reads the recording. */
extern char *agent_dir HIDDEN;
extern size_t agent_dir_size HIDDEN;
/* Room for any /proc name ringreach.c gives the directory (its path[64]) */
#define AGENT_DIR_ROOM 64
extern uint32_t agent_stack_depth HIDDEN;
extern int agent_only_root HIDDEN;
extern struct ring_file *_Atomic agent_ring HIDDEN;
struct ptable;
HIDDEN struct ring_file *agent_new_ring(const char *args, size_t nargs);
HIDDEN void agent_say(const char *what);
HIDDEN struct ptable *agent_publish(struct ring_file *rf, int by_helper);
HIDDEN void agent_describe(struct ring_file *rf);
HIDDEN void agent_describe_unlocked(struct ring_file *rf);
HIDDEN int agent_recorder_alive(void);

/* child.c: the fork hook (fork.c's fork_child_hook); a forked child
 * sampled into its scratch ring (defer.c) gets its ring file:
 * agent_defer_end() live, from a thread that may call anything (the
 * helper's start, dlclose, a seccomp filter's install);
 * agent_defer_final() async-signal-safe, engine lock or not (exit,
 * _exit, exec): 1 when a ring file now holds the samples; may_wait: for
 * an ending under way in the helper (0 at an exec, which holds the
 * engine's lock that ending needs, and ends the helper anyway).  exec.c's
 * hooks: agent_exec_begins() first, agent_exec_returned() when the exec
 * failed.  agent_exec_unsampled(): the exec under way is a deferred
 * child's with nothing sampled: no ring file, and the exec'd program's
 * start-up covers the child's time (account.c's PROFIL_EXEC_CPU then
 * says 0). */
HIDDEN void agent_in_child(void);
/* child.c: fork.c's fork_prepare_hook: the forking thread's callers, for
 * the child's fork word. */
HIDDEN void agent_fork_prepare(void);
HIDDEN void agent_defer_end(void);
HIDDEN int agent_defer_final(int may_wait);
HIDDEN void agent_exec_begins(void);
HIDDEN void agent_exec_returned(char *const envp[]);
HIDDEN int agent_exec_unsampled(void);

/* defer.c: the scratch ring (see there).  defer_begin(): published, at a
 * fork, 0 or -1.  defer_active(): this process is deferred;
 * defer_inherited(): so is this one or the one it was forked from (in a
 * child's fork hook: the parent was sampled though it had no file).
 * defer_claim(): the caller ends the deferral (1), else 0 (none, or
 * another thread ended it within wait_ms); defer_release(ended).
 * defer_empty(): nothing sampled yet; defer_bytes(): what the records
 * take.  defer_credit(): a marker's weight
 * into t (the tid given).  defer_final_table(): a table on rf, never
 * published.  defer_copy(): the scratch ring into t, and emptied. */
HIDDEN int defer_begin(uint32_t stack_depth, uint32_t modgen);
HIDDEN int defer_active(void);
HIDDEN int defer_inherited(void);
HIDDEN int defer_claim(int wait_ms);
HIDDEN void defer_release(int ended);
HIDDEN int defer_empty(void);
HIDDEN uint64_t defer_bytes(void);
HIDDEN void defer_credit(struct ptable *t, pid_t tid, uint64_t marker, unsigned long w);
HIDDEN struct ptable *defer_final_table(struct ring_file *rf);
HIDDEN void defer_copy(struct ptable *t);
/* This image's exec is under way (on: from the exec hook, envfix.c) or
 * failed (off): said in the ring (ring.h RING_EXECING).  Only the
 * process that made the ring marks it, never a vfork child sharing its
 * memory.  Async-signal-safe. */
HIDDEN void agent_mark_exec(int on);

/* ringfile.c: a small file (/proc's) into buf, NUL-terminated, maybe
 * cut; its length (0 when it cannot be read). */
HIDDEN size_t agent_read_small(const char *path, char *buf, size_t size);

/* preload.c: LD_PRELOAD's item list.  preload_lists(): whether list
 * names name.  preload_append_others(): list's items but name1's and
 * name2's (either may be NULL) appended to s, colon-separated.
 * preload_write(): into s, first (if not NULL) then list's items but
 * first and other_name ("" when none is left). */
HIDDEN int preload_lists(const char *list, const char *name);
HIDDEN void preload_append_others(char *s, const char *list, const char *name1,
                                  const char *name2);
HIDDEN void preload_write(char *s, const char *first, const char *list,
                          const char *other_name);

/* loadercheck.c: loadercheck_init() at load, before the exec hook is
 * set; loadercheck_refuses(): whether the program t names is one whose
 * loader cannot take the agent (another C library's, another ELF class
 * or machine), so that envfix.c leaves it out of that program's
 * LD_PRELOAD.  Async-signal-safe. */
struct exec_target;
HIDDEN void loadercheck_init(void);
HIDDEN int loadercheck_refuses(const struct exec_target *t);

/* ringfile.c: whether the pages of [at, at + len) of rf can be had for
 * writing.  Asked before the agent writes there outside the handler: on
 * a full tmpfs the first write to a page of a ring file raises SIGBUS,
 * which is the program's there (the handler's writes recover from it:
 * src/engine/fault.c). */
HIDDEN int agent_ring_room(struct ring_file *rf, uint64_t at, uint64_t len);

/* traced.c: the pid of the program tracing this process (a debugger,
 * strace), 0 for none or unknown; agent_note_traced() tells the recorder
 * in "<dir>/<pid>.traced" that this process is not sampled for that, or
 * (attached) in "<dir>/<pid>.attached" that sampling ended when it came. */
#include <sys/types.h>
HIDDEN pid_t agent_tracer(void);
HIDDEN void agent_note_traced(const char *dir, pid_t tracer, int attached);
/* The note itself: "<dir>/<pid>.<kind>" holding "comm TAB tracer pid TAB
 * tracer comm" (tracer 0: none, "-"). */
HIDDEN void agent_note_left(const char *dir, const char *kind, pid_t tracer);
/* agent.c: sampling ends in this process by withdrawal (the recording is
 * over, a tracer attached), where engine_publish(NULL) would wait for
 * the helper thread: the table withdrawn, the helper's next pass
 * releasing the rest; rf NULL for a deferred child, which has no file.
 * 0, or -1 to try again at the next sweep. */
HIDDEN int agent_stop_by_withdrawal(struct ring_file *rf);
/* agent.c: sampling ends now, before a seccomp filter that would refuse
 * the agent's calls is installed (seccomp.c). */
HIDDEN void agent_stop_sandboxed(void);
/* Set by it: the process and its forked children (which keep the
 * filter) make no call of the agent's from then on. */
extern _Atomic int agent_sandboxed HIDDEN;

/* zygote.c: whether this process is a Chromium zygote (its arguments,
 * nargs bytes of /proc/self/cmdline and a NUL as agent_read_small()
 * leaves them, hold --type=zygote), which must stay single-threaded. */
HIDDEN int agent_is_zygote(const char *args, size_t nargs);

/* nspid.c: nspid_init() reads, at load, the recorder's PID namespace
 * (PROFIL_RECORD_PIDNS); nspid_tell() tells the recorder the pid it sees
 * for ring file ring_name (a name in dir) when this process's namespace
 * is another, before the file's header is complete. */
HIDDEN void nspid_init(void);
HIDDEN void nspid_tell(const char *dir, const char *ring_name);

/* ringask.c: ringask_init() reads, at load, the token the recorder gave
 * the command (PROFIL_RECORD_TOKEN); ringask() asks the recorder for a
 * ring file of size bytes in dir (its process may not create one there):
 * its descriptor, its name in name[NAME_MAX + 1]; -1 with errno. */
HIDDEN void ringask_init(void);
HIDDEN int ringask(const char *dir, size_t size, char *name);
/* ringask_dir(): the recorder's directory dir, asked for on its abstract
 * socket by a process that cannot see it: an O_PATH descriptor, or -1
 * with errno (ECONNREFUSED: no recorder is bound there). */
HIDDEN int ringask_dir(const char *dir);
/* ringask_tell(): what (one line, no newline) said to the recorder of
 * directory dir, which prints it (cli/record/ringserve.c); 0, or -1 when
 * it cannot be told (no recorder, no token, no descriptor, its queue
 * full), errno kept.  RINGASK_TELL_MAX bounds the datagram. */
#define RINGASK_TELL_MAX 512
HIDDEN int ringask_tell(const char *dir, const char *what);

/* ringreach.c: ringreach_start() names dir (a buffer of size bytes) so
 * that this process reaches it: when no such path is seen here (a mount
 * namespace or root of the process's own), the recorder is asked for the
 * directory and dir becomes a /proc name of the descriptor it sent.  1
 * when it did, 0 when dir is left as it is (seen here, or no recorder
 * answers: the recording is over; no token to ask with; or reached
 * before), -1 with errno when the directory cannot be named here (no
 * /proc: ENOENT) or the recorder did not answer (ETIMEDOUT).
 * Called at the start, and when the directory is found gone later (the
 * process moved to a mount namespace of its own).  ringreach_check()
 * renames it, asking again if need be, when that name no longer reaches
 * the directory (the program closed the descriptor, or this is a forked
 * child); nothing for a directory seen by its path. */
HIDDEN int ringreach_start(char *dir, size_t size);
HIDDEN void ringreach_check(char *dir, size_t size);
/* ringreach_exec_pass(): at an exec, the descriptor that reaches the
 * directory, where its path does not, goes to the new image: its
 * close-on-exec flag cleared and value set to "n:dev:ino" for
 * RINGREACH_ENV; 0, or -1 when nothing is passed.  With spawn, for a
 * posix_spawn()ed child, only value is set (the child opens our
 * descriptor through /proc).  ringreach_exec_failed(), when the exec
 * given envp returned, sets the flag again, and closes the descriptor
 * envp names if it was opened for that exec. */
#define RINGREACH_ENV "PROFIL_RECORD_DIRFD"
/* ringreach_hold(): the directory dir (seen by that path) held by a
 * descriptor from now on, before the process changes namespaces. */
HIDDEN void ringreach_hold(const char *dir);
/* nshold.c: process/credwrap.c's ns_change_hook (and mount(), chroot(),
 * interposed there): the directory held before what the process sees
 * changes. */
HIDDEN void agent_ns_changing(int flags);
/* nshold.c: the C library's definition of name, which an interposer of
 * ours passes calls to, looked up once into *slot (a race looks it up
 * twice, harmlessly); NULL if there is none. */
HIDDEN void *agent_next(void *_Atomic *slot, const char *name);
HIDDEN int ringreach_exec_pass(char *value, size_t size, int spawn);
/* ringreach.c: descriptor fd moved high among the numbers the program
 * may use (close-on-exec), as held descriptors are; fd itself if it
 * cannot be (a low RLIMIT_NOFILE), when a holder that got one below
 * AGENT_KEEP_BELOW - 64 closes it: the program's low numbers are not ours
 * to take.  Out of the program's way: high, where no dup2() onto a low
 * number or shell redirection lands on it; below 1024 all the same, as
 * the kernel sizes a process's descriptor table by its highest number
 * (at a limit of 1,048,576, as containers set, the top would cost the
 * process 8 MiB of table). */
#define AGENT_KEEP_BELOW 1024
HIDDEN int agent_keep_high(int fd);

/* selfreach.c: the agent's own file where its path does not reach it (a
 * chroot).  selfreach_hold(), with ringreach_hold(): held by a descriptor
 * from now on.  selfreach_item(): what LD_PRELOAD names the agent by for
 * an exec (spawn: a posix_spawn()ed child), in buf or the path it was
 * loaded by; NULL when nothing reaches it there.  Writes nothing.
 * selfreach_pass(item): just before the exec, the descriptor item names
 * is left open across it; 0, or -1.  selfreach_exec_failed(): ours
 * again.  selfreach_loaded_as(): the name the loader gave the agent. */
HIDDEN void selfreach_hold(void);
/* selfreach.c: the process's credentials are about to change (setuid()
 * and the like): the file held, and preferred to its path from now on,
 * which the new credentials may not open. */
HIDDEN void selfreach_creds_changing(void);
HIDDEN const char *selfreach_item(char *buf, size_t size, int spawn);
HIDDEN int selfreach_pass(const char *item);
HIDDEN void selfreach_exec_failed(void);
HIDDEN const char *selfreach_loaded_as(void);
HIDDEN void ringreach_exec_failed(char *const envp[]);

/* seccomp.c: whether the program filters its system calls.
 * filter_note_start(): at a start, a filter already in force.
 * filter_enter(): 1 if the agent may make a call a filter could refuse,
 * then filter_leave() after it; 0 if not.  filter_installing(): the
 * program is about to install one (prctl, syscall(SYS_seccomp)). */
HIDDEN void filter_note_start(void);
HIDDEN int filter_enter(void);
HIDDEN void filter_leave(void);
HIDDEN void filter_installing(const void *sock_fprog);
/* In a forked child, before anything else of ours: no call under way.
 * filter_installing_strict(): the calling thread enters seccomp's
 * strict mode (read, write, exit and sigreturn only, this thread only). */
HIDDEN void filter_after_fork(void);
HIDDEN void filter_installing_strict(void);

/* bpf.c: what a seccomp filter's classic BPF program returns for the
 * call d, as the kernel would run it; BPF_MALFORMED (a refusal) for a
 * program it cannot run. */
struct sock_filter;
struct seccomp_data;
#define BPF_MALFORMED 0x80000000u /* SECCOMP_RET_KILL_PROCESS */
HIDDEN uint32_t agent_bpf_run(const struct sock_filter *f, size_t len,
                              const struct seccomp_data *d);

/* filtercheck.c: what a filter about to be installed would refuse of the
 * calls the agent may still make: FILTER_REFUSES_EVENTS (the perf
 * engine's: its threads can move to timers), FILTER_REFUSES_AGENT (the
 * rest: sampling must end in the process before the install). */
enum { FILTER_REFUSES_EVENTS = 1, FILTER_REFUSES_AGENT = 2 };
HIDDEN unsigned filter_refusals(const struct sock_filter *f, size_t len);

/* envfix.c: from now on, every exec and posix_spawn passes on env's
 * PROFIL_* variables and LD_PRELOAD naming the agent, whatever
 * environment the program gives it; root_only (--no-children): only the
 * execs of this process itself.  Called once, at load. */
HIDDEN void envfix_init(char **env, int root_only);
/* envfix.c: from now on execs and posix_spawn are not followed (a
 * forked child not profiled, a debugger attached): the environment as
 * given, but the agent left out for a program whose loader cannot take
 * it (loadercheck.c). */
HIDDEN void envfix_unfollow(void);
/* envfix.c: the recording is over (its recorder gone): from now on every
 * exec and posix_spawn leaves the agent out of LD_PRELOAD. */
HIDDEN void envfix_over(void);
/* envfix.c: from now on no exec or posix_spawn starts sampling (this
 * process's sampling ended under a seccomp filter: seccomp.c). */
HIDDEN void envfix_stop(void);

#endif
