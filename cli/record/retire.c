/*
 * retire.c - the ring files of processes that have ended, removed while
 * the command runs.
 *
 * Every process image has a ring file, and each kept its header page,
 * its module log and the page its last records were on (12 KiB for a
 * /bin/true) until the recording was written: a shell loop of 300
 * programs held 3.6 MiB of /dev/shm, so a build of a few thousand
 * processes in a container (whose /dev/shm is 64 MiB) filled it, and the
 * next processes could make no ring (their samples lost) and the
 * program's own shared memory was refused.  What a ring holds is copied
 * into its image as it is read (records.c), so once nobody can write it
 * the file can go: it is read a last time if it was young (ringread.c),
 * unmapped or closed, and unlinked here, and the image keeps what was
 * read.
 *
 * Nobody can write it once its process is gone (kill(pid, 0) says ESRCH:
 * a zombie still counts; asked until it says so, never after, so a pid
 * taken again by another process changes nothing), with one exception: a forked child that has no ring of
 * its own yet tells its end in its parent's ring (ring.h RING_FORKED),
 * through the mapping it inherited, even after the parent is gone.  Such
 * a child makes its own ring within a sweep or two of the agent's helper
 * (100 ms each), so the file is retired only when its process has been
 * gone for RETIRE_AFTER_NS, read again by every poll meanwhile.  The pid
 * is the one we see (nspid.c maps those of processes in other PID
 * namespaces).  A dropped image's file is left as it is (the directory
 * goes at the end).
 */
#include "images.h"
#include "record_int.h"

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define RETIRE_AFTER_NS 1000000000LL
/* Liveness is asked at most this often: a kill() per live image at every
 * poll (up to 50 a second) would cost a busy build's recorder more than
 * the rest of its reading. */
#define CHECK_EVERY_NS 200000000LL

int64_t images_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Whether im's process is gone for good: no process has its pid. */
static int process_gone(const struct image *im)
{
	return im->pid > 1 && kill((pid_t)im->pid, 0) != 0 && errno == ESRCH;
}

static void retire(struct image *im)
{
	if (im->rfd) /* read at most every GONE_POLL_NS since it was gone */
		images_read_one(im);
	if (im->rf)
		munmap(im->rf, im->maplen);
	ringread_close(im);
	im->rf = NULL;
	unlink(im->file);
	im->retired = 1;
}

size_t images_retire(struct images *set)
{
	int64_t now = images_now_ns();
	size_t n = 0;
	if (now - set->retire_checked_ns < CHECK_EVERY_NS)
		return 0;
	set->retire_checked_ns = now;
	for (size_t i = 0; i < set->n; i++) {
		struct image *im = &set->v[i];
		if (!images_reading(im) || im->retired)
			continue;
		/* Gone once is gone for good (ESRCH: not even a zombie; a pid
		 * taken again is another process): not asked again, which was
		 * 400 failed kill()s of a build's recording. */
		if (!im->gone_since_ns && !process_gone(im))
			continue;
		if (!im->gone_since_ns)
			im->gone_since_ns = now;
		else if (now - im->gone_since_ns >= RETIRE_AFTER_NS) {
			retire(im);
			n++;
		}
	}
	return n;
}
