/*
 * test-gmon-stop.c - profil_write_gmon() after the stop writes the counts
 * the buffers held at the stop, without reading the buffers again (they
 * may be freed or unmapped by then); it reads /proc/self/maps once however
 * many ranges there are; monitor() zeroes its buffer before it counts.
 */
#include "runner.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/profil.h>
#include <unistd.h>

#include "profil.h"

SPIN_FN(stop_spin, 61)

/* Sum of every counter of a gmon.out file (histogram records only). */
static unsigned long gmon_total(const char *path)
{
	FILE *f = fopen(path, "rb");
	ASSERT(f);
	unsigned char hdr[20];
	ASSERT_EQ(fread(hdr, 1, sizeof hdr, f), sizeof hdr);
	ASSERT(memcmp(hdr, "gmon", 4) == 0);
	unsigned long total = 0;
	unsigned char tag;
	while (fread(&tag, 1, 1, f) == 1) {
		ASSERT_EQ(tag, 0);
		struct {
			uintptr_t lo, hi;
			uint32_t bins, rate;
			char dimen[15], abbrev;
		} __attribute__((packed)) rec;
		ASSERT_EQ(fread(&rec, sizeof rec, 1, f), 1);
		for (uint32_t i = 0; i < rec.bins; i++) {
			uint16_t c;
			ASSERT_EQ(fread(&c, sizeof c, 1, f), 1);
			total += c;
		}
	}
	fclose(f);
	return total;
}

static unsigned long sum16(const unsigned short *b, size_t n)
{
	unsigned long s = 0;
	for (size_t i = 0; i < n; i++)
		s += b[i];
	return s;
}

/* Profiles stop_spin into b (n counters over it), stops, returns the sum. */
static unsigned long profile_into(unsigned short *b, size_t n)
{
	unsigned long lo, hi;
	ASSERT_OK(function_range((void *)stop_spin, &lo, &hi));
	ASSERT(n * 2 >= hi - (lo & ~1ul));
	ASSERT_OK(profil(b, n * 2, lo & ~1ul, 0x10000));
	stop_spin(iters_for(0.1));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	return sum16(b, n);
}

static void out_path(char *p, size_t size)
{
	snprintf(p, size, "/tmp/profil-gmon-stop-%ld.out", (long)getpid());
}

/* Unmapped after the stop: the write succeeds, with the stop's counts. */
TEST_IMPL(gmon_after_stop_buffer_unmapped)
{
	size_t n = 4096;
	unsigned short *b = mmap(NULL, n * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	                         -1, 0);
	ASSERT(b != MAP_FAILED);
	unsigned long at_stop = profile_into(b, n);
	ASSERT_OK(munmap(b, n * 2));
	char path[128];
	out_path(path, sizeof path);
	ASSERT_OK(profil_write_gmon(path));
	unsigned long written = gmon_total(path);
	unlink(path);
	printf("%lu samples at the stop, %lu written after munmap\n", at_stop, written);
	ASSERT_EQ(written, at_stop);
	return 0;
}

/* Freed (and scribbled on first) after the stop: the written counts are
 * the stop's.  Under `make sanitize`, ASan reports any read of it. */
TEST_IMPL(gmon_after_stop_buffer_freed)
{
	size_t n = 4096;
	unsigned short *b = calloc(n, 2);
	ASSERT(b);
	unsigned long at_stop = profile_into(b, n);
	memset(b, 0x5a, n * 2);
	free(b);
	char path[128];
	out_path(path, sizeof path);
	ASSERT_OK(profil_write_gmon(path));
	unsigned long written = gmon_total(path);
	unlink(path);
	ASSERT_EQ(written, at_stop);
	return 0;
}

/* fuzz-gmon: a counter whose bin the range cuts (Tru64's lowpc above its
 * offset or highpc inside the last bin, AIX's p_high, monitor()'s highpc)
 * lost the share of its count that fell outside the range, though every
 * sample it counted came from inside: the file's total was short. */
TEST_IMPL(gmon_cut_bin_keeps_its_count)
{
	unsigned long lo, hi;
	ASSERT_OK(function_range((void *)stop_spin, &lo, &hi));
	uintptr_t off = lo & ~15ul;
	/* 16-byte bins (shift 2, scale 0x4000): the range starts 4 bytes into
	 * bin 0 and ends 6 bytes into bin 4 */
	unsigned int buf[5] = {0};
	struct profil_args a = {buf, (void *)(off + 4 * 16 + 6), (void *)(off + 4), (void *)off,
	                        0x4000};
	ASSERT_OK(profil((unsigned short *)(void *)&a, 1, (size_t)-1, 0));
	buf[0] = 1000, buf[2] = 7, buf[4] = 3000; /* kept at the stop */
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	char path[128];
	out_path(path, sizeof path);
	ASSERT_OK(profil_write_gmon(path));
	unsigned long written = gmon_total(path);
	unlink(path);
	ASSERT_EQ(written, (unsigned long)buf[0] + buf[1] + buf[2] + buf[3] + buf[4]);
	return 0;
}

/* Bytes this process has read through read(2) and friends. */
static unsigned long long rchar(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	ASSERT(f);
	unsigned long long v = 0;
	char line[128];
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "rchar: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

static size_t maps_bytes(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	ASSERT(f);
	size_t n = 0;
	while (fgetc(f) != EOF)
		n++;
	fclose(f);
	return n;
}

/*
 * 2^18 ranges, each with a buffer of its own: checking them must read
 * /proc/self/maps once, not once per range (which took 28.6 s for 2^20).
 * Measured as work done, not time: the bytes the process read during the
 * call (rchar) must be a few maps files' worth, not 2^18 of them.
 */
TEST_IMPL(gmon_many_ranges_one_maps_read)
{
	size_t n = 1u << 18;
	struct prof *p = calloc(n, sizeof *p);
	unsigned short *bufs = calloc(n, sizeof *bufs);
	ASSERT(p && bufs);
	for (size_t i = 0; i < n; i++)
		p[i] = (struct prof){&bufs[i], 2, 0x10000000 + i * 16, 0x2000};
	ASSERT_OK(sprofil(p, (int)n, NULL, 0));
	char path[128];
	out_path(path, sizeof path);
	for (int live = 1; live >= 0; live--) {
		size_t maps = maps_bytes();
		unsigned long long before = rchar();
		if (!live)
			ASSERT_OK(sprofil(NULL, 0, NULL, 0)); /* keeps the counts */
		ASSERT_OK(profil_write_gmon(path));
		unsigned long long read = rchar() - before;
		printf("%s: read %llu bytes (stop and write); maps is %zu bytes\n",
		       live ? "live" : "stopped", read, maps);
		ASSERT(read < 8 * maps + 65536);
	}
	unlink(path);
	free(p), free(bufs);
	return 0;
}

SPIN_FN(never_run, 62)

struct hot {
	atomic_int run;
};

static void *hot_main(void *arg)
{
	struct hot *h = arg;
	while (atomic_load(&h->run))
		stop_spin(10000);
	return NULL;
}

/*
 * monitor() over a buffer the live table counts into: the buffer is
 * zeroed before monitor()'s table is published, and no sample of the old
 * table lands after the zeroing.  monitor() profiles a function that
 * never runs, so its histogram must stay all zero.
 */
TEST_IMPL(monitor_zeroes_before_publish)
{
	size_t words = 1u << 22; /* 8 MiB: zeroing takes a while */
	unsigned short *b = malloc(words * 2);
	ASSERT(b);
	unsigned long lo, hi, nlo, nhi;
	ASSERT_OK(function_range((void *)stop_spin, &lo, &hi));
	ASSERT_OK(function_range((void *)never_run, &nlo, &nhi));
	struct hot h = {1};
	pthread_t th;
	ASSERT_EQ(pthread_create(&th, NULL, hot_main, &h), 0);
	for (int round = 0; round < 20; round++) {
		memset(b, 0, words * 2);
		/* stop_spin's counters 4 KiB into the buffer, past the header */
		ASSERT_OK(profil(b, words * 2, (lo & ~1ul) - 4096, 0x10000));
		stop_spin(iters_for(0.01));
		monitor((int (*)(void))nlo, (int (*)(void))nhi, b, words, 0);
		usleep(2000);
		ASSERT_OK(profil(no_buf, 0, 0, 0));
		unsigned long left = 0;
		for (size_t i = 12; i < words; i++) /* after the 24-byte header */
			left += b[i];
		if (left)
			FAIL_AT("round %d: %lu samples after monitor() zeroed its buffer", round, left);
	}
	atomic_store(&h.run, 0);
	pthread_join(th, NULL);
	free(b);
	return 0;
}
