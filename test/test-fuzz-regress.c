/*
 * test-fuzz-regress.c - what the fuzz targets (fuzz/) and `make stress`
 * (issue 15) found in the library, each as a test named after it.  The
 * command's findings are cases of test/cli/ring-scribbled.t and
 * test/cli/named-files.t.
 */
#include "runner.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/profil.h>
#include <sys/time.h>

#include "profil.h"

/* fuzz-forms: sprofil() stored the period through a misaligned tvp with
 * a struct access (undefined behaviour; UBSan stopped the program).  The
 * caller's pointer is stored through as bytes, as glibc's does on x86. */
TEST_IMPL(sprofil_tvp_misaligned)
{
	static unsigned short buf[256];
	_Alignas(16) unsigned char raw[sizeof(struct timeval) + 8];
	memset(raw, 0xee, sizeof raw);
	struct timeval *tvp = (struct timeval *)(void *)(raw + 1);
	struct prof p = {buf, sizeof buf, (size_t)(uintptr_t)&run_test_sprofil_tvp_misaligned,
	                 0x10000};
	ASSERT_OK(sprofil(&p, 1, tvp, 0));
	struct timeval tv;
	memcpy(&tv, raw + 1, sizeof tv);
	unsigned long want = (1000000ul + profil_hz() / 2) / profil_hz();
	ASSERT_EQ(tv.tv_sec, want / 1000000);
	ASSERT_EQ(tv.tv_usec, want % 1000000);
	ASSERT_EQ(raw[0], 0xee); /* nothing outside *tvp */
	ASSERT_EQ(raw[1 + sizeof tv], 0xee);
	ASSERT_OK(sprofil(NULL, 0, NULL, 0));
	return 0;
}

/* make stress: a stop keeps the stopped table's counters for
 * profil_write_gmon(); it checked the buffers against /proc/self/maps,
 * then copied them with memcpy, and a buffer another thread unmapped in
 * between faulted in the library (SIGSEGV in copy_counters).  Here one
 * thread publishes buffers and unmaps them while published, the other
 * stops, for a second and a half. */
static atomic_int publishing;

static void *publish_unmap(void *p)
{
	while (atomic_load(&publishing)) {
		unsigned short *b = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT(b != MAP_FAILED);
		ASSERT_OK(profil(b, 4096, 0, 2));
		/* published and mapped for a while, so stops hit the window */
		struct timespec d = {0, (long)(rand() % 200000)};
		nanosleep(&d, NULL);
		ASSERT_OK(munmap(b, 4096));
	}
	return p;
}

TEST_IMPL(gmon_keep_buffer_unmapped_at_stop)
{
	pthread_t th;
	atomic_store(&publishing, 1);
	ASSERT_EQ(pthread_create(&th, NULL, publish_unmap, NULL), 0);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long stops = 0;
	do {
		ASSERT_OK(profil(no_buf, 0, 0, 0));
		stops++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < 1.5);
	atomic_store(&publishing, 0);
	pthread_join(th, NULL);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("%ld stops\n", stops);
	return 0;
}
