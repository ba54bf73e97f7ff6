/*
 * ringread.c - a young image's ring file read through a descriptor, not
 * a mapping (images.h images_read_one()).
 *
 * Why: mapping a ring, touching its pages and unmapping it costs the
 * kernel page table work that some hypervisors make dear.  On a PVM guest
 * (shadow page tables) a ring read through a mapping cost the recorder
 * 0.3-0.4 ms (its header's first touch, the module log's, the records',
 * the unmapping at retire.c), where the reads themselves are a few
 * microseconds: a shell loop of 300 /bin/true cost the recorder 0.12 s
 * while it ran, 5% of the command's CPU.  Most images are short: a
 * build's, a shell script's.  So an image is read with pread() while it
 * is young, and mapped (records.c's reader) once it has lived
 * ADOPT_AFTER_NS, has had ADOPT_AFTER_BYTES of records read, or when
 * YOUNG_MAX images are young already (each holds a descriptor).
 *
 * A young image's file is not written: the records read are not zeroed
 * and tail stays where it was (0), which the writers do not miss until
 * they have filled the ring (8 MiB by default; ADOPT_AFTER_BYTES is 64
 * KiB).  records_adopt() catches up at the mapping: pages given back,
 * tail published.
 *
 * Ordering without a mapping's atomics.  A read() copies bytes in no
 * promised order, so what the agent publishes by a release store is read
 * in two steps, the second issued after the first returned (a system
 * call orders them): the header's magic, then the header; the module
 * log's length, then its bytes; the records from the reader's place up to
 * head, whose committed ones (nonzero header word) are then read again
 * and taken from the second copy, complete since their commit was seen
 * before it was made.  A committed record does not change until tail
 * passes it.  A short read (the file cut short) drops the image, as a
 * fault in the mapping does.
 */
#include "images.h"
#include "record_int.h"
#include "../model/profile.h"
#include "../../src/base/ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define YOUNG_MAX 256
#define ADOPT_AFTER_NS 1000000000LL
#define ADOPT_AFTER_BYTES (64u << 10)
/* The largest record a writer reserves: a sample's or a forked child's
 * header and RING_MAX_PCS words, with room to spare. */
#define RECORD_MAX ((uint64_t)(RING_MAX_PCS + 64) * 8)

static size_t young; /* images holding a descriptor */

static int read_exact(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t r = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int ringread_room(void)
{
	return young < YOUNG_MAX;
}

int ringread_open(struct image *im, int fd, size_t len)
{
	struct ring_file hc;
	if (read_exact(fd, &hc, sizeof hc, 0) != 0 || memcmp(hc.magic, RING_MAGIC, 8) != 0)
		return 0; /* the agent has not finished its header */
	if (read_exact(fd, &hc, sizeof hc, 0) != 0) /* after the magic: complete */
		return 0;
	im->maplen = len;
	images_take_header(im, &hc);
	if (!im->broken) {
		im->rfd = fd + 1;
		im->young_since_ns = images_now_ns();
		young++;
	}
	return 1;
}

void ringread_close(struct image *im)
{
	if (!im->rfd)
		return;
	close(im->rfd - 1);
	im->rfd = 0;
	young--;
}

/* [at, at + len) of the record area (wrapping at its end) into buf. */
static int read_span(const struct image *im, unsigned char *buf, uint64_t at, uint64_t len)
{
	uint64_t size = im->data_size, off = at & (size - 1);
	uint64_t first = len < size - off ? len : size - off;
	int fd = im->rfd - 1;
	return read_exact(fd, buf, first, RING_HEADER_SIZE + off) != 0 ||
	       (first < len && read_exact(fd, buf + first, len - first, RING_HEADER_SIZE) != 0)
	           ? -1 : 0;
}

/* Bytes from buf's start that are whole committed records starting
 * before limit, in parts of first and len - first bytes (records never
 * cross the ring's end); a record whose size is out of bounds is
 * counted, for records_take() to refuse. */
static uint64_t committed(const unsigned char *buf, uint64_t first, uint64_t len, uint64_t limit)
{
	uint64_t at = 0, end = first;
	while (at < limit) {
		if (at == end && end < len)
			end = len; /* the part after the ring's end */
		uint32_t hdr;
		memcpy(&hdr, buf + at, sizeof hdr);
		uint64_t bytes = (uint64_t)RING_HDR_WORDS(hdr) * 8;
		if (hdr == 0)
			break;
		if (bytes < 8 || bytes > end - at)
			return end;
		at += bytes;
	}
	return at;
}

/* The buffer young rings are read into, kept from read to read (the
 * record process is single-threaded): one made for each read was a
 * calloc(), 4.9 MB of them over a build's recording, each a fresh block
 * whose pages the kernel zeroed and faulted in. */
static unsigned char *scratch(size_t len)
{
	static unsigned char *buf;
	static size_t cap;
	if (len > cap) {
		size_t want = cap ? cap : 4096;
		while (want < len)
			want *= 2;
		free(buf);
		buf = prof_xrealloc(NULL, want, 1);
		cap = want;
	}
	return buf;
}

/* The committed records from im->consumed on; how many were taken. */
static size_t take_records(struct image *im, uint64_t head)
{
	uint64_t size = im->data_size, tail = im->consumed, limit = (head - tail) & ~(uint64_t)7;
	if (head <= tail || limit == 0 || limit > size)
		return 0; /* nothing, or a scribbled index: nothing to take */
	/* Whole words only (records are, from tail, itself a multiple of 8):
	 * a scribbled head left a record header read past the buffer's end
	 * (fuzz-ring under ASan).  And past head by the largest record: a
	 * writer gives back what its reservation did not use by moving head
	 * back (sample_write.c sample_ring_commit()), so the next record can
	 * start below the head read and end above it (a recording's ring
	 * dropped as "record size out of bounds" in CI). */
	uint64_t len = limit + RECORD_MAX < size ? limit + RECORD_MAX : size;
	uint64_t off = tail & (size - 1), first = len < size - off ? len : size - off;
	unsigned char *buf = scratch(len);
	size_t n = 0;
	uint64_t ready = 0;
	if (read_span(im, buf, tail, len) != 0 ||
	    ((ready = committed(buf, first, len, limit)) != 0 && read_span(im, buf, tail, ready) != 0)) {
		images_drop(im, "truncated while being read"); /* cut short under us */
		ready = 0;
	}
	uint64_t first_ready = ready < first ? ready : first;
	for (uint64_t at = 0; at < ready && !im->broken;) {
		int second = at >= first_ready;
		uint64_t base = second ? first : 0;
		uint64_t span = second ? ready - first : first_ready;
		size_t got = records_take(im, buf + base, at - base, span);
		if (!got)
			break;
		at += got;
		im->consumed = tail + at;
		n++;
	}
	return n;
}

/* Mapped from now on: records.c's reader, with the pages and tail caught
 * up (records_adopt()).  Stays young when the mapping is refused. */
static void adopt(struct image *im)
{
	void *p = mmap(NULL, im->maplen, PROT_READ | PROT_WRITE, MAP_SHARED, im->rfd - 1, 0);
	if (p == MAP_FAILED)
		return;
	im->rf = p;
	ringread_close(im);
	records_adopt(im);
}

size_t ringread_poll(struct image *im)
{
	struct ring_file hc;
	int fd = im->rfd - 1;
	if (!im->rfd || read_exact(fd, &hc, sizeof hc, 0) != 0) {
		if (im->rfd)
			images_drop(im, "truncated while being read");
		return 0;
	}
	uint64_t mlen = hc.modlog_len;
	if (mlen > im->modlog_size) {
		images_drop(im, "module log length out of bounds");
		return 0;
	}
	if (mlen > im->modlog_read) { /* after its length: the bytes it covers */
		uint64_t n = mlen - im->modlog_read;
		char *log = prof_xcalloc(n, 1);
		if (read_exact(fd, log, n, im->modlog_offset + im->modlog_read) != 0)
			images_drop(im, "truncated while being read");
		else
			records_take_modules(im, log, mlen);
		free(log);
	}
	if (im->broken)
		return 0;
	uint64_t from = im->consumed, head = hc.head;
	size_t n = 0;
	/* tail is not ours to read while young (it stays 0 in the file), but
	 * a process that scribbled on it is dropped as the mapped reader
	 * drops it */
	if (hc.tail % 8 != 0 && hc.tail < head)
		images_drop(im, "ring tail misaligned");
	else
		n = take_records(im, head);
	im->last_read = im->consumed - from;
	records_take_state(im, &hc);
	/* by age only while its process lives: a gone one waits to be
	 * retired, and a mapping would only be unmapped again */
	int64_t now = im->polled_ns = images_now_ns();
	if (!im->broken && (im->consumed >= ADOPT_AFTER_BYTES ||
	                    (!im->gone_since_ns && now - im->young_since_ns >= ADOPT_AFTER_NS)))
		adopt(im);
	return n;
}
