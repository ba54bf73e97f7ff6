/*
 * perfmap.c - names for code made at run time, from /tmp/perf-PID.map.
 *
 * Why: a JIT's code lives in anonymous memory that no module covers, so
 * its samples could only be named by address, one "function" per pc.
 * JITs name that code in a text file, by a convention perf set: V8 (node
 * --perf-basic-prof), the JVM (-XX:+DumpPerfMapAtExit, or jcmd PID
 * Compiler.perfmap), CPython 3.12 (-X perf), LuaJIT and .NET write
 * /tmp/perf-PID.map, one function per line: "START SIZE NAME", START and
 * SIZE in hexadecimal (with or without 0x).  A pc in no module of its
 * process is looked up there once the command has ended (record_build()),
 * when every such file is complete: the JVM writes its file at exit.
 *
 * Trust: anyone can create a file of that name in /tmp, for any pid.  As
 * perf does, only a regular file (not a symbolic link) owned by us or by
 * root is read, and only one modified since the process started (a file
 * an earlier process with the same pid left behind is older).  Names are
 * the JIT's own text: control characters become '?', so that a report
 * printed on a terminal cannot be made to send it escape sequences.
 *
 * A process of another PID namespace writes /tmp/perf-<its pid there>.map
 * (candidate(), below).
 *
 * Overlaps: a JIT reuses the addresses of code it freed, and writes the
 * new code's line later in the file: the later line wins (reach.c's
 * intervals, each with its line's index).
 */
#include "symint.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PERFMAP_DIR "/tmp"
#define MAX_LINES (1u << 22) /* 4 M functions: far above any JIT's */

struct sym_perfmap {
	char *path;
	struct sym_perfmap_entry *v; /* in the file's order */
	size_t n;
	struct sym_reach spans;      /* idx: the entry's index in v */
};

/* Whether the file at fd may be trusted for a process started at
 * start_ns (CLOCK_REALTIME); if not, why in why. */
static int trusted(int fd, int64_t start_ns, char *why, size_t whylen)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "not a regular file");
		return 0;
	}
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		snprintf(why, whylen, "owned by uid %u, neither you nor root", (unsigned)st.st_uid);
		return 0;
	}
	int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (start_ns > 0 && mtime < start_ns - 1000000000) { /* a second's slack */
		snprintf(why, whylen, "older than the process (left by an earlier one?)");
		return 0;
	}
	return 1;
}

static char *clean_name(const char *s)
{
	size_t n = strcspn(s, "\r\n");
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	char *name = prof_xcalloc(n + 1, 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		name[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	return name;
}

/* One line into e; 0 if it is not "START SIZE NAME" with SIZE > 0. */
static int parse_line(const char *line, struct sym_perfmap_entry *e)
{
	char *end;
	errno = 0;
	uint64_t start = strtoull(line, &end, 16);
	if (end == line || (*end != ' ' && *end != '\t') || errno)
		return 0;
	const char *p = end;
	uint64_t size = strtoull(p, &end, 16);
	if (end == p || (*end != ' ' && *end != '\t') || errno || size == 0 ||
	    start + size < start)
		return 0;
	p = end + strspn(end, " \t");
	if (*p == '\0' || *p == '\n')
		return 0;
	e->start = start;
	e->end = start + size;
	e->name = clean_name(p);
	e->mapping_id = 0;
	return 1;
}

static void read_entries(struct sym_perfmap *pm, FILE *f)
{
	char *line = NULL;
	size_t cap = 0, room = 0;
	while (pm->n < MAX_LINES && getline(&line, &cap, f) > 0) {
		struct sym_perfmap_entry e;
		if (!parse_line(line, &e))
			continue;
		pm->v = prof_xgrow(pm->v, pm->n, &room, 256, sizeof *pm->v);
		if (sym_reach_add(&pm->spans, e.start, e.end, (int)pm->n) != 0)
			prof_oom();
		pm->v[pm->n++] = e;
	}
	free(line);
	if (sym_reach_finish(&pm->spans) != 0)
		prof_oom();
}

/* The map at path, when there is one: its descriptor, or -1 with why
 * said (empty when there is no such file). */
static int open_map(const char *path, int64_t start_ns, char *why, size_t whylen)
{
	why[0] = '\0';
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			snprintf(why, whylen, "a symbolic link");
		else if (errno != ENOENT)
			snprintf(why, whylen, "%s", strerror(errno));
		return -1;
	}
	if (!trusted(fd, start_ns, why, whylen)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * A process of another PID namespace (an unshare --pid, bwrap or build
 * sandbox) names its map by the pid it has there: looked for in its own
 * /tmp through /proc/PID/root while it still runs, else in ours, which
 * most sandboxes share.  (Two such processes with one pid in one /tmp
 * write the same file: the JITs' own conflict, which perf has too.)
 */
static int candidate(int i, uint32_t pid, uint32_t ns_pid, char *path, size_t size)
{
	if (i == 0)
		return snprintf(path, size, PERFMAP_DIR "/perf-%" PRIu32 ".map", pid) < (int)size;
	if (!ns_pid || ns_pid == pid)
		return 0;
	if (i == 1)
		return snprintf(path, size, "/proc/%" PRIu32 "/root" PERFMAP_DIR "/perf-%" PRIu32 ".map",
		                pid, ns_pid) < (int)size;
	return i == 2 && snprintf(path, size, PERFMAP_DIR "/perf-%" PRIu32 ".map", ns_pid) < (int)size;
}

struct sym_perfmap *sym_perfmap_load(uint32_t pid, uint32_t ns_pid, int64_t start_ns,
                                     char *path, size_t pathlen, char *why, size_t whylen)
{
	int fd = -1;
	why[0] = '\0';
	for (int i = 0; fd < 0 && !why[0] && candidate(i, pid, ns_pid, path, pathlen); i++)
		fd = open_map(path, start_ns, why, whylen);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	struct sym_perfmap *pm = prof_xcalloc(1, sizeof *pm);
	pm->path = prof_xstrdup(path);
	read_entries(pm, f);
	fclose(f);
	return pm;
}

const char *sym_perfmap_path(const struct sym_perfmap *pm)
{
	return pm->path;
}

struct sym_perfmap_entry *sym_perfmap_find(struct sym_perfmap *pm, uint64_t pc)
{
	const struct sym_span *s = pm ? sym_reach_latest(&pm->spans, pc) : NULL;
	return s ? &pm->v[s->idx] : NULL;
}

void sym_perfmap_free(struct sym_perfmap *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->n; i++)
		free(pm->v[i].name);
	free(pm->v);
	sym_reach_free(&pm->spans);
	free(pm->path);
	free(pm);
}
