/*
 * ringfile.c - creating the file a process image samples into.
 *
 * One file per process image: a forked child and an exec'd program each
 * get a new one, so each file has one set of modules and one pid.  The
 * file lives in a directory `profil record` made (on tmpfs when it can),
 * and is mapped MAP_SHARED: the record process reads it while we run and
 * after we die, however we die.  Pages of the record area are touched only
 * as samples fill them, and given back once read (the recorder punches
 * them out: cli/record/records.c), so a large area costs little.  On a
 * full file system a first write to a page raises SIGBUS: the header's
 * page is asked for before it is written (agent_ring_room()).
 */
#include "agent.h"
#include "../src/base/base.h"
#include "../src/base/ring.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>

size_t agent_read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = '\0';
	return (size_t)n;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Asked first, the kernel says ENOMEM or EFAULT where a write would have
 * raised SIGBUS.  A kernel without the request (EINVAL): yes, as before
 * it; such a kernel's full tmpfs still raises SIGBUS. */
int agent_ring_room(struct ring_file *rf, uint64_t at, uint64_t len)
{
	uint64_t lo = at & ~(uint64_t)4095;
	if (!len)
		return 1;
	return madvise((char *)rf + lo, at + len - lo, MADV_POPULATE_WRITE) == 0 || errno == EINVAL;
}

/* An exclusive new file: "<pid>.<n>.ring" with the first free n, its
 * name in name[NAME_MAX + 1]. */
static int open_new(const char *dir, char *name)
{
	char path[4096];
	for (unsigned n = 0; n < 10000; n++) {
		base_fmt(name, NAME_MAX + 1, "%d.%u.ring", (int)getpid(), n);
		base_fmt(path, sizeof path, "%s/%s", dir, name);
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

static void fill_header(struct ring_file *rf, size_t data_size, size_t modlog_size,
                        const char *args, size_t nargs)
{
	rf->version = RING_VERSION;
	rf->header_size = RING_HEADER_SIZE;
	rf->data_offset = RING_HEADER_SIZE;
	rf->data_size = data_size;
	rf->modlog_offset = RING_HEADER_SIZE + data_size;
	rf->modlog_size = modlog_size;
	rf->pid = (uint32_t)getpid();
	rf->ppid = (uint32_t)getppid();
	rf->start_ns = base_clock_ns(CLOCK_REALTIME); /* not the vDSO's: fmt.c */
	if (!args) {
		(void)agent_read_small("/proc/self/cmdline", rf->cmdline, sizeof rf->cmdline);
	} else { /* the start's, read for agent_is_zygote(): truncated alike */
		size_t n = nargs < sizeof rf->cmdline - 1 ? nargs : sizeof rf->cmdline - 1;
		memcpy(rf->cmdline, args, n);
		rf->cmdline[n] = '\0';
	}
	/* The calling thread's name is the process's here (the main thread at
	 * load, a forked child's only thread): no /proc file to open.  Left
	 * empty if the call failed (it cannot, on Linux). */
	char comm[16] = {0};
	(void)prctl(PR_GET_NAME, comm);
	base_fmt(rf->comm, sizeof rf->comm, "%s", comm);
	/* The magic last: a reader that sees it sees a complete header. */
	uint64_t magic;
	memcpy(&magic, RING_MAGIC, sizeof magic);
	__atomic_store_n((uint64_t *)rf->magic, magic, __ATOMIC_RELEASE);
}

struct ring_file *ringfile_create(const char *dir, size_t data_size, size_t modlog_size,
                                  const char *args, size_t nargs)
{
	if (data_size > RING_DATA_MAX || (data_size & (data_size - 1)) || data_size < 4096) {
		errno = EINVAL;
		return NULL;
	}
	size_t total = RING_HEADER_SIZE + data_size + modlog_size;
	char name[NAME_MAX + 1];
	int fd = open_new(dir, name), asked = 0;
	if (fd < 0 && errno == EACCES) { /* another user's directory: ringask.c */
		fd = ringask(dir, total, name);
		asked = fd >= 0;
		if (fd < 0 && errno != ENOENT)
			errno = EACCES; /* what the caller tells the user about */
	}
	if (fd < 0)
		return NULL;
	void *p = MAP_FAILED;
	if (asked || ftruncate(fd, (off_t)total) == 0) /* made to size if asked */
		p = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int e = errno;
	close(fd);
	if (p != MAP_FAILED && !agent_ring_room(p, 0, RING_HEADER_SIZE)) {
		/* A full file system (a small /dev/shm): filling in the header
		 * would have killed the program with SIGBUS.  The file goes, so
		 * that the recorder reads no half-made ring. */
		munmap(p, total);
		p = MAP_FAILED;
		e = ENOSPC;
		char path[4096];
		base_fmt(path, sizeof path, "%s/%s", dir, name);
		unlink(path);
	}
	if (p == MAP_FAILED) {
		errno = e;
		return NULL;
	}
	struct ring_file *rf = p;
	if (!asked) /* else the recorder knows our pid (ringask.c) */
		nspid_tell(dir, name); /* before the header is complete: nspid.c */
	fill_header(rf, data_size, modlog_size, args, nargs);
	return rf;
}

/* Record area and module log sizes: 8 MiB holds about 350,000 samples
 * without stacks, over a second of 64 busy threads at 1000 Hz between
 * two reads by the record process (every 20 ms). */
#define DATA_SIZE (8u << 20)
#define MODLOG_SIZE (1u << 20)

/* Under a limit of address space (RLIMIT_AS, ulimit -v), the ring is a
 * 64th of it, at least 64 KiB (a few hundred samples with stacks: the
 * recorder reads every 20 ms), the log a 256th: a program that ran in 20
 * MiB failed to make its threads once 9 MiB of it were the ring's. */
#define AS_SHARE_DATA 64u
#define AS_SHARE_LOG 256u
#define RING_MIN (64u << 10)

static size_t pow2_floor(size_t v)
{
	size_t p = 1;
	while (p <= v / 2)
		p *= 2;
	return p;
}

struct ring_file *agent_new_ring(const char *args, size_t nargs)
{
	size_t data = DATA_SIZE, log = MODLOG_SIZE;
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		size_t d = pow2_floor((size_t)(rl.rlim_cur / AS_SHARE_DATA));
		size_t l = (size_t)(rl.rlim_cur / AS_SHARE_LOG) & ~(size_t)4095;
		data = d < RING_MIN ? RING_MIN : d < data ? d : data;
		log = l < RING_MIN ? RING_MIN : l < log ? l : log;
	}
	ringreach_check(agent_dir, agent_dir_size);
	return ringfile_create(agent_dir, data, log, args, nargs);
}
