/*
 * perf_mapped.c - sigtrap events held by a mapping, not a descriptor.
 *
 * Why: a descriptor per sampled thread is one the program can see and
 * close.  CPython's test_pass_fds_redirected lists a child's descriptors
 * and found ours; a program may close every descriptor it does not know
 * (closefrom(), close_range(), CPython's close_fds in a forked child),
 * silently ending a thread's sampling, and a number we close at a stop
 * could by then be the program's.  An event lives as long as a mapping
 * of it does (the mapping holds its file), so each event's one metadata
 * page is mapped and its descriptor closed at once: nothing of ours is
 * left in the descriptor table.  Measured on 6.18 (bench/perf-engine.md):
 * traps go on after the close, none reach a forked child (the page is
 * MADV_DONTFORK, so the child holds no reference), none after munmap().
 *
 * What the descriptor gave and the mapping cannot:
 *   - the count: the handler weighs by the thread's CPU clock instead
 *     (sample.c, trap_weight());
 *   - a period change (PERF_EVENT_IOC_PERIOD): the event is replaced;
 *   - whether the thread is gone (F_GETOWN_EX): the thread's start time
 *     in /proc/self/task/TID/stat, kept from the open, tells a dead
 *     thread from a new one that got its number (not kept for threads
 *     our pthread_create hook made: their exit is seen by our hooks).
 * The page counts against perf_event_mlock_kb and then RLIMIT_MEMLOCK;
 * a thread whose page is refused gets a timer.
 *
 * Slots: an event is known by the index of its slot, which is its
 * sig_data with the slot's generation (engine_int.h) and its index in
 * perf_fd_state[], where other events use their descriptor number.
 * Engine lock held for all of these.
 */
#include "engine/perf_engine.h"
#include "engine/perf_trap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

/* A slot's mapping and its thread's start: perf_fd_state[s].page and
 * .start (engine_int.h). */
static int hint; /* where the search for a free slot starts */

static long page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? p : 4096;
}

static int slot_take(void)
{
	for (int i = 0; i < PERF_FD_MAX; i++) {
		int s = (hint + i) % PERF_FD_MAX;
		if (!perf_fd_state[s].page) {
			hint = s + 1;
			return s;
		}
	}
	errno = EMFILE;
	return -1;
}

/* The event for slot s on tid, enabled and mapped; its page, or NULL. */
static void *map_event(int s, pid_t tid, int64_t per)
{
	unsigned int gen = atomic_load(&perf_fd_state[s].gen) + 1;
	atomic_store(&perf_fd_state[s].gen, gen);
	long data = (long)((unsigned long)s | (unsigned long)gen << PERF_TRAP_FD_BITS);
	int fd = perf_probe_event(tid, per, 0, 1, data);
	if (fd < 0)
		return NULL;
	void *page = mmap(NULL, (size_t)page_size(), PROT_READ, MAP_SHARED, fd, 0);
	int e = errno;
	if (page != MAP_FAILED && (madvise(page, (size_t)page_size(), MADV_DONTFORK) != 0 ||
	                           ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) != 0)) {
		e = errno;
		munmap(page, (size_t)page_size());
		page = MAP_FAILED;
	}
	close(fd);
	errno = e;
	return page == MAP_FAILED ? NULL : page;
}

int perf_mapped_open(pid_t tid, int64_t per, int64_t cpu_now, int hooked)
{
	int s = slot_take();
	if (s < 0)
		return -1;
	/* Recognised by the handler before the first overflow can occur. */
	atomic_store(&perf_fd_state[s].base, cpu_now);
	atomic_store(&perf_trap_period, per);
	atomic_store(&perf_fd_state[s].tid, (int)tid);
	/* (15 us of /proc per thread: not for one our hooks made, whose
	 * exit they see, so its number is never taken for a new thread's;
	 * nor for the main thread, whose number no other thread can have
	 * while the process lives, and whose end the sweeper reads from
	 * the stat it reads anyway: timers_rescan()) */
	perf_fd_state[s].start = hooked || tid == getpid() ? 0 : engine_thread_start(tid);
	perf_fd_state[s].page = map_event(s, tid, per);
	if (!perf_fd_state[s].page) {
		atomic_store(&perf_fd_state[s].tid, -1);
		return -1;
	}
	return s;
}

/* Unmapped, the event is freed (a trap it queued may still come: the
 * handler drops it by its slot, perf_fd_state[].tid -1). */
void perf_mapped_close(int s)
{
	if (s < 0 || s >= PERF_FD_MAX || !perf_fd_state[s].page)
		return;
	atomic_store(&perf_fd_state[s].tid, -1);
	munmap(perf_fd_state[s].page, (size_t)page_size());
	perf_fd_state[s].page = NULL;
}

/* In a child: the page was not inherited (MADV_DONTFORK), so there is
 * nothing to unmap; only the slot is freed. */
void perf_mapped_forget(int s)
{
	if (s < 0 || s >= PERF_FD_MAX)
		return;
	atomic_store(&perf_fd_state[s].tid, -1);
	perf_fd_state[s].page = NULL;
}

/* A new event at the new period in the same slot, then the old one
 * unmapped: no ioctl without a descriptor. */
int perf_mapped_set_period(int s, int64_t per)
{
	if (s < 0 || s >= PERF_FD_MAX || !perf_fd_state[s].page) {
		errno = EBADF;
		return -1;
	}
	pid_t tid = (pid_t)atomic_load(&perf_fd_state[s].tid);
	atomic_store(&perf_trap_period, per);
	void *page = map_event(s, tid, per);
	if (!page)
		return -1;
	munmap(perf_fd_state[s].page, (size_t)page_size());
	perf_fd_state[s].page = page;
	return 0;
}

int perf_mapped_task_gone(int s)
{
	if (s < 0 || s >= PERF_FD_MAX || !perf_fd_state[s].page)
		return 0;
	pid_t tid = (pid_t)atomic_load(&perf_fd_state[s].tid);
	errno = 0;
	unsigned long long now = engine_thread_start(tid);
	if (now == 0)
		return errno == ENOENT;
	return perf_fd_state[s].start != 0 && now != perf_fd_state[s].start; /* 0: not kept */
}
