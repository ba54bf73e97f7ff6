/*
 * images.c - the ring files while the command runs (images.h): each
 * opened once its header is complete, read through its descriptor while
 * it is young (ringread.c), then mapped; all read at each poll, mapped
 * ones under a SIGBUS guard (records.c reads one), unmapped and removed
 * when their process is gone (retire.c) or at the end.
 *
 * Nothing read is trusted: sizes are checked against the mapping, and a
 * violation drops that file with one warning.
 */
#include "images.h"
#include "record_int.h"
#include "../model/profile.h"
#include "../../src/base/ring.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

/*
 * Stops reading im for good.  What was read before the violation stays:
 * each record was checked as it was taken, and a process that can write
 * garbage into its ring could as well have written plausible records, so
 * dropping them would protect nothing and would lose the samples of a
 * process that only broke its ring at the end (nothing lost, issue 10).
 */
void images_drop(struct image *im, const char *why)
{
	if (im->cmdline)
		fprintf(stderr, "profil record: ignoring the rest of %s: %s (the %llu samples "
		        "read before are kept)\n", im->file, why, (unsigned long long)im->weight);
	else
		fprintf(stderr, "profil record: ignoring %s: %s\n", im->file, why);
	im->broken = 1;
	ringread_close(im); /* a young one's descriptor: not read again */
}

/*
 * A profiled process can also shrink its ring file (ftruncate): a read of
 * the mapping past the new end raises SIGBUS here.  Every read of a
 * mapping runs under guarded(), which turns that SIGBUS into dropping the
 * file.  The rings are read by one thread (record.c's loop).
 */
static sigjmp_buf *volatile bus_jmp;

static void on_sigbus(int sig)
{
	if (bus_jmp)
		siglongjmp(*bus_jmp, 1);
	signal(sig, SIG_DFL); /* not a read of a ring: die of it on return */
}

/* fn(arg), or 0 with *faulted set when a mapping faulted under it. */
static size_t guarded(size_t (*fn)(void *), void *arg, int *faulted)
{
	static int installed;
	if (!installed) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_sigbus;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
		installed = 1;
	}
	sigjmp_buf jb;
	*faulted = 0;
	if (sigsetjmp(jb, 1)) {
		bus_jmp = NULL;
		*faulted = 1;
		return 0;
	}
	bus_jmp = &jb;
	size_t r = fn(arg);
	bus_jmp = NULL;
	return r;
}

/* Whether the control block's layout fits the file it is in. */
static int header_ok(const struct ring_file *rf, size_t len)
{
	uint64_t d = rf->data_size, m = rf->modlog_size;
	return rf->version == RING_VERSION && rf->header_size == RING_HEADER_SIZE &&
	       rf->data_offset == RING_HEADER_SIZE && d >= 4096 && d <= RING_DATA_MAX &&
	       (d & (d - 1)) == 0 && rf->modlog_offset == RING_HEADER_SIZE + d &&
	       m <= (1u << 30) && RING_HEADER_SIZE + d + m == len;
}

/* The saved layout, checked again: each field was read once. */
static int header_ok_at(const struct image *im)
{
	uint64_t d = im->data_size, m = im->modlog_size;
	return d >= 4096 && d <= RING_DATA_MAX && (d & (d - 1)) == 0 &&
	       im->modlog_offset == RING_HEADER_SIZE + d && m <= (1u << 30) &&
	       RING_HEADER_SIZE + d + m == im->maplen;
}

/* The command line as the agent stored it (arguments separated by NULs,
 * the rest of the field zero) with its arguments joined by spaces. */
static char *join_args(const char *raw, size_t cap)
{
	size_t end = cap;
	while (end > 0 && raw[end - 1] == '\0')
		end--;
	char *s = prof_xcalloc(end + 1, 1);
	memcpy(s, raw, end);
	for (size_t i = 0; i < end; i++)
		if (s[i] == '\0')
			s[i] = ' ';
	return s;
}

static size_t read_header(void *image);

/* Why reading file faulted: a page of it the file system could not give
 * (a full tmpfs: a hole a read must fill), or a file cut short under us. */
static const char *fault_reason(const char *file)
{
	char dir[4096];
	snprintf(dir, sizeof dir, "%s", file);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	struct statvfs vf;
	if (slash && statvfs(dir, &vf) == 0 && vf.f_bavail == 0)
		return "its file system is full";
	return "truncated while being read";
}

int images_open(struct image *im)
{
	int fd = open(im->file, O_RDWR | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (off_t)RING_HEADER_SIZE) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (ringread_room()) { /* young: read through fd (ringread.c) */
		int ready = ringread_open(im, fd, (size_t)st.st_size);
		if (!im->rfd)
			close(fd);
		return ready;
	}
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 0;
	im->rf = p;
	im->maplen = (size_t)st.st_size;
	int faulted;
	int ready = (int)guarded(read_header, im, &faulted);
	if (faulted) {
		images_drop(im, fault_reason(im->file));
		return 1;
	}
	if (!ready) {
		munmap(p, (size_t)st.st_size);
		im->rf = NULL;
	}
	return ready;
}

/* The header of the ring file mapped at im->rf: 1 when it was complete
 * (the image is dropped if it is wrong), 0 when not yet written. */
static size_t read_header(void *image)
{
	struct image *im = image;
	struct ring_file *rf = im->rf;
	/* The agent stores the magic last, with release: seen, the rest of
	 * the header is complete. */
	uint64_t magic = __atomic_load_n((uint64_t *)rf->magic, __ATOMIC_ACQUIRE);
	if (memcmp(&magic, RING_MAGIC, 8) != 0)
		return 0; /* the agent has not finished its header */
	images_take_header(im, rf);
	return 1;
}

void images_take_header(struct image *im, struct ring_file *rf)
{
	if (!header_ok(rf, im->maplen)) {
		images_drop(im, "not a ring file of this version");
		return;
	}
	im->data_size = rf->data_size;
	im->modlog_offset = rf->modlog_offset;
	im->modlog_size = rf->modlog_size;
	if (!header_ok_at(im)) { /* changed while we checked it */
		images_drop(im, "not a ring file of this version");
		return;
	}
	im->pid = rf->pid;
	im->ppid = rf->ppid;
	im->hz = rf->hz;
	im->start_ns = rf->start_ns;
	memcpy(im->comm, rf->comm, sizeof im->comm);
	im->comm[sizeof im->comm - 1] = '\0';
	im->cmdline = join_args(rf->cmdline, sizeof rf->cmdline);
}

/* One pass over the images from next on, under one guarded() (a signal
 * mask saved per image was a system call each): a fault leaves next at
 * the image being read. */
struct pass {
	struct images *set;
	volatile size_t next;
	volatile size_t records;
	int64_t now; /* CLOCK_MONOTONIC */
};

/* A young image whose process is gone (retire.c) is read this often: a
 * pread() of its header at every poll, for the second it waits to be
 * retired, was most of what a shell loop's rings cost.  Only a forked
 * child without a ring of its own still writes there (ring.h
 * RING_FORKED); retire.c reads it once more before it goes, and the last
 * poll reads every ring. */
#define GONE_POLL_NS 200000000LL

static int due(const struct images *set, const struct image *im, int64_t now)
{
	return set->closing || !im->rfd || !im->gone_since_ns || now - im->polled_ns >= GONE_POLL_NS;
}

static size_t read_from(void *arg)
{
	struct pass *ps = arg;
	for (; ps->next < ps->set->n; ps->next++) {
		struct image *im = &ps->set->v[ps->next];
		if (images_reading(im) && due(ps->set, im, ps->now)) /* not retired */
			ps->records += images_read_one(im);
	}
	return 0;
}

size_t images_poll(struct images *set)
{
	ringserve_drain(set); /* files it makes are opened by the scan */
	images_scan(set);
	struct pass ps = {set, 0, 0, images_now_ns()};
	int faulted;
	for (guarded(read_from, &ps, &faulted); faulted; guarded(read_from, &ps, &faulted)) {
		struct image *im = &set->v[ps.next++];
		images_drop(im, fault_reason(im->file));
	}
	modkeep_poll(set); /* new modules' files, while their processes live */
	images_retire(set);
	set->max_read = 0;
	set->min_ring = 0;
	for (size_t i = 0; i < set->n; i++) {
		const struct image *im = &set->v[i];
		if (!images_reading(im))
			continue;
		if (im->last_read > set->max_read)
			set->max_read = im->last_read;
		if (!set->min_ring || im->data_size < set->min_ring)
			set->min_ring = im->data_size;
	}
	return ps.records;
}

const struct image *images_described(const struct images *set)
{
	for (size_t i = 0; i < set->n; i++)
		if (set->v[i].engine[0])
			return &set->v[i];
	return set->n ? &set->v[0] : NULL;
}

void images_free(struct images *set)
{
	for (size_t i = 0; i < set->n; i++) {
		struct image *im = &set->v[i];
		if (im->rf)
			munmap(im->rf, im->maplen);
		ringread_close(im);
		unlink(im->file);
		free(im->file);
		free(im->cmdline);
		for (size_t k = 0; k < im->nmods; k++)
			free(im->mods[k].path);
		free(im->mods);
		free(im->threads);
		prof_index_free(&im->thread_index);
		free(im->reaped);
		for (size_t k = 0; k < im->nforked; k++) {
			free(im->forked[k].pcs);
			free(im->forked[k].locs);
		}
		free(im->forked);
		agg_free(&im->samples);
	}
	free(set->v);
	free(set->known);
	nspid_free(set);
	notes_free(set);
	ringserve_close(set);
	if (set->dir) /* rings, the agent's shared unwind tables, their temporaries */
		record_workdir_remove(set->dir);
	free(set->dir);
	memset(set, 0, sizeof *set);
}
