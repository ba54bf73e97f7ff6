/*
 * traced.c - a program that another one traces is not sampled.
 *
 * Why: every signal sent to a traced process stops it for its tracer
 * first.  gdb stops the program it runs at any real-time signal and shows
 * it ("received signal SIG64"), so the first sample halted the program a
 * test suite debugs in batch mode (gdb -batch -ex run -ex bt); strace
 * prints a line for each one into the output a test may compare, and the
 * stops make the CPU time the samples weigh another program's.  So a
 * process traced when the agent starts in it, or when it is forked, is
 * left alone: no ring, no timers, no signal.  It says so to `profil
 * record` in a file "<pid>.traced" of the recording's directory, which
 * the recorder reports at the end (cli/record/traced.c): one line,
 *   <comm> TAB <tracer pid> TAB <tracer comm>
 * A tracer that attaches later (gdb -p, strace -p) is seen by the helper
 * thread's next sweep (agent.c: a read of /proc/self/status, 11 us every
 * 100 ms): sampling ends there, the samples before stay, and the file is
 * "<pid>.attached" (same line).  gdb stopped the process at every sample
 * (SIGTRAP, which it does not pass on) before; now at most at those of
 * that first tenth of a second.
 */
#include "agent.h"
#include "../src/base/base.h"
#include "../src/engine/perf_engine.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

pid_t agent_tracer(void)
{
	int seccomp;
	long tracer;
	perf_probe_status(&seccomp, &tracer);
	return tracer > 0 ? (pid_t)tracer : 0;
}

/* A /proc comm file's name into buf, without its newline; 0 when it
 * cannot be read (buf then empty). */
static size_t read_comm(const char *path, char *buf, size_t size)
{
	size_t n = agent_read_small(path, buf, size);
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

void agent_note_left(const char *dir, const char *kind, pid_t tracer)
{
	char path[4096 + 32], comm[17] = {0}, tcomm[64] = "-", line[160];
	if (tracer > 0) {
		base_fmt(path, sizeof path, "/proc/%d/comm", (int)tracer);
		if (read_comm(path, tcomm, sizeof tcomm) == 0)
			base_fmt(tcomm, sizeof tcomm, "?"); /* gone already */
	}
	/* the process's name (its main thread's): this may run in the
	 * helper thread, whose own name is what the program was called when
	 * the helper started */
	if (read_comm("/proc/self/comm", comm, sizeof comm) == 0)
		(void)prctl(PR_GET_NAME, comm);
	int len = base_fmt(line, sizeof line, "%s\t%d\t%s\n", comm, (int)tracer, tcomm);
	base_fmt(path, sizeof path, "%s/%d.%s", dir, (int)getpid(), kind);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return; /* the recording is over, or not ours to write in */
	if (len > 0)
		(void)!write(fd, line, (size_t)len < sizeof line ? (size_t)len : sizeof line - 1);
	close(fd);
}

void agent_note_traced(const char *dir, pid_t tracer, int attached)
{
	agent_note_left(dir, attached ? "attached" : "traced", tracer);
}
