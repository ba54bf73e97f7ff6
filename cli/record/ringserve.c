/*
 * ringserve.c - ring files for processes that cannot make their own: the
 * command's descendants that run as another user.
 *
 * The rings' directory is ours (cli/record/workdir.c), and an agent makes
 * its process's ring file in it.  A program that changed user and then
 * exec'd (runuser, setpriv, gosu and su-exec in containers' entrypoints,
 * a daemon's start script dropping root) cannot: it was not profiled.  So
 * the directory lets others through (mode 0711: they can reach a name in
 * it, not list it; ring files stay 0600), and such an agent asks here: a
 * datagram on the socket "<dir>/.rings" (mode 0666), from a socket of its
 * own (autobound: the kernel names it), saying
 *     PROFIL-RING <token> <size>
 * We make the file "<pid>.<n>.ring", named by the sender's pid as we see
 * it (SO_PASSCRED: the kernel's word, not the sender's), of that size,
 * and send its descriptor back (SCM_RIGHTS) with its name; the agent maps
 * it as if it had made it (agent/ringask.c).  The token, random, is in
 * the command's environment (PROFIL_RECORD_TOKEN), which only its
 * processes and root can read: a request without it, from anyone else
 * who can reach the socket, is dropped.  The socket signals SIGIO when a
 * request arrives, which ends the recorder's nap (record.c), so an agent
 * waits milliseconds, not a nap.
 *
 * A process in a mount namespace or root of its own (bwrap's and
 * Flatpak's private /dev, `unshare -m` with its own /dev/shm, a chroot)
 * does not see the directory at all: its agent made nothing, and a
 * sandboxed program was not profiled.  So a second socket, bound to an
 * abstract name (the directory's path after a NUL: abstract names belong
 * to the network namespace, not to any file system), takes a request
 *     PROFIL-DIR <token>
 * and answers with a descriptor of the directory (O_PATH): the agent
 * reaches the directory through it (agent/ringreach.c), and the rest goes
 * as for any process.  Both sockets take both requests.
 */
#include "record_int.h"
#include "../model/profile.h"
#include "../../src/base/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

/* A ring no agent asks for more than: header, 1 GiB of records (ring.h's
 * bound) and a module log of as much. */
#define RING_ASK_MAX ((uint64_t)RING_HEADER_SIZE + 2 * (uint64_t)RING_DATA_MAX)

static void woken(int sig)
{
	(void)sig; /* only ends a wait (record.c blocks it and waits for it) */
}

static int make_token(char *out, size_t size)
{
	unsigned char r[16];
	if (size < 2 * sizeof r + 1 || getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		return -1;
	for (size_t i = 0; i < sizeof r; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
	return 0;
}

int record_wake_by(int fd)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = woken;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGIO, &sa, NULL) != 0 || fcntl(fd, F_SETOWN, getpid()) != 0 ||
	    fcntl(fd, F_SETFL, O_NONBLOCK | O_ASYNC) != 0)
		return -1;
	return 0;
}

/* A socket of ours at a (length alen), signalling SIGIO on a request;
 * -1 if it cannot be made. */
static int serve_at(const struct sockaddr_un *a, socklen_t alen)
{
	int on = 1;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0 && (bind(fd, (const struct sockaddr *)a, alen) != 0 ||
	                setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof on) != 0 ||
	                record_wake_by(fd) != 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The abstract socket: "\0" and the directory's path (no NUL at the end;
 * agent/ringask.c makes the same name).  -1 if there is none. */
static int serve_abstract(const char *dir)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	size_t n = strlen(dir);
	if (n + 1 > sizeof a.sun_path)
		return -1;
	memcpy(a.sun_path + 1, dir, n);
	return serve_at(&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
}

int ringserve_open(struct images *set)
{
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	int n = snprintf(a.sun_path, sizeof a.sun_path, "%s/.rings", set->dir);
	if (n < 0 || (size_t)n >= sizeof a.sun_path || make_token(set->token, sizeof set->token))
		return -1;
	int fd = -1;
	if ((fd = serve_at(&a, sizeof a)) < 0 || chmod(a.sun_path, 0666) != 0 ||
	    chmod(set->dir, 0711) != 0) {
		if (fd >= 0)
			close(fd);
		set->token[0] = '\0';
		return -1;
	}
	set->rings_abs_fd = serve_abstract(set->dir) + 1; /* without it, as before */
	setenv("PROFIL_RECORD_TOKEN", set->token, 1);
	return fd;
}

struct request {
	struct credmsg m; /* the sender's pid and address */
	uint64_t size;    /* of the ring asked for; 0: the directory is */
};

/* A note from an agent, "PROFIL-SAY <token> <text>" (agent/ringask.c
 * ringask_tell()), kept for notes.c when the token is ours; whether text
 * was one. */
static int note(struct images *set, const char *text, const struct credmsg *m)
{
	char got[64];
	int end = 0;
	if (sscanf(text, "PROFIL-SAY %63s %n", got, &end) != 1 || !end)
		return 0;
	if (m->pid && !(m->flags & MSG_TRUNC) && strcmp(got, set->token) == 0 && text[end])
		notes_add(set, m->pid, text + end);
	return 1;
}

/* One datagram: 1 for a request with our token, -1 for one to drop (or
 * a note, kept), 0 when none is left. */
static int take(int fd, struct images *set, struct request *r)
{
	char text[600], got[64];
	const char *token = set->token;
	unsigned long long size = 0;
	int end = 0;
	int got_one = credrecv(fd, text, sizeof text, &r->m);
	if (got_one <= 0)
		return got_one;
	if (note(set, text, &r->m))
		return -1;
	r->size = 0;
	if (!r->m.pid || (r->m.flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    r->m.fromlen <= sizeof(sa_family_t))
		return -1;
	if (sscanf(text, "PROFIL-DIR %63s%n", got, &end) == 1 && !text[end])
		return strcmp(got, token) == 0 ? 1 : -1;
	end = 0;
	if (sscanf(text, "PROFIL-RING %63s %llu%n", got, &size, &end) != 2 || text[end] ||
	    strcmp(got, token) != 0 || size < RING_HEADER_SIZE + 4096 || size > RING_ASK_MAX)
		return -1;
	r->size = size;
	return 1;
}

/* "<pid>.<n>.ring" with the first free n, made and sized: its descriptor,
 * its name in name[NAME_MAX + 1]. */
static int make_ring(const char *dir, const struct request *r, char *name)
{
	char path[PATH_MAX];
	for (unsigned n = 0; n < 10000; n++) {
		snprintf(name, NAME_MAX + 1, "%u.%u.ring", r->m.pid, n);
		snprintf(path, sizeof path, "%s/%s", dir, name);
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd >= 0 && ftruncate(fd, (off_t)r->size) != 0) {
			close(fd);
			unlink(path);
			return -1;
		}
		return fd;
	}
	return -1;
}

static int answer(int sock, const struct request *r, int ring, const char *name)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	memset(&ctl, 0, sizeof ctl);
	struct iovec iov = {(void *)name, strlen(name)};
	struct msghdr m;
	memset(&m, 0, sizeof m);
	m.msg_name = (void *)&r->m.from;
	m.msg_namelen = r->m.fromlen;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = ctl.buf;
	m.msg_controllen = sizeof ctl.buf;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &ring, sizeof ring);
	/* its agent waits for this, and gives up after its wait */
	return sendmsg(sock, &m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 ? -1 : 0;
}

/* A ring file made for r and sent: 0, or -1 (nothing is left of it). */
static int serve_ring(struct images *set, int sock, const struct request *r)
{
	char name[NAME_MAX + 1];
	int ring = make_ring(set->dir, r, name);
	if (ring < 0)
		return -1;
	int sent = answer(sock, r, ring, name);
	close(ring);
	if (sent != 0) {
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", set->dir, name);
		unlink(path); /* nobody will write its header */
		return -1;
	}
	/* the file is named by the pid we see; its header will say the one
	 * its process sees, which differs in a PID namespace */
	nspid_note(set, name, r->m.pid, nspid_of(r->m.pid)); /* it waits: alive */
	return 0;
}

/* The directory itself, for an agent that cannot see it (a mount
 * namespace or root of its own): a descriptor that only reaches it, with
 * the access its mode gives the agent's user and no more. */
static void serve_dir(const struct images *set, int sock, const struct request *r)
{
	int dir = open(set->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir >= 0) {
		(void)answer(sock, r, dir, ".");
		close(dir);
	}
}

static void serve(struct images *set, int sock)
{
	struct request r;
	int got;
	while ((got = take(sock, set, &r)) != 0) {
		if (got < 0)
			continue;
		if (r.size)
			(void)serve_ring(set, sock, &r);
		else
			serve_dir(set, sock, &r);
	}
}

void ringserve_drain(struct images *set)
{
	if (set->rings_fd > 0)
		serve(set, set->rings_fd - 1);
	if (set->rings_abs_fd > 0)
		serve(set, set->rings_abs_fd - 1);
}

void ringserve_close(struct images *set)
{
	if (set->rings_fd > 0)
		close(set->rings_fd - 1);
	if (set->rings_abs_fd > 0)
		close(set->rings_abs_fd - 1);
	set->rings_fd = set->rings_abs_fd = 0;
}
