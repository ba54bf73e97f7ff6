/*
 * ringask.c - a ring file from the recorder, for a process that cannot
 * create one in the recorder's directory.
 *
 * The directory is the recorder's, and a program that changed user before
 * it exec'd (runuser, setpriv, gosu, a daemon dropping root) may not
 * create files in it.  The recorder then makes the file for us: we send
 * "PROFIL-RING <token> <size>" to its socket "<dir>/.rings" from a socket
 * of our own, which the kernel names (autobind), and it answers there
 * with the file's name and its descriptor (SCM_RIGHTS), opened for
 * reading and writing (cli/record/ringserve.c).  The token comes from
 * PROFIL_RECORD_TOKEN, read at load: the environment a program clears
 * (env -i) no longer has it.  A recorder that does not answer within
 * ASK_WAIT_MS (an older one, or one gone) leaves us unprofiled, as
 * before; the wait is paid once, and only by such a process.
 *
 * A process in a mount namespace or root of its own (bwrap, Flatpak,
 * `unshare -m`, chroot) may not see the directory at all.  Then the
 * recorder is asked "PROFIL-DIR <token>" on its abstract socket, whose
 * name is the directory's path (abstract names belong to the network
 * namespace, which such sandboxes mostly share), and answers with a
 * descriptor of the directory (ringask_dir(); ringreach.c names the
 * directory by it).  With no recorder bound there (the recording is
 * over) the request fails at once, so a descendant that outlives the
 * recording does not wait.
 *
 * What an agent has to say (agent_say(): it could not make its ring, it
 * was not profiled) is told to the recorder the same way, "PROFIL-SAY
 * <token> <text>" (ringask_tell()), which says it on its own stderr,
 * once for every process that said the same: written on the program's
 * stderr, it went where the program sends its errors (a file the program
 * chose, a test's expected output), one line a process.
 */
#include "agent.h"
#include "../src/base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#define ASK_WAIT_MS 2000

static char token[64]; /* PROFIL_RECORD_TOKEN at load; "" when none */

void ringask_init(void)
{
	const char *t = profil_getenv("PROFIL_RECORD_TOKEN");
	if (t && strlen(t) < sizeof token)
		strcpy(token, t);
}

/* Our socket, named by the kernel so that the recorder can answer. */
static int own_socket(void)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a;
	memset(&a, 0, sizeof a);
	a.sun_family = AF_UNIX;
	if (fd >= 0 && bind(fd, (const struct sockaddr *)&a, sizeof(sa_family_t)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The recorder's socket in dir, "<dir>/.rings", into *a: its length, or
 * 0 when the name is too long. */
static socklen_t rings_addr(const char *dir, struct sockaddr_un *a)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	int n = base_fmt(a->sun_path, sizeof a->sun_path, "%s/.rings", dir);
	return n < 0 || (size_t)n >= sizeof a->sun_path ? 0 : (socklen_t)sizeof *a;
}

/* Its abstract socket, named by dir's path after a NUL (no NUL at the
 * end: cli/record/ringserve.c binds the same), into *a: its length, or 0
 * when the name is too long. */
static socklen_t abstract_addr(const char *dir, struct sockaddr_un *a)
{
	size_t n = strlen(dir);
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	if (n + 1 > sizeof a->sun_path)
		return 0;
	memcpy(a->sun_path + 1, dir, n);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* Sends text to the recorder at a (alen bytes of it). */
static int send_to(int fd, const struct sockaddr_un *a, socklen_t alen, const char *text,
                   int flags)
{
	size_t len = strlen(text);
	return sendto(fd, text, len, flags | MSG_NOSIGNAL, (const struct sockaddr *)a, alen) ==
	                       (ssize_t)len ? 0 : -1;
}

static int send_request(int fd, const char *dir, size_t size)
{
	struct sockaddr_un a;
	char text[128];
	socklen_t alen = rings_addr(dir, &a);
	int len = base_fmt(text, sizeof text, "PROFIL-RING %s %zu", token, size);
	if (!alen || len < 0 || (size_t)len >= sizeof text) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return send_to(fd, &a, alen, text, 0);
}

/* The answer: the ring's descriptor, its name in name[NAME_MAX + 1]. */
static int take_answer(int fd, char *name)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {name, NAME_MAX};
	struct msghdr m;
	memset(&m, 0, sizeof m);
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = ctl.buf;
	m.msg_controllen = sizeof ctl.buf;
	struct pollfd p = {fd, POLLIN, 0};
	int r;
	while ((r = poll(&p, 1, ASK_WAIT_MS)) < 0 && errno == EINTR)
		;
	if (r == 0)
		errno = ETIMEDOUT;
	ssize_t n = r > 0 ? recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) : -1;
	if (n < 0)
		return -1;
	name[n] = '\0';
	int ring = -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
	    c->cmsg_len == CMSG_LEN(sizeof(int)))
		memcpy(&ring, CMSG_DATA(c), sizeof ring);
	if (ring >= 0 && (n == 0 || memchr(name, '/', (size_t)n))) {
		close(ring);
		ring = -1;
	}
	if (ring < 0)
		errno = EPROTO;
	return ring;
}

int ringask(const char *dir, size_t size, char *name)
{
	if (!*token) {
		errno = EACCES; /* no recorder of ours to ask */
		return -1;
	}
	int fd = own_socket();
	if (fd < 0)
		return -1;
	int ring = send_request(fd, dir, size) == 0 ? take_answer(fd, name) : -1;
	int e = errno;
	close(fd);
	struct stat st;
	if (ring >= 0 && (fstat(ring, &st) != 0 || !S_ISREG(st.st_mode) ||
	                  (uint64_t)st.st_size < (uint64_t)size)) {
		close(ring);
		ring = -1;
		e = EPROTO;
	}
	errno = e;
	return ring;
}

int ringask_dir(const char *dir)
{
	struct sockaddr_un a;
	char text[128], name[NAME_MAX + 1];
	socklen_t alen = abstract_addr(dir, &a);
	if (!alen || !*token) {
		errno = !alen ? ENAMETOOLONG : EACCES;
		return -1;
	}
	base_fmt(text, sizeof text, "PROFIL-DIR %s", token);
	int fd = own_socket();
	if (fd < 0)
		return -1;
	int got = send_to(fd, &a, alen, text, 0) == 0 ? take_answer(fd, name) : -1;
	int e = errno;
	close(fd);
	struct stat st;
	if (got >= 0 && (fstat(got, &st) != 0 || !S_ISDIR(st.st_mode))) {
		close(got);
		got = -1;
		e = EPROTO;
	}
	errno = e;
	return got;
}

/* One datagram to the recorder, never waiting: to the directory's socket,
 * else to the abstract one. */
static int tell_at(int fd, const char *dir, const char *text)
{
	struct sockaddr_un a;
	socklen_t alen = rings_addr(dir, &a);
	if (alen && send_to(fd, &a, alen, text, MSG_DONTWAIT) == 0)
		return 0;
	alen = abstract_addr(dir, &a);
	return alen ? send_to(fd, &a, alen, text, MSG_DONTWAIT) : -1;
}

int ringask_tell(const char *dir, const char *what)
{
	char text[RINGASK_TELL_MAX];
	int n = base_fmt(text, sizeof text, "PROFIL-SAY %s %s", token, what);
	if (!*token || !*dir || n < 0 || (size_t)n >= sizeof text)
		return -1;
	int e = errno, fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int told = fd >= 0 ? tell_at(fd, dir, text) : -1;
	if (fd >= 0)
		close(fd);
	errno = e;
	return told;
}
