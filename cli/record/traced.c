/*
 * traced.c - the processes the agent left alone because another program
 * traced them (a debugger, strace: agent/traced.c says why), told to the
 * user in one line at the end, so that a process missing from the profile
 * is not a mystery.  Each left a file "<pid>.traced" in the recording's
 * directory holding "<comm> TAB <tracer pid> TAB <tracer comm>"; one a
 * tracer attached to later, whose samples stop there, "<pid>.attached"
 * (a second line); a Chromium zygote, which must stay single-threaded
 * (agent/zygote.c), "<pid>.zygote" (a third; no tracer: 0); one that
 * installed a seccomp filter refusing calls the agent makes, whose
 * sampling ended just before (agent/seccomp.c), "<pid>.sandboxed" (a
 * fourth).
 */
#include "record_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SHOWN 3

struct traced {
	long pid, tracer;
	char comm[17], tcomm[17];
};

enum { AT_START, ATTACHED, ZYGOTE, SANDBOXED, KINDS };
static const char *const suffix[KINDS] = {".traced", ".attached", ".zygote", ".sandboxed"};

/* dir/name's line into *t, for a file of that kind; 0, or -1 when it is
 * not one of ours. */
static int read_note(const char *dir, const char *name, int kind, struct traced *t)
{
	char path[4096], line[160], *end;
	t->pid = strtol(name, &end, 10);
	if (end == name || strcmp(end, suffix[kind]) != 0 ||
	    snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
		return -1;
	if (record_read_small(path, O_NOFOLLOW, line, sizeof line) <= 0)
		return -1;
	char *tab = strchr(line, '\t');
	if (!tab)
		return -1;
	*tab++ = '\0';
	t->tracer = strtol(tab, &end, 10);
	if (*end == '\t')
		end++;
	end[strcspn(end, "\n")] = '\0';
	/* comms are at most 15 bytes (TASK_COMM_LEN); longer is cut */
	snprintf(t->comm, sizeof t->comm, "%.16s", line);
	snprintf(t->tcomm, sizeof t->tcomm, "%.16s", end);
	return 0;
}

/* The processes of one kind: their count, the first SHOWN into shown;
 * *root_seen, unless NULL, when root is one of them. */
static size_t collect(const char *dir, int kind, pid_t root, struct traced *shown,
                      int *root_seen)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	struct traced t;
	size_t n = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (read_note(dir, de->d_name, kind, &t) != 0)
			continue;
		if (root_seen) /* NULL: the caller does not ask */
			*root_seen |= t.pid == (long)root;
		if (n < SHOWN)
			shown[n] = t;
		n++;
	}
	closedir(d);
	return n;
}

static void list(const struct traced *shown, size_t n)
{
	for (size_t i = 0; i < n && i < SHOWN; i++) {
		fprintf(stderr, "%s %s [%ld]", i ? "," : "", shown[i].comm, shown[i].pid);
		if (shown[i].tracer > 0)
			fprintf(stderr, " by %s [%ld]", shown[i].tcomm, shown[i].tracer);
	}
	fprintf(stderr, "%s\n", n > SHOWN ? ", ..." : "");
}

int record_left_out(const char *dir, uint32_t pid)
{
	for (int kind = 0; kind < KINDS; kind++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%u%s", dir, pid, suffix[kind]);
		if (access(path, F_OK) == 0)
			return 1;
	}
	return 0;
}

size_t record_count_left(const char *dir)
{
	struct traced shown[SHOWN];
	size_t n = 0;
	for (int kind = 0; kind < KINDS; kind++)
		n += collect(dir, kind, 0, shown, NULL);
	return n;
}

int record_report_traced(const char *dir, pid_t root)
{
	struct traced shown[SHOWN];
	int root_traced = 0;
	size_t n = collect(dir, AT_START, root, shown, &root_traced);
	if (n) {
		fprintf(stderr, "profil record: %zu process%s not sampled: traced by another program "
		        "when %s started (a debugger would stop at every sample):", n,
		        n == 1 ? " was" : "es were", n == 1 ? "it" : "they");
		list(shown, n);
	}
	n = collect(dir, ATTACHED, root, shown, NULL);
	if (n) {
		fprintf(stderr, "profil record: %zu process%s sampled only until another program "
		        "attached to trace %s (a debugger would stop at every sample):", n,
		        n == 1 ? " was" : "es were", n == 1 ? "it" : "them");
		list(shown, n);
	}
	n = collect(dir, ZYGOTE, root, shown, NULL);
	if (n) {
		fprintf(stderr, "profil record: %zu Chromium zygote%s not sampled, nor the renderers "
		        "%s forked (a zygote stops when it finds a second thread; --no-zygote "
		        "--no-sandbox has every process sampled):", n, n == 1 ? " was" : "s were",
		        n == 1 ? "it" : "they");
		list(shown, n);
	}
	n = collect(dir, SANDBOXED, root, shown, NULL);
	if (n) {
		fprintf(stderr, "profil record: %zu process%s sampled only until %s installed a "
		        "seccomp filter that would refuse system calls the agent makes (nor are "
		        "the programs %s ran under it):", n, n == 1 ? " was" : "es were",
		        n == 1 ? "it" : "they", n == 1 ? "it" : "they");
		list(shown, n);
	}
	return root_traced;
}
