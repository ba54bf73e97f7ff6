/*
 * test-descriptors.c - issue 9: the program's descriptors are its own.
 *
 * The library's helper thread reads /proc every sweep (100 ms).  Whatever
 * it opens must not take a number the program is about to use, must not
 * show in a listing of the program's descriptors, and it must hold no
 * reference to the program's files (a pipe's write end kept open would
 * withhold end of file from the reader).  The sweeper has a descriptor
 * table of its own for this (src/engine/sweeper.c); on the timer engine,
 * which these tests choose: the perf engine's descriptors are the
 * program's by nature and its sweeps share the table.
 */
#include "safety.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>

#define WATCH_S 1.5 /* 15 sweeps */

static void start_on_timers(void)
{
	setenv("PROFIL_ENGINE", "timer", 1);
	static unsigned short buf[2];
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
}

/*
 * It used to open and close its listing each time, so for a moment it
 * held the lowest free number: a program between closing one of its
 * descriptors and dup2()ing something back onto it (CPython's
 * test_swap_std_fds_with_one_closed does it with 0, 1 and 2) had its new
 * descriptor closed by our closedir().  Seen open 1,687-1,741 times in
 * 1.5 s before the fix.
 */
TEST_IMPL(safety_sweeper_never_takes_program_fd_number)
{
	int k = open("/dev/null", O_RDONLY);
	ASSERT(k >= 0);
	close(k); /* k: the number the program's next open() would get */
	start_on_timers();
	const double start = mono_now();
	unsigned long checks = 0, taken = 0;
	while (mono_now() < start + WATCH_S) {
		for (int i = 0; i < 1000; i++, checks++)
			taken += fcntl(k, F_GETFD) != -1;
	}
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("descriptor %d seen open %lu times in %lu checks\n", k, taken, checks);
	ASSERT_EQ(taken, 0);
	return 0;
}

/* The program's open descriptors as a bit set (numbers below 256), the
 * listing's own left out. */
static int list_fds(unsigned char set[32])
{
	memset(set, 0, 32);
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		int fd = atoi(de->d_name);
		if (de->d_name[0] != '.' && fd != dirfd(d) && fd < 256)
			set[fd / 8] |= (unsigned char)(1u << fd % 8);
	}
	closedir(d);
	return 0;
}

/*
 * Holding the /proc files open at a high number instead (tried, then
 * reverted) showed them to programs that list their descriptors:
 * CPython's test_pass_fds_redirected.  While profiling, every listing
 * equals the one before profiling started.
 */
TEST_IMPL(safety_program_fd_listing_unchanged)
{
	unsigned char before[32], now[32];
	ASSERT_OK(list_fds(before));
	start_on_timers();
	const double start = mono_now();
	unsigned long lists = 0, differ = 0;
	while (mono_now() < start + WATCH_S) {
		ASSERT_OK(list_fds(now));
		lists++;
		differ += memcmp(before, now, sizeof now) != 0;
	}
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("%lu of %lu listings differ from the one before profiling\n", differ, lists);
	ASSERT_EQ(differ, 0);
	return 0;
}

/*
 * A table of its own must not be a copy of the program's: the copy would
 * keep every file open that the program closes.  A pipe made before
 * profiling starts, its write end closed while profiling: the reader
 * sees end of file at once.
 */
TEST_IMPL(safety_sweeper_holds_no_program_descriptor)
{
	int p[2];
	ASSERT_OK(pipe(p));
	start_on_timers();
	struct timespec nap = {0, 300 * 1000000L}; /* its first sweeps */
	nanosleep(&nap, NULL);
	close(p[1]);
	struct pollfd pf = {p[0], POLLIN, 0};
	int ready;
	while ((ready = poll(&pf, 1, 5000)) < 0 && errno == EINTR)
		;
	char c;
	ssize_t n = ready == 1 ? read(p[0], &c, 1) : -1;
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT_EQ(ready, 1);
	ASSERT_EQ(n, 0); /* end of file: no write end left anywhere */
	close(p[0]);
	return 0;
}
