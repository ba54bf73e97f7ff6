/*
 * records.c - one image's ring read (images.h images_read_one()): its
 * module log, then its committed records.
 *
 * The reader side of src/base/ring.h: consume committed records from tail,
 * zero them (a writer's commit is a nonzero header in zeroed space) and
 * advance tail, so the profiled process can keep writing into a ring of
 * fixed size.  Every size is checked against the mapping before use, and
 * a record that breaks a rule drops the image (images_drop()); the caller
 * guards the reads against a file truncated under them.
 */
#include "images.h"
#include "record_int.h"
#include "../model/profile.h"
#include "../../src/base/ring.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

/* name (size bytes from another process) as t's: cut at 15, control
 * bytes shown as '?'. */
static void take_name(struct thread_name *t, const char *name, size_t size)
{
	size_t n = 0;
	for (; n + 1 < size && n + 1 < sizeof t->name && name[n]; n++)
		t->name[n] = (unsigned char)name[n] < 0x20 || name[n] == 0x7f ? '?' : name[n];
	t->name[n] = '\0';
}

/* A thread's name as its process wrote it at the thread's end (ring.h
 * RING_THREAD): its last, so it wins over the one noted at its first
 * sample. */
static void name_thread(struct image *im, const struct ring_thread *r)
{
	int added;
	take_name(image_thread_entry(im, r->tid, &added), r->name, sizeof r->name);
}

/* A thread's name at its first sample, until its end record (above)
 * says its last: the main thread's is the one its agent wrote into the
 * ring's header at the start (the comm of the program or of the forked
 * parent), others' from /proc.  Not /proc for the main thread: opening a
 * process's first /proc file costs the kernel some 50 us, and a build's
 * recording read one per compiler process (12% of the record process's
 * CPU).  Only a main thread renamed and then killed before its end
 * record keeps the start's name. */
static struct thread_name *note_thread(struct image *im, uint32_t tid)
{
	int added;
	struct thread_name *t = image_thread_entry(im, tid, &added);
	if (!added || im->ns_pid) /* its tids are its namespace's */
		return t;
	if (tid == im->pid && im->comm[0]) {
		take_name(t, im->comm, sizeof im->comm);
		return t;
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%u/task/%u/comm", im->pid, tid);
	if (record_read_small(path, 0, t->name, sizeof t->name) >= 0)
		t->name[strcspn(t->name, "\n")] = '\0';
	return t;
}

/* Weight a thread ended with (ring.h RING_REPEAT): on the stack of its
 * last sample here, or at [unsampled] if it had none. */
static void take_repeat(struct image *im, const struct ring_repeat *r)
{
	uint32_t weight = r->weight; /* once: the two sums must agree */
	int added;
	struct thread_name *t = image_thread_entry(im, r->tid, &added);
	if (t->last) {
		agg_bump(&im->samples, t->last, weight);
	} else {
		uint64_t key[3] = {r->tid, 0, RING_PC_UNSAMPLED};
		agg_add(&im->samples, key, 3, weight);
	}
	im->weight += weight;
}

/* A forked child's word (ring.h RING_FORKED) of bytes bytes; 0 when it
 * is malformed (the image dropped). */
static int take_forked(struct image *im, const struct ring_forked *r, uint64_t bytes)
{
	uint64_t npcs = (bytes - sizeof *r) / 8;
	if (bytes < sizeof *r || npcs > RING_MAX_PCS ||
	    (r->state != RING_FORKED_DEFERRED && r->state != RING_FORKED_EXECING)) {
		images_drop(im, "forked-child record malformed");
		return 0;
	}
	im->forked = prof_xrealloc(im->forked, im->nforked + 1, sizeof *im->forked);
	struct forked_word *w = &im->forked[im->nforked++];
	memset(w, 0, sizeof *w);
	w->pid = r->pid;
	w->execing = r->state == RING_FORKED_EXECING;
	w->modgen = r->modgen;
	if (npcs) {
		w->npcs = (uint32_t)npcs;
		w->pcs = prof_xcalloc(npcs, sizeof *w->pcs);
		memcpy(w->pcs, r->pcs, npcs * 8);
	}
	return 1;
}

/* One committed record at data[off] of a span of size bytes (the ring's
 * record area, or what ringread.c read of it); returns its size, 0 to
 * stop. */
size_t records_take(struct image *im, unsigned char *data, uint64_t off, uint64_t size)
{
	uint32_t hdr = __atomic_load_n((uint32_t *)(data + off), __ATOMIC_ACQUIRE);
	if (hdr == 0)
		return 0;
	uint64_t bytes = (uint64_t)RING_HDR_WORDS(hdr) * 8;
	if (bytes < 8 || bytes > size - off) {
		images_drop(im, "record size out of bounds");
		return 0;
	}
	if (RING_HDR_TYPE(hdr) == RING_SAMPLE) {
		const struct ring_record *r = (const void *)(data + off);
		uint64_t npcs = (bytes - sizeof *r) / 8;
		if (bytes < sizeof *r + 8 || npcs > RING_MAX_PCS) {
			images_drop(im, "sample record malformed");
			return 0;
		}
		uint64_t key[2 + RING_MAX_PCS];
		key[0] = r->tid;
		key[1] = r->modgen;
		memcpy(key + 2, r->pcs, npcs * 8);
		uint32_t weight = r->weight; /* once: the two sums must agree */
		size_t at = agg_add(&im->samples, key, (uint32_t)(2 + npcs), weight);
		im->weight += weight;
		note_thread(im, r->tid)->last = at;
	} else if (RING_HDR_TYPE(hdr) == RING_THREAD) {
		if (bytes != sizeof(struct ring_thread)) {
			images_drop(im, "thread record malformed");
			return 0;
		}
		name_thread(im, (const struct ring_thread *)(data + off));
	} else if (RING_HDR_TYPE(hdr) == RING_REAPED) {
		if (bytes != sizeof(struct ring_reaped)) {
			images_drop(im, "reaped-child record malformed");
			return 0;
		}
		const struct ring_reaped *r = (const void *)(data + off);
		im->reaped = prof_xrealloc(im->reaped, im->nreaped + 1, sizeof *im->reaped);
		im->reaped[im->nreaped].pid = r->pid;
		im->reaped[im->nreaped++].cpu_ns = r->cpu_ns;
	} else if (RING_HDR_TYPE(hdr) == RING_REPEAT) {
		if (bytes != sizeof(struct ring_repeat)) {
			images_drop(im, "repeat record malformed");
			return 0;
		}
		take_repeat(im, (const struct ring_repeat *)(data + off));
	} else if (RING_HDR_TYPE(hdr) == RING_FORKED) {
		if (!take_forked(im, (const void *)(data + off), bytes))
			return 0;
	} else if (RING_HDR_TYPE(hdr) != RING_SKIP) {
		images_drop(im, "unknown record type");
		return 0;
	}
	memset(data + off, 0, bytes);
	return (size_t)bytes;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Maps the pages of [p, p + len) that are not mapped yet in one system
 * call.  Each ring page the reader touches (to read it and zero it) was
 * a page fault; where a fault is dear (a VM whose page faults cost 14 us,
 * ten system calls' price) a build's rings cost the recorder 2,000 of
 * them.  Older kernels say EINVAL, and the reads fault as before; a
 * truncated file says EFAULT, and the read that follows is guarded. */
static void populate(unsigned char *p, uint64_t len)
{
	static uintptr_t page;
	if (!page)
		page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p & ~(page - 1);
	uintptr_t hi = ((uintptr_t)p + len + page - 1) & ~(page - 1);
	if (hi - lo > page) /* one page: its fault costs what the call does */
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
}

/* The written span of the ring, [tail, head) taken modulo its size. */
static void populate_span(unsigned char *data, uint64_t size, uint64_t tail, uint64_t head)
{
	uint64_t len = head - tail, off = tail & (size - 1);
	if (tail >= head || len > size)
		return; /* nothing, or a scribbled index: left to the checks */
	uint64_t first = len < size - off ? len : size - off;
	populate(data + off, first);
	if (first < len)
		populate(data, len - first);
}

/*
 * Consumed records' pages go back to the file system: a ring's file keeps
 * every page the writers ever touched, so a process sampled for a minute
 * held its whole record area (8 MiB) of /dev/shm to its end, and a
 * container's 64 MiB /dev/shm was full with eight of them: the program's
 * own shared memory, and the next process's ring, were refused
 * (ENOSPC; before agent_ring_room(), SIGBUS).  MADV_REMOVE punches the
 * pages out of the file; a writer that reaches them again on its next lap
 * gets fresh zeroed pages (zero is what a consumed record must read), at
 * the price of a page fault in its handler every few dozen samples.
 *
 * Only whole pages the writers cannot reach are punched: those between
 * the tail they last saw and the new one, before the new one is stored
 * (stored first, a writer could reserve and write a page being punched).
 * So tail is published at a page boundary; the records read past it are
 * zeroed already and im->consumed says where the next read starts (the
 * writers lose sight of less than a page of free space).  A file system
 * that cannot punch (EOPNOTSUPP) keeps its pages and tail is published
 * where the reads end, as before.
 */
static uint64_t page_size(void)
{
	static uint64_t page;
	if (!page)
		page = (uint64_t)sysconf(_SC_PAGESIZE);
	return page;
}

static void give_back(struct image *im, unsigned char *data, uint64_t size, uint64_t from,
                      uint64_t to)
{
	uint64_t len = to - from, off = from & (size - 1);
	if (len == 0 || len > size)
		return;
	uint64_t first = len < size - off ? len : size - off;
	if (madvise(data + off, first, MADV_REMOVE) != 0 ||
	    (first < len && madvise(data, len - first, MADV_REMOVE) != 0))
		im->keep_pages = 1;
}

/* Frees [published, tail) for the writers, its whole pages given back
 * first; returns the tail now published. */
static uint64_t publish(struct image *im, struct ring_file *rf, unsigned char *data,
                        uint64_t size, uint64_t published, uint64_t tail)
{
	uint64_t page = page_size();
	uint64_t to = tail & ~(page - 1);
	if (!im->keep_pages && to > published) {
		uint64_t from = (published + page - 1) & ~(page - 1);
		if (to > from)
			give_back(im, data, size, from, to);
	}
	if (im->keep_pages || size <= page) /* a ring of one page: nothing to punch */
		to = tail;
	if (to > published)
		atomic_store_explicit(&rf->tail, to, memory_order_release);
	return to > published ? to : published;
}

/* How often a long read frees space for the writers: they stop at a
 * full ring rather than wait. */
#define PUBLISH_STEP (64u << 10)

static size_t read_records(struct image *im)
{
	struct ring_file *rf = im->rf;
	unsigned char *data = (unsigned char *)rf + RING_HEADER_SIZE;
	uint64_t size = im->data_size, n = 0;
	uint64_t published = atomic_load_explicit(&rf->tail, memory_order_relaxed);
	uint64_t tail = published;
	if (im->consumed > published && im->consumed - published < page_size())
		tail = im->consumed; /* read past the page boundary published */
	uint64_t head = atomic_load_explicit(&rf->head, memory_order_acquire);
	uint64_t from = tail;
	/* Records are whole 8-byte words from 0, so only a process that
	 * scribbled on tail makes it odd (fuzz-ring: a record read at a
	 * misaligned address, which UBSan stops). */
	if (tail % 8 != 0 && tail < head)
		images_drop(im, "ring tail misaligned");
	else
		populate_span(data, size, tail, head);
	while (!im->broken && tail < head) {
		size_t got = records_take(im, data, tail & (size - 1), size);
		if (!got)
			break;
		tail += got;
		n++;
		im->consumed = tail;
		if (tail - published >= PUBLISH_STEP)
			published = publish(im, rf, data, size, published, tail);
	}
	publish(im, rf, data, size, published, tail);
	im->last_read = tail - from;
	records_take_state(im, rf);
	return n;
}

void records_take_state(struct image *im, struct ring_file *rf)
{
	im->lost = atomic_load(&rf->lost);
	im->signal = atomic_load(&rf->signal);
	im->execing = atomic_load(&rf->done) == RING_EXECING;
	uint32_t flags = atomic_load(&rf->flags);
	im->switched |= (flags & RING_FLAG_SWITCHED) != 0;
	im->faulted |= (flags & RING_FLAG_FAULTED) != 0;
	memcpy(im->engine, rf->engine, sizeof im->engine);
	im->engine[sizeof im->engine - 1] = '\0';
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	static const char digit[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) { /* not snprintf: 20 calls a module */
		out[2 * i] = digit[b[i] >> 4];
		out[2 * i + 1] = digit[b[i] & 15];
	}
	out[2 * n] = '\0';
}

static void read_modules(struct image *im)
{
	struct ring_file *rf = im->rf;
	const char *log = (const char *)rf + im->modlog_offset;
	uint64_t len = atomic_load_explicit(&rf->modlog_len, memory_order_acquire);
	if (len > im->modlog_size) {
		images_drop(im, "module log length out of bounds");
		return;
	}
	records_take_modules(im, log + im->modlog_read, len);
}

void records_take_modules(struct image *im, const char *at, uint64_t len)
{
	const uint64_t from = im->modlog_read; /* at holds the log from here */
	while (im->modlog_read + sizeof(struct ring_module) <= len) {
		/* A copy of the fixed part: the process may rewrite the record
		 * between our check of a size and its use. */
		struct ring_module mc;
		const struct ring_module *m = &mc;
		const char *rec = at + (im->modlog_read - from);
		const char *path = rec + sizeof mc;
		memcpy(&mc, rec, sizeof mc);
		if (m->size < sizeof *m || m->size > len - im->modlog_read ||
		    m->path_len >= m->size - sizeof *m || m->build_id_len > sizeof m->build_id) {
			images_drop(im, "module record malformed");
			return;
		}
		im->mods = prof_xgrow(im->mods, im->nmods, &im->capmods, 8, sizeof *im->mods);
		struct module_event *e = &im->mods[im->nmods++];
		e->load = m->event == RING_MODULE_LOAD;
		e->gen = m->gen;
		e->base = m->base, e->start = m->start, e->end = m->end;
		e->file_offset = m->file_offset;
		e->time_ns = m->time_ns;
		e->path = prof_xcalloc(m->path_len + 1, 1);
		memcpy(e->path, path, m->path_len);
		hex(m->build_id, m->build_id_len, e->build_id);
		im->modlog_read += m->size;
	}
}

/* A young image (ringread.c) now mapped at im->rf: what it read through
 * its descriptor was neither zeroed in the file nor published.  Its
 * whole pages are given back and tail published at the page below
 * im->consumed, as publish() leaves them; where pages cannot be given
 * back, the records read are zeroed and tail published at im->consumed.
 * Then read_records() goes on from im->consumed. */
void records_adopt(struct image *im)
{
	struct ring_file *rf = im->rf;
	unsigned char *data = (unsigned char *)rf + RING_HEADER_SIZE;
	uint64_t size = im->data_size, published = atomic_load(&rf->tail);
	if (published % 8 != 0) { /* scribbled since the last read */
		images_drop(im, "ring tail misaligned");
		return;
	}
	if (published >= im->consumed || im->consumed - published > size)
		return; /* nothing read while young, or a scribbled tail */
	uint64_t page = page_size(), to = im->consumed & ~(page - 1);
	if (to > published && !im->keep_pages && size > page)
		give_back(im, data, size, (published + page - 1) & ~(page - 1), to);
	if (im->keep_pages || size <= page) {
		for (uint64_t at = published; at < im->consumed; at += 8)
			__atomic_store_n((uint64_t *)(data + (at & (size - 1))), 0, __ATOMIC_RELAXED);
		to = im->consumed;
	}
	if (to > published)
		atomic_store_explicit(&rf->tail, to, memory_order_release);
}

size_t images_read_one(struct image *im)
{
	if (!im->rf)
		return ringread_poll(im); /* young: through its descriptor */
	read_modules(im); /* first: samples may name new modules */
	return im->broken ? 0 : read_records(im);
}
