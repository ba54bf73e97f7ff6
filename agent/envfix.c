/*
 * envfix.c - children are followed even when the program hands them an
 * environment of its own.
 *
 * An exec'd program is profiled because it inherits LD_PRELOAD (naming
 * this agent) and the PROFIL_* variables `profil record` set.  Programs
 * often start others with an environment they built: `env -i`, Python's
 * subprocess with env={...}, make's and CI scripts' cleaned environments.
 * Those programs ran unprofiled, and `profil record` said only "0
 * samples".  So, unless children are not wanted (--no-children), every
 * exec we interpose (exec.c's hook) and posix_spawn()/posix_spawnp() pass
 * on the PROFIL_* variables this process started with, and LD_PRELOAD
 * with the agent first (the program's own preloads kept after it), and
 * ASAN_OPTIONS with verify_asan_link_order=0 (below).  An environment
 * that has them already goes as it is; so does one that names another
 * recording's directory: a `profil record` run inside this recording made
 * it for its own command, and that subtree is its recording (ours
 * replaced its variables, and the inner recording found nothing).
 *
 * ASAN_OPTIONS: src/base/asanopt.h says why and how; test suites often
 * run an ASan program with options of their own (ASAN_OPTIONS=
 * detect_leaks=0 ./t), so the key is added to what the program passes.  With --no-children
 * only the recorded process's own execs (same pid, still the recorded
 * process) are so treated; a forked child drops the hook (agent.c).
 *
 * The hook runs in vfork children too, whose memory is the parent's: it
 * allocates nothing and writes only into the caller's buffer (pointers
 * from its start, the one string it makes from its end).  What it reads
 * (saved[], agent_path) is written once at load, before the hook is set.
 * Not covered: system() and popen(), which glibc runs with the program's
 * own environ through an internal call (a program that removed LD_PRELOAD
 * from its environ loses its children there), and raw execve system calls.
 */
#include "agent.h"
#include "../src/process/process.h"
#include "../src/base/asanopt.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

/* Written for each exec (account.c): "pid:ns:children", the CPU time
 * this image had sampled when it exec'd and its process's reaped
 * children's then.  Never saved; a stale one names another pid, or is
 * told apart by the children's sum. */
#define EXEC_CPU "PROFIL_EXEC_CPU="
#define RECORD_DIR "PROFIL_RECORD_DIR="
#define ASAN_OPTIONS "ASAN_OPTIONS="
#define SAVED_MAX 32
#define SAVED_BYTES 8192 /* of them all */

/* Written once in envfix_init(), read-only afterwards. */
static const char *agent_path = ""; /* as the loader named us (selfreach.c) */
static const char *saved[SAVED_MAX]; /* "PROFIL_...=value" at load, kept (base_keep()) */
static size_t nsaved;
/* With --no-children: the recorded process, whose own execs keep its
 * pid and so must keep the agent; nobody else's environment is touched. */
static pid_t only_pid;

typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
                     const posix_spawnattr_t *, char *const[], char *const[]);
static spawn_fn *real_spawn, *real_spawnp;

static size_t name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) + 1 : strlen(entry);
}

/* Whether entry's name is name's ("NAME=" compared, '=' included). */
static int same_name(const char *entry, const char *name)
{
	size_t n = name_len(name);
	return strncmp(entry, name, n) == 0;
}

static int has_entry(char *const envp[], const char *entry)
{
	for (size_t i = 0; envp[i]; i++)
		if (strcmp(envp[i], entry) == 0)
			return 1;
	return 0;
}

/* Whether envp names a recording directory that is not ours (above). */
static int other_recording(char *const envp[])
{
	for (size_t j = 0; j < nsaved; j++) {
		if (!same_name(saved[j], RECORD_DIR))
			continue;
		for (size_t i = 0; envp[i]; i++)
			if (same_name(envp[i], RECORD_DIR) && strcmp(envp[i], saved[j]) != 0)
				return 1;
	}
	return 0;
}

/* Whether envp[i] is replaced by what we add (PROFIL_RECORD_DIRFD: only
 * ever by this exec's own, ringreach.c). */
static int replaced(const char *e, int new_preload, int new_asan)
{
	if (same_name(e, EXEC_CPU) || same_name(e, RINGREACH_ENV "="))
		return 1;
	if (new_preload && same_name(e, "LD_PRELOAD="))
		return 1;
	if (new_asan && same_name(e, ASAN_OPTIONS))
		return 1;
	for (size_t j = 0; j < nsaved; j++)
		if (same_name(e, saved[j]))
			return 1;
	return 0;
}

/* envp with our variables, built in out; with_cpu: and PROFIL_EXEC_CPU
 * (an exec of this process; not a spawned child). */
static char *const *build_env(char *const envp[], char **out, size_t cap, int with_cpu)
{
	if (only_pid && (pid_t)syscall(SYS_getpid) != only_pid)
		return NULL; /* a vfork child: not followed */
	if (other_recording(envp))
		return NULL;
	const char *preload = NULL, *asan = NULL;
	size_t n = 0, missing = 0;
	for (; envp[n]; n++) {
		if (same_name(envp[n], "LD_PRELOAD="))
			preload = envp[n] + strlen("LD_PRELOAD=");
		if (same_name(envp[n], ASAN_OPTIONS))
			asan = envp[n] + strlen(ASAN_OPTIONS);
	}
	for (size_t j = 0; j < nsaved; j++)
		missing += !has_entry(envp, saved[j]);
	/* the agent by the path it was loaded by, or where that no longer
	 * reaches it (a chroot) by a descriptor, or not at all (selfreach.c) */
	char self[64];
	const char *item = selfreach_item(self, sizeof self, !with_cpu);
	int new_preload = item ? !preload || !preload_lists(preload, item) ||
	                         (item != agent_path && preload_lists(preload, agent_path))
	                       : preload && preload_lists(preload, agent_path);
	int new_asan = asanopt_wanted(asan);
	char dirfd[72];
	/* a spawned child's value changes nothing here: asked first */
	int spawn_dirfd = !with_cpu && ringreach_exec_pass(dirfd, sizeof dirfd, 1) == 0;
	if (!missing && !new_preload && !new_asan && !with_cpu && !spawn_dirfd)
		return NULL;
	size_t old_len = preload && *preload ? strlen(preload) + 1 : 0;
	size_t bytes = new_preload ? strlen("LD_PRELOAD=") + (item ? strlen(item) : 0) + old_len + 1 : 0;
	if (new_asan)
		bytes += strlen(ASAN_OPTIONS) + asanopt_size(asan);
	char cpu[72];
	size_t cpu_bytes = 0, dirfd_bytes = 0;
	if (with_cpu && account_exec_value(cpu, sizeof cpu) == 0)
		cpu_bytes = strlen(EXEC_CPU) + strlen(cpu) + 1;
	bytes = (bytes + cpu_bytes + 7) & ~(size_t)7;
	if ((n + nsaved + 5) * sizeof(char *) + bytes + sizeof dirfd + 24 > cap * sizeof(char *))
		return NULL; /* too large for the buffer: as it is */
	/* last: for an exec it clears the descriptor's close-on-exec flag */
	if (spawn_dirfd || (with_cpu && ringreach_exec_pass(dirfd, sizeof dirfd, 0) == 0))
		dirfd_bytes = strlen(RINGREACH_ENV "=") + strlen(dirfd) + 1;
	bytes = (bytes + dirfd_bytes + 7) & ~(size_t)7;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!replaced(envp[i], new_preload, new_asan))
			out[k++] = envp[i];
	for (size_t j = 0; j < nsaved; j++)
		out[k++] = (char *)saved[j];
	char *s = (char *)out + cap * sizeof(char *) - bytes;
	if (new_preload) {
		if (item && with_cpu && selfreach_pass(item) != 0)
			item = NULL; /* its descriptor would not reach the new image */
		strcpy(s, "LD_PRELOAD=");
		preload_write(s + strlen(s), item, preload, agent_path);
		if (s[strlen("LD_PRELOAD=")]) /* an empty one would be the same */
			out[k++] = s;
		s += strlen(s) + 1;
	}
	if (new_asan) {
		strcpy(s, ASAN_OPTIONS);
		asanopt_write(asan, s + strlen(ASAN_OPTIONS));
		out[k++] = s;
		s += strlen(s) + 1;
	}
	if (cpu_bytes) {
		strcpy(s, EXEC_CPU);
		strcat(s, cpu);
		out[k++] = s;
		s += strlen(s) + 1;
	}
	if (dirfd_bytes) {
		strcpy(s, RINGREACH_ENV "=");
		strcat(s, dirfd);
		out[k++] = s;
	}
	out[k] = NULL;
	return out;
}

/*
 * envp for a program whose loader cannot take the agent (loadercheck.c):
 * LD_PRELOAD without it (gone if nothing else is left), the rest as
 * given; NULL when envp does not list the agent.
 */
static char *const *without_agent(char *const envp[], char **out, size_t cap)
{
	char self[64];
	const char *item = selfreach_item(self, sizeof self, 1);
	size_t n = 0, at = (size_t)-1;
	for (; envp[n]; n++)
		if (same_name(envp[n], "LD_PRELOAD="))
			at = n;
	const char *list = at != (size_t)-1 ? envp[at] + strlen("LD_PRELOAD=") : NULL;
	if (!list || (!preload_lists(list, agent_path) && !(item && preload_lists(list, item))))
		return NULL;
	size_t bytes = (strlen("LD_PRELOAD=") + strlen(list) + 1 + 7) & ~(size_t)7;
	if ((n + 1) * sizeof(char *) + bytes > cap * sizeof(char *))
		return NULL; /* too large for the buffer: as it is */
	char *s = (char *)out + cap * sizeof(char *) - bytes;
	strcpy(s, "LD_PRELOAD=");
	preload_append_others(s + strlen(s), list, agent_path, item);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (i != at)
			out[k++] = envp[i];
	if (s[strlen("LD_PRELOAD=")])
		out[k++] = s;
	out[k] = NULL;
	return out;
}

/* Whether the program gets the agent at all: not one whose loader cannot
 * take it (loadercheck.c), nor a loader asked to list what it loads and
 * stop (ldd sets LD_TRACE_LOADED_OBJECTS, whatever its value): the list
 * named the agent among the program's libraries, and scripts that bundle
 * what ldd lists bundled it. */
static int agent_unwanted(const struct exec_target *t, char *const envp[])
{
	for (size_t i = 0; envp[i]; i++)
		if (same_name(envp[i], "LD_TRACE_LOADED_OBJECTS="))
			return 1;
	return loadercheck_refuses(t);
}

/* exec.c's hook (process.h). */
static char *const *fix_env(const struct exec_target *t, char *const envp[], char **out,
                            size_t cap)
{
	if (!agent_exec_unsampled())
		agent_defer_final(0); /* a deferred child's samples: its file first */
	agent_mark_exec(1); /* cleared if the exec fails (agent.c) */
	if (agent_unwanted(t, envp))
		return without_agent(envp, out, cap);
	return build_env(envp, out, cap, 1);
}

/*
 * Sampling has ended here before a seccomp filter that would refuse the
 * agent's calls (seccomp.c): the filter stays with every program this
 * process execs or spawns, so none of them may start sampling.  Their
 * environment loses PROFIL_RECORD_DIR (the agent they load then idles
 * from its first instruction, agent.c); the rest is passed as given.
 */
static atomic_int stripping;

static char *const *strip_env(const struct exec_target *t, char *const envp[], char **out,
                              size_t cap)
{
	(void)t;
	size_t k = 0, dropped = 0;
	for (size_t i = 0; envp[i]; i++) {
		if (same_name(envp[i], RECORD_DIR)) {
			dropped++;
			continue;
		}
		if (k + 1 >= cap)
			return NULL; /* too large for the buffer: as it is */
		out[k++] = envp[i];
	}
	out[k] = NULL;
	return dropped ? out : NULL;
}

static char *const *guard_env(const struct exec_target *t, char *const envp[], char **out,
                              size_t cap)
{
	return agent_unwanted(t, envp) ? without_agent(envp, out, cap) : NULL;
}

/*
 * The recording is over, its recorder gone, and this process goes on (a
 * daemon or a background job the command left running): the programs it
 * runs from now on get no agent.  Nobody reads what they would record;
 * each paid for the agent's start, and under a profil installed at a
 * path with a space each one's loader complained on its stderr of the
 * agent's link in the recording's directory, gone with it (spawnenv.c).
 */
static char *const *over_env(const struct exec_target *t, char *const envp[], char **out,
                             size_t cap)
{
	(void)t;
	return without_agent(envp, out, cap);
}

void envfix_over(void)
{
	if (!agent_path[0]) /* the agent never started here: at load, alone */
		agent_path = selfreach_loaded_as();
	if (!atomic_load(&stripping))
		atomic_store(&exec_env_hook, over_env);
}

void envfix_unfollow(void)
{
	/* after envfix_stop() the strip stays: under the seccomp filter that
	 * made it, the check's open() might be what the filter kills for */
	if (!atomic_load(&stripping))
		atomic_store(&exec_env_hook, guard_env);
}

void envfix_stop(void)
{
	atomic_store(&stripping, 1);
	atomic_store(&exec_env_hook, strip_env);
}

/* Our posix_spawn and posix_spawnp: the same environment, then libc's. */
#define SPAWN_CAP 1024

static int spawn_with(spawn_fn *real, pid_t *pid, const char *file,
                      const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
                      char *const argv[], char *const envp[])
{
	char *buf[SPAWN_CAP];
	if (!real)
		return ENOSYS;
	char *const *e = NULL;
	struct exec_target t = {AT_FDCWD, file ? file : "", real == real_spawnp};
	if (envp && atomic_load(&stripping))
		e = strip_env(&t, envp, buf, SPAWN_CAP);
	else if (envp && (atomic_load(&exec_env_hook) == over_env || agent_unwanted(&t, envp)))
		e = without_agent(envp, buf, SPAWN_CAP);
	else if (atomic_load(&exec_env_hook) == fix_env && envp && !only_pid)
		e = build_env(envp, buf, SPAWN_CAP, 0);
	return real(pid, file, fa, attr, argv, e ? e : envp);
}

__attribute__((visibility("default"))) int
posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
            const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_with(real_spawn, pid, path, fa, attr, argv, envp);
}

__attribute__((visibility("default"))) int
posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
             const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn_with(real_spawnp, pid, file, fa, attr, argv, envp);
}

/* At load, in the constructor: libc's spawn functions, before anything
 * could call ours (they are needed whether or not we follow children). */
__attribute__((constructor(101))) static void envfix_resolve(void)
{
	real_spawn = (spawn_fn *)dlsym(RTLD_NEXT, "posix_spawn");
	real_spawnp = (spawn_fn *)dlsym(RTLD_NEXT, "posix_spawnp");
}

void envfix_init(char **env, int root_only)
{
	if (!real_spawn || !real_spawnp || !selfreach_loaded_as()[0])
		return;
	agent_path = selfreach_loaded_as();
	only_pid = root_only ? getpid() : 0;
	loadercheck_init();
	size_t used = 0;
	for (size_t i = 0; env && env[i] && nsaved < SAVED_MAX; i++) {
		size_t len = strlen(env[i]) + 1;
		const char *kept;
		if (strncmp(env[i], "PROFIL_", 7) != 0 || same_name(env[i], EXEC_CPU) ||
		    same_name(env[i], RINGREACH_ENV "=") || used + len > SAVED_BYTES ||
		    !(kept = base_keep(env[i], len)))
			continue;
		saved[nsaved++] = kept;
		used += len;
	}
	atomic_store(&exec_env_hook, fix_env);
}
