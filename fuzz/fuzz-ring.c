/*
 * fuzz-ring.c - the record process's ring-file reader (cli/record/images.c,
 * records.c and build.c) on ring files a hostile process wrote (issue 15).
 *
 * A profiled process maps its ring file read-write and can put anything
 * in it, at any time.  The input describes a ring file image and what the
 * process scribbles on it later:
 *
 *   byte 0      layout: bits 0-1 data area 4096 << k bytes, bits 2-3 module
 *               log 0/4096/8192/4100 bytes, bit 4 keep the input's header
 *               as is (else its layout fields are made consistent, so the
 *               fuzzer gets past the header check), bit 5 head/tail kept
 *   120 bytes   the control block up to cmdline, then 40 bytes of cmdline
 *               and 16 of comm
 *   u16 n, n bytes    the start of the record area (zeros after)
 *   u16 n, n bytes    the start of the module log
 *   the rest    patches, applied to the mapped file after the first poll,
 *               before the second: {u16 offset/8, u8 length, bytes};
 *               length 0 truncates the file there (the reader's mapping
 *               then faults with SIGBUS past the end)
 *
 * The file goes in a directory of its own, as the agent's would, and the
 * real code finds it there (images_poll reads a directory), reads it
 * twice, builds the profile (record_build) and frees everything.
 */
#include "model/profile.h"
#include "record/images.h"
#include "record/record_int.h"
#include "../src/base/ring.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The control block's fields before cmdline come from the input. */
#define HEAD_BYTES offsetof(struct ring_file, cmdline)

static char dir[64], file[96];

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	snprintf(dir, sizeof dir, "/dev/shm/fuzz-ring.%d", (int)getpid());
	snprintf(file, sizeof file, "%s/1.ring", dir);
	return 0;
}

struct in {
	const uint8_t *p;
	size_t n;
};

static size_t take(struct in *in, void *dst, size_t want)
{
	size_t k = in->n < want ? in->n : want;
	memcpy(dst, in->p, k);
	in->p += k, in->n -= k;
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct in in = {data + 1, size - 1};
	uint8_t lay = data[0];
	static const uint64_t modlogs[] = {0, 4096, 8192, 4100};
	uint64_t dsize = 4096u << (lay & 3), msize = modlogs[(lay >> 2) & 3];
	size_t len = RING_HEADER_SIZE + dsize + msize;
	unsigned char *img = calloc(1, len);
	struct ring_file *rf = (struct ring_file *)img;
	take(&in, img, HEAD_BYTES);
	take(&in, rf->cmdline, 40);
	take(&in, rf->comm, sizeof rf->comm);
	if (!(lay & 16)) {
		memcpy(rf->magic, RING_MAGIC, 8);
		rf->version = RING_VERSION;
		rf->header_size = RING_HEADER_SIZE;
		rf->data_offset = RING_HEADER_SIZE;
		rf->data_size = dsize;
		rf->modlog_offset = RING_HEADER_SIZE + dsize;
		rf->modlog_size = msize;
	}
	if (!(lay & 32)) { /* records at the start, as a fresh ring has them */
		rf->tail = 0;
		rf->head = dsize;
		rf->modlog_len = msize;
	}
	uint16_t n = 0;
	take(&in, &n, 2);
	take(&in, img + RING_HEADER_SIZE, n < dsize ? n : dsize);
	n = 0;
	take(&in, &n, 2);
	take(&in, img + RING_HEADER_SIZE + dsize, n < msize ? n : msize);

	if (mkdir(dir, 0700) != 0)
		abort();
	int fd = open(file, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || pwrite(fd, img, len, 0) != (ssize_t)len)
		abort();
	free(img);

	struct images set;
	memset(&set, 0, sizeof set);
	set.dir = strdup(dir); /* images_free() frees it */
	images_poll(&set);
	/* the process scribbles while the reader is not looking */
	while (in.n >= 3) {
		uint16_t off8;
		uint8_t k;
		unsigned char buf[255];
		take(&in, &off8, 2);
		take(&in, &k, 1);
		size_t got = take(&in, buf, k);
		uint64_t off = (uint64_t)off8 * 8 % len;
		if (k == 0) { /* an empty patch: the process shrinks the file */
			if (ftruncate(fd, (off_t)off) != 0)
				abort();
			continue;
		}
		if (got > len - off)
			got = len - off;
		if (pwrite(fd, buf, got, (off_t)off) != (ssize_t)got)
			abort();
	}
	close(fd);
	images_poll(&set);
	struct profile *p = prof_new();
	record_build(p, &set);
	record_credit_exits(p, &set, 1000000, 1, 0, 0, 1); /* the forked words' paths */
	prof_free(p);
	images_free(&set); /* removes the file and the directory */
	unlink(file); /* when it was never taken for a ring file */
	rmdir(dir);
	return 0;
}
