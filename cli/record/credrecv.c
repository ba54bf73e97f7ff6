/*
 * credrecv.c - one datagram from a socket of ours that agents write to,
 * with the pid of the process that sent it as the kernel tells us.
 *
 * The recorder's two sockets in its rings' directory (nspid.c's ".pids",
 * ringserve.c's ".rings") trust nothing a datagram says about who sent
 * it: they are bound with SO_PASSCRED, so the kernel attaches the
 * sender's credentials (SCM_CREDENTIALS), the pid translated into our
 * PID namespace.  What each caller accepts (a truncated text, a
 * truncated control buffer, an unnamed sender) is its own check, on the
 * flags and lengths returned here.
 */
#include "images.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

int credrecv(int fd, char *text, size_t size, struct credmsg *out)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = {text, size - 1}; /* room for the terminating NUL */
	struct msghdr m;
	memset(&m, 0, sizeof m);
	memset(out, 0, sizeof *out);
	m.msg_name = &out->from;
	m.msg_namelen = sizeof out->from;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = ctl.buf;
	m.msg_controllen = sizeof ctl.buf;
	ssize_t n = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return errno == EINTR ? -1 : 0;
	text[n] = '\0';
	out->fromlen = m.msg_namelen;
	out->flags = m.msg_flags;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			struct ucred u;
			memcpy(&u, CMSG_DATA(c), sizeof u);
			out->pid = (uint32_t)u.pid;
		}
	return 1;
}
