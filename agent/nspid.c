/*
 * nspid.c - telling the recorder our pid when we run in a PID namespace
 * of our own.
 *
 * A ring file is named by, and its header carries, the pid getpid()
 * gives, which in a PID namespace (unshare --pid, bwrap, a build sandbox
 * such as bazel's) is the namespace's own number: the first process of
 * every sandbox is 1, and the recorder took two sandboxes' programs, both
 * pid 1, for one process and added them up.  The kernel translates a
 * sender's pid into the receiver's namespace when a Unix socket passes
 * credentials (SCM_CREDENTIALS; the recorder's socket has SO_PASSCRED, so
 * every datagram carries them without our asking).  So a process whose
 * PID namespace is not the recorder's (PROFIL_RECORD_PIDNS: the inode of
 * the recorder's /proc/self/ns/pid) sends one datagram, its ring file's
 * name and its namespace's inode (by which the recorder matches the
 * pids of the children it reaps: cli/record/reaped.c), to the recorder's
 * socket "<dir>/.pids" before the file's header
 * is complete; the recorder drains the socket before it opens new ring
 * files (cli/record/nspid.c), so it knows the file's pid as it sees it
 * when it opens the file.  A full queue is waited on, up to SEND_WAIT_MS
 * (each datagram wakes the recorder); when the datagram cannot go, the
 * file keeps the namespace's pid.  A process in the recorder's namespace
 * pays one stat().
 */
#include "agent.h"
#include "../src/base/base.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#define SEND_WAIT_MS 500

static unsigned long recorder_pidns; /* 0: not told, nothing is sent */

void nspid_init(void)
{
	const char *s = profil_getenv("PROFIL_RECORD_PIDNS");
	recorder_pidns = s ? base_strtoull(s, NULL, 10) : 0;
}

/* Whether this process's PID namespace is not the recorder's; a /proc
 * that cannot tell counts as another (the datagram costs little, and the
 * recorder ignores a pid it already sees). */
static int other_namespace(unsigned long *ns)
{
	struct stat st;
	*ns = 0;
	if (!recorder_pidns)
		return 0;
	if (stat("/proc/self/ns/pid", &st) != 0)
		return 1;
	*ns = (unsigned long)st.st_ino;
	return *ns != recorder_pidns;
}

void nspid_tell(const char *dir, const char *ring_name)
{
	unsigned long ns;
	if (!other_namespace(&ns))
		return;
	char text[NAME_MAX + 32]; /* the name, and our namespace for the
	                           * recorder's matching of our reaps */
	int len = ns ? base_fmt(text, sizeof text, "%s %lu", ring_name, ns)
	             : base_fmt(text, sizeof text, "%s", ring_name);
	if (len < 0 || (size_t)len >= sizeof text)
		return;
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	int n = base_fmt(a.sun_path, sizeof a.sun_path, "%s/.pids", dir);
	if (n < 0 || (size_t)n >= sizeof a.sun_path)
		return;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	/* The recorder's queue holds ten datagrams (net.unix.max_dgram_qlen):
	 * a full one is waited on, the recorder being woken by each datagram,
	 * but not for long (a recorder that is gone or stuck). */
	struct timeval wait = {0, SEND_WAIT_MS * 1000};
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
	(void)!sendto(fd, text, (size_t)len, MSG_NOSIGNAL,
	              (const struct sockaddr *)&a, sizeof a);
	close(fd);
}
