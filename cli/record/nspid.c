/*
 * nspid.c - processes of other PID namespaces, named by the pids this
 * recorder sees.
 *
 * A ring file carries the pid its process had in its own PID namespace:
 * in a sandbox made by unshare --pid, bwrap or a build system (bazel's
 * actions each run in one), the first process is 1, and two sandboxes'
 * programs were taken for one process, their samples added up under
 * "pid 1", their threads' names read from our pid 1's /proc.  The agent
 * of such a process sends the name of its ring file to the socket made
 * here before the file's header is complete (agent/nspid.c); the kernel
 * hands us the sender's pid as we see it (SO_PASSCRED), and images_scan()
 * drains the socket before it opens new files, so a file is given its
 * pid here, and its parent's from /proc, as it is opened; each datagram
 * ends the recorder's nap (SIGIO), as the agent waits when the socket's
 * queue is full.  The agent
 * learns our namespace from PROFIL_RECORD_PIDNS, set here for the
 * command.
 */
#include "record_int.h"
#include "../model/profile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

int nspid_open(const char *dir)
{
	struct stat st;
	char ns[32];
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	int n = snprintf(a.sun_path, sizeof a.sun_path, "%s/.pids", dir);
	if (stat("/proc/self/ns/pid", &st) != 0 || n < 0 || (size_t)n >= sizeof a.sun_path)
		return -1; /* namespaced processes keep their own pids */
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int on = 1, size = 1 << 20; /* datagrams of many starts between two polls */
	if (fd < 0)
		return -1;
	if (bind(fd, (const struct sockaddr *)&a, sizeof a) != 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0) {
		close(fd);
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
	/* The queue holds net.unix.max_dgram_qlen datagrams (10 by default),
	 * whatever the buffer: more starts than that between two polls (a
	 * namespace's shell loop) were lost, and their files kept the
	 * namespace's pids (48 of 303 told).  The agent now waits for room,
	 * and each datagram wakes us to make it. */
	(void)record_wake_by(fd);
	snprintf(ns, sizeof ns, "%lu", (unsigned long)st.st_ino);
	setenv("PROFIL_RECORD_PIDNS", ns, 1);
	return fd;
}

/* One datagram: a ring file's name (no '/', ends ".ring"), then after a
 * space the inode of the sender's PID namespace (an older agent sent the
 * name alone), and its sender's pid here; 0 when there is none left. */
static int take_one(int fd, char *name, size_t size, uint32_t *pid, uint64_t *pidns)
{
	struct credmsg m;
	int r = credrecv(fd, name, size, &m);
	if (r <= 0)
		return r;
	char *sp = strchr(name, ' ');
	*pidns = 0;
	if (sp) {
		char *end;
		*sp = '\0';
		*pidns = strtoull(sp + 1, &end, 10);
		if (*end)
			*pidns = 0;
	}
	size_t l = strlen(name);
	*pid = m.pid;
	if (!m.pid || (m.flags & MSG_TRUNC) || strchr(name, '/') || l < 6 ||
	    strcmp(name + l - 5, ".ring") != 0)
		return -1; /* not one of ours: skipped */
	return 1;
}

void nspid_drain(struct images *set)
{
	char name[256];
	uint32_t pid;
	uint64_t pidns;
	int r;
	if (set->pids_fd <= 0)
		return;
	while ((r = take_one(set->pids_fd - 1, name, sizeof name, &pid, &pidns)) != 0) {
		if (r > 0)
			nspid_note(set, name, pid, pidns ? pidns : nspid_of(pid));
	}
}

void nspid_note(struct images *set, const char *name, uint32_t pid, uint64_t pidns)
{
	set->pids = prof_xrealloc(set->pids, set->npids + 1, sizeof *set->pids);
	set->pids[set->npids].name = prof_xstrdup(name);
	set->pids[set->npids].pidns = pidns;
	set->pids[set->npids++].pid = pid;
}

uint64_t nspid_of(uint32_t pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%u/ns/pid", pid);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Field 4 of /proc/<pid>/stat (after the command's closing parenthesis);
 * 0 when the process is gone. */
static uint32_t parent_of(uint32_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	unsigned ppid = 0;
	return p && sscanf(p, ") %*c %u", &ppid) == 1 ? ppid : 0;
}

void nspid_apply(const struct images *set, struct image *im, const char *name)
{
	for (size_t i = set->npids; i-- > 0;) {
		if (strcmp(set->pids[i].name, name) != 0 || set->pids[i].pid == im->pid)
			continue;
		im->ns_pid = im->pid;
		im->pidns = set->pids[i].pidns;
		im->pid = set->pids[i].pid;
		im->ppid = parent_of(im->pid);
		return;
	}
}

void nspid_free(struct images *set)
{
	for (size_t i = 0; i < set->npids; i++)
		free(set->pids[i].name);
	free(set->pids);
	if (set->pids_fd > 0)
		close(set->pids_fd - 1);
}
