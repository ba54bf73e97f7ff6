/*
 * helper_files.c - files the helper thread keeps open between its sweeps.
 *
 * Every sweep (100 ms) asks the kernel the same few questions through
 * files: whether a tracer has attached (/proc/self/status), the kernel's
 * sample-rate cap (/proc/sys/kernel/perf_event_max_sample_rate), whether
 * the recorder still holds its lock (the agent's ".lock").  Opening and
 * closing each of them every time was a third of the helper's CPU (the
 * path walks through /proc, measured with perf on a one-thread program:
 * openat 22%, close 6% of 180 us a sweep).  Kept open, a sweep reads them
 * again from offset 0 with pread(), which makes /proc generate the text
 * anew, or asks flock() on the same descriptor.
 *
 * Only where the helper has a descriptor table of its own (sweeper.c,
 * close_range(CLOSE_RANGE_UNSHARE)): there no number of the program's is
 * taken, nor shown to a program that lists its descriptors, and the files
 * close when the thread ends and its table goes.  Anywhere else (another
 * thread, a helper sharing the program's table) helper_file() answers -1
 * and the caller opens and closes the file as before.  Thread-local, so
 * the helper's own; a forked child's helper starts with none.
 */
#include "engine/engine_int.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* Descriptor + 1 per file (0: not open yet), and whether this thread is
 * a helper with a table of its own. */
static __thread int kept[HELPER_FILES] __attribute__((tls_model("initial-exec")));
static __thread int own_table __attribute__((tls_model("initial-exec")));

void helper_files_own_table(void)
{
	own_table = 1;
}

int helper_file(enum helper_file which, const char *path, int flags)
{
	if (!own_table || which < 0 || which >= HELPER_FILES)
		return -1;
	if (!kept[which]) {
		int fd = open(path, flags | O_CLOEXEC);
		if (fd < 0)
			return -1;
		kept[which] = fd + 1;
	}
	return kept[which] - 1;
}

ssize_t helper_file_read(int fd, char *buf, size_t size)
{
	size_t n = 0;
	ssize_t r;
	while (n < size - 1) {
		size_t want = size - 1 - n;
		if ((r = pread(fd, buf + n, want, (off_t)n)) <= 0)
			break;
		n += (size_t)r;
		/* These are /proc's files, whose text one read gives whole when
		 * it fits: a short read that ends a line is the end, without
		 * one more system call to hear 0. */
		if ((size_t)r < want && buf[n - 1] == '\n')
			break;
	}
	buf[n] = '\0';
	return n > 0 ? (ssize_t)n : -1;
}

ssize_t helper_read_status(char *buf, size_t size)
{
	int kept_fd = helper_file(HELPER_STATUS, "/proc/self/status", O_RDONLY);
	int fd = kept_fd >= 0 ? kept_fd : open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = helper_file_read(fd, buf, size);
	if (kept_fd < 0)
		close(fd);
	return n;
}

/* The text after "\nName:" and its blanks in buf (a status file's), or
 * NULL: callers parse the number there (strtol stops at its end). */
const char *status_field(const char *buf, const char *name)
{
	const char *at = strstr(buf, name);
	if (!at)
		return NULL;
	at += strlen(name);
	while (*at == ' ' || *at == '\t')
		at++;
	return at;
}
