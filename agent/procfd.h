/*
 * procfd.h - "/proc/P/fd/N", the name the loader gives the agent when it
 * was preloaded through a descriptor (agent/selfreach.c), taken apart.
 *
 * By hand, not sscanf(): it runs in every process the agent is loaded
 * into, and scanf's code was four more pages to fault in at each start
 * (a page fault costs 20-30 us on a PVM guest).  Header-only, so that
 * test/test-procfd.c checks this very code.
 */
#ifndef PROFIL_AGENT_PROCFD_H
#define PROFIL_AGENT_PROCFD_H

#include <stddef.h>
#include <string.h>

/* The decimal number that is all of s[0, len) (digits only, at most 9
 * of them), or -1. */
static inline long procfd_number(const char *s, size_t len)
{
	long v = 0;
	if (len == 0 || len > 9)
		return -1;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

/* name "/proc/P/fd/N", P a number or "self": 1 with P in *pid (0 for
 * self) and N in *fd; 0 for any other name. */
static inline int procfd_parse(const char *name, long *pid, int *fd)
{
	if (strncmp(name, "/proc/", 6) != 0)
		return 0;
	const char *who = name + 6, *slash = strchr(who, '/');
	if (!slash || strncmp(slash, "/fd/", 4) != 0)
		return 0;
	size_t wlen = (size_t)(slash - who);
	long p = wlen == 4 && strncmp(who, "self", 4) == 0 ? 0 : procfd_number(who, wlen);
	long n = procfd_number(slash + 4, strlen(slash + 4));
	if (p < 0 || n < 0)
		return 0;
	*pid = p;
	*fd = (int)n;
	return 1;
}

#endif
