/*
 * spawnenv.c - the recorded command's environment, built in the record
 * process before the command starts.
 *
 * Why here and not in the child: the command is started by vfork(2)
 * (spawn.c says why), whose child shares our memory and may do no more
 * than exec; setenv() there would allocate in our heap.  So the whole
 * environment is made first: ours, with the agent's LD_PRELOAD entry and
 * the PROFIL_* variables that configure it put in or taken out, and
 * ASAN_OPTIONS as src/base/asanopt.h says.  None of it is put in our own
 * environment: a program the record process runs later (a debuginfod
 * client) must not find the agent there.  The one value only the child
 * knows, its pid (PROFIL_RECORD_ROOT: the agent of --no-children starts in
 * that process alone), is written by the child into room kept for it
 * (spawn_env_set_root()).
 */
#include "record_int.h"
#include "../../src/base/asanopt.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Room for a pid in decimal (at most 10 digits), overwritten in the child. */
#define ROOT_ROOM "0000000000"

static int name_is(const char *entry, const char *name)
{
	size_t n = strlen(name);
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* NAME=value (value NULL: the variable removed), replacing every entry
 * of that name; -1 when out of memory. */
static int env_set(struct spawn_env *e, const char *name, const char *value)
{
	size_t at = 0;
	for (size_t i = 0; i < e->n; i++)
		if (!name_is(e->v[i], name))
			e->v[at++] = e->v[i];
	e->n = at;
	e->v[at] = NULL;
	if (!value)
		return 0;
	if (e->nowned == SPAWN_ENV_OWNED)
		return -1;
	size_t len = strlen(name) + strlen(value) + 2;
	char *s = malloc(len);
	if (!s)
		return -1;
	snprintf(s, len, "%s=%s", name, value);
	e->owned[e->nowned++] = s;
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
	return 0;
}

/* ASAN_OPTIONS with verify_asan_link_order=0 (asanopt.h says why), the
 * user's own kept; unchanged when they name it or it would not fit. */
static int env_asan(struct spawn_env *e)
{
	const char *old = getenv("ASAN_OPTIONS");
	char v[4096];
	if (!asanopt_wanted(old) || asanopt_size(old) > sizeof v)
		return 0;
	asanopt_write(old, v);
	return env_set(e, "ASAN_OPTIONS", v);
}

void spawn_env_free(struct spawn_env *e)
{
	for (size_t i = 0; i < e->nowned; i++)
		free(e->owned[i]);
	free(e->v);
	memset(e, 0, sizeof *e);
}

int spawn_env_make(struct spawn_env *e, const struct record_opts *o, const char *preload,
                   const char *dir)
{
	size_t n = 0;
	while (environ && environ[n])
		n++;
	memset(e, 0, sizeof *e);
	/* each change takes out what it adds back: at most one entry more
	 * for each, and the terminating NULL */
	e->v = malloc((n + SPAWN_ENV_OWNED + 1) * sizeof *e->v);
	if (!e->v)
		return -1;
	if (n)
		memcpy(e->v, environ, n * sizeof *e->v);
	e->n = n;
	e->v[n] = NULL;
	char hz[16];
	snprintf(hz, sizeof hz, "%u", o->hz);
	if (env_set(e, "LD_PRELOAD", preload) != 0 || env_asan(e) != 0 ||
	    env_set(e, "PROFIL_RECORD_DIR", dir) != 0 ||
	    env_set(e, "PROFIL_RECORD_ROOT", ROOT_ROOM) != 0 || env_set(e, "PROFIL_HZ", hz) != 0 ||
	    /* unset: an outer recording's, when we run inside one */
	    env_set(e, "PROFIL_RECORD_NOCHILD", o->no_children ? "1" : NULL) != 0 ||
	    env_set(e, "PROFIL_UNWIND_CACHE", o->unwind_cache) != 0) {
		spawn_env_free(e);
		return -1;
	}
	for (size_t i = 0; i < e->nowned; i++)
		if (name_is(e->owned[i], "PROFIL_RECORD_ROOT"))
			e->root = e->owned[i] + sizeof "PROFIL_RECORD_ROOT";
	return 0;
}

void spawn_env_set_root(struct spawn_env *e, pid_t pid)
{
	char digits[sizeof ROOT_ROOM];
	size_t n = 0;
	unsigned long v = pid > 0 ? (unsigned long)pid : 0;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof digits - 1);
	for (size_t i = 0; i < n; i++)
		e->root[i] = digits[n - 1 - i];
	e->root[n] = '\0';
}

/* The agent named by PROFIL_AGENT, else beside our executable (the
 * build tree), or in ../lib/profil (installed). */
/*
 * The agent by a path LD_PRELOAD can carry to every program of the
 * command: absolute (a relative PROFIL_AGENT would be looked up from each
 * program's own directory), and without a space or colon, which separate
 * LD_PRELOAD's items: profil built in "~/my project/build" preloaded
 * "/home/.../my" and "project/build/libprofil-agent.so", with the
 * loader's two errors on the command's stderr, and profiled nothing.
 * Such a path is reached through a link in the recording's directory
 * (dir), made here; a program the command leaves running after the
 * recording (the directory gone) then starts others without the agent.
 * 0, or -1 with a message printed.
 */
int spawn_agent_carried(char *agent, size_t size, const char *dir)
{
	char abs[PATH_MAX];
	if (agent[0] != '/') {
		if (!realpath(agent, abs)) {
			fprintf(stderr, "profil record: %s: %s\n", agent, strerror(errno));
			return -1;
		}
		snprintf(agent, size, "%s", abs);
	}
	if (!strpbrk(agent, " \t\n:"))
		return 0;
	char link[PATH_MAX];
	int n = snprintf(link, sizeof link, "%s/libprofil-agent.so", dir);
	if (n < 0 || (size_t)n >= sizeof link || (size_t)n >= size || strpbrk(link, " \t\n:") ||
	    symlink(agent, link) != 0) {
		fprintf(stderr, "profil record: the agent's path (%s) has a space or colon, which "
		        "LD_PRELOAD cannot carry, and no link to it could be made in %s\n", agent,
		        dir);
		return -1;
	}
	snprintf(agent, size, "%s", link);
	return 0;
}

int spawn_find_agent(char *buf, size_t size)
{
	const char *env = getenv("PROFIL_AGENT");
	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return access(buf, R_OK);
	}
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	*slash = '\0';
	static const char *const where[] = {"%s/libprofil-agent.so",
	                                    "%s/../lib/profil/libprofil-agent.so"};
	for (size_t i = 0; i < 2; i++) {
		int w = snprintf(buf, size, where[i], self);
		if (w > 0 && (size_t)w < size && access(buf, R_OK) == 0)
			return 0;
	}
	return -1;
}
