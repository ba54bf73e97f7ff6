/*
 * rec-uring.c - CPU time spent by io_uring's worker threads: kernel
 * threads of this process ("iou-wrk-PID") that run no user code and block
 * every signal, so no sample can reach them (src/engine/ioworkers.c).
 *
 *   rec-uring probe         exit 0 if io_uring can be set up here, else 1
 *   rec-uring zero N        N reads of 1 MiB from /dev/zero, each forced to
 *                           a worker (IOSQE_ASYNC: the worker clears the
 *                           buffer, kernel CPU time of its own), one at a
 *                           time; the main thread only submits and waits
 *
 * The ring is used through the raw system calls (no liburing here), as
 * io_uring_enter(2) asks: a wait that a signal ends early (it runs the
 * thread's pending task work, where a due sample is raised) returns
 * EINTR, or the count submitted with no completion, so the completion
 * queue is checked, not the return value.  Prints "uring ok N MiB".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#define READ_SIZE (1u << 20)

struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int ring_open(struct ring *r)
{
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	r->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -1;
	size_t sq_size = p.sq_off.array + p.sq_entries * sizeof(unsigned);
	size_t cq_size = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	char *sq = mmap(NULL, sq_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
	                IORING_OFF_SQ_RING);
	char *cq = mmap(NULL, cq_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
	                IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof *r->sqes, PROT_READ | PROT_WRITE, MAP_SHARED,
	               r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -1;
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	r->cq_mask = *(unsigned *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* One read of len bytes from fd into buf, run by a worker; its result. */
static int ring_read(struct ring *r, int fd, void *buf, unsigned len, unsigned long *early)
{
	unsigned tail = *r->sq_tail, i = tail & *r->sq_mask;
	struct io_uring_sqe *s = &r->sqes[i];
	memset(s, 0, sizeof *s);
	s->opcode = IORING_OP_READ;
	s->fd = fd;
	s->addr = (unsigned long)buf;
	s->len = len;
	s->flags = IOSQE_ASYNC;
	r->sq_array[i] = i;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	unsigned submit = 1, head = *r->cq_head;
	while (__atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) == head) {
		long rc = syscall(__NR_io_uring_enter, r->fd, submit, 1, IORING_ENTER_GETEVENTS,
		                  NULL, 0);
		if (rc < 0 && errno != EINTR)
			return -errno;
		if (rc > 0)
			submit = 0;
		if (__atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE) == head)
			++*early; /* ended with no completion: a signal */
	}
	int res = r->cqes[head & r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

int main(int argc, char **argv)
{
	struct ring r;
	if (argc == 2 && strcmp(argv[1], "probe") == 0)
		return ring_open(&r) == 0 ? 0 : 1;
	if (argc != 3 || strcmp(argv[1], "zero") != 0)
		return 2;
	unsigned long n = strtoul(argv[2], NULL, 10), early = 0, mib = 0;
	static char buf[READ_SIZE];
	int zero = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	if (zero < 0 || ring_open(&r) != 0) {
		perror("rec-uring");
		return 1;
	}
	for (unsigned long k = 0; k < n; k++) {
		int got = ring_read(&r, zero, buf, READ_SIZE, &early);
		if (got != (int)READ_SIZE) {
			fprintf(stderr, "rec-uring: read %lu gave %d\n", k, got);
			return 1;
		}
		mib++;
	}
	printf("uring ok %lu MiB\n", mib);
	fprintf(stderr, "rec-uring: %lu waits ended early\n", early);
	return 0;
}
