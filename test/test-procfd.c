/*
 * test-procfd.c - the agent's reading of the name it was preloaded by
 * when that is a descriptor's (agent/procfd.h, used by selfreach.c): what
 * is such a name, and what is not.  The cases sscanf("/proc/%15[^/]/fd/%d")
 * took, before, are taken the same; it also took a sign or spaces before
 * N, which no name the agent gives has.
 */
#include "runner.h"
#include "../agent/procfd.h"

#include <stdio.h>

TEST_IMPL(procfd_names_are_taken_apart)
{
	static const struct {
		const char *name;
		int ok;
		long pid;
		int fd;
	} cases[] = {
		{"/proc/self/fd/3", 1, 0, 3},
		{"/proc/self/fd/1023", 1, 0, 1023},
		{"/proc/4242/fd/17", 1, 4242, 17},
		{"/proc/1/fd/0", 1, 1, 0},
		{"/proc/self/fd/", 0, 0, 0},
		{"/proc/self/fd/3x", 0, 0, 0},
		{"/proc/self/fd/3/", 0, 0, 0},
		{"/proc/self/fd/-1", 0, 0, 0},
		{"/proc/x/fd/3", 0, 0, 0},
		{"/proc//fd/3", 0, 0, 0},
		{"/proc/selfish/fd/3", 0, 0, 0},
		{"/proc/self/fdx/3", 0, 0, 0},
		{"/proc/self/fd", 0, 0, 0},
		{"/proc/12345678901/fd/3", 0, 0, 0},
		{"/proc/self/fd/12345678901", 0, 0, 0},
		{"/proc/self/task/1/fd/3", 0, 0, 0},
		{"proc/self/fd/3", 0, 0, 0},
		{"/usr/lib/libprofil-agent.so", 0, 0, 0},
		{"", 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		long pid = -7;
		int fd = -7;
		int ok = procfd_parse(cases[i].name, &pid, &fd);
		if (ok != cases[i].ok || (ok && (pid != cases[i].pid || fd != cases[i].fd)))
			FAIL_AT("\"%s\": %d, pid %ld, fd %d; want %d, %ld, %d", cases[i].name, ok, pid,
			        fd, cases[i].ok, cases[i].pid, cases[i].fd);
		if (!ok && (pid != -7 || fd != -7))
			FAIL_AT("\"%s\" refused but wrote pid %ld, fd %d", cases[i].name, pid, fd);
	}
	return 0;
}
