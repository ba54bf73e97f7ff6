/*
 * test-multirange-aix.c - AIX's profil(profs, (size_t)-1, 0, 0) form:
 * attribution across two mappings, the computed scale, its errors and the
 * terminator search limit.  Its own file: <profil_aix.h>'s struct prof
 * clashes with glibc's <sys/profil.h>.
 */
#include "multirange.h"

#include <sys/mman.h>

#include "profil_aix.h"

SPIN_FN(aix_spin_exe, 60)

#define AIX(p) profil((unsigned short *)(void *)(p), (size_t)-1, 0, 0)

int mr_start_aix(const struct region *rs, size_t n)
{
	struct prof *p = calloc(n + 1, sizeof *p); /* zeroed terminator */
	ASSERT(p);
	for (size_t i = 0; i < n; i++) {
		ASSERT(rs[i].width == 2);
		p[i] = (struct prof){(void *)rs[i].lo, (void *)rs[i].hi, rs[i].buf,
		                     (int)(rs[i].nbins * 2), 0x10000};
	}
	int rc = AIX(p);
	free(p);
	return rc;
}

TEST_IMPL(multirange_aix_attribution)
{
	SKIP_IF_SAMPLES_DEFERRED();
	spin_fn lib = lib_spin("spinlib_spin");
	uintptr_t elo, ehi, llo, lhi;
	text_of((void *)aix_spin_exe, &elo, &ehi);
	text_of((void *)lib, &llo, &lhi);
	struct region rs[2];
	region_init(&rs[0], elo < llo ? elo : llo, elo < llo ? ehi : lhi, 2);
	region_init(&rs[1], elo < llo ? llo : elo, elo < llo ? lhi : ehi, 2);
	ASSERT_OK(mr_start_aix(rs, 2));
	struct split s = run_split(aix_spin_exe, 0.8, lib, 0.4, 30);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	check_split(regions_sum_fn(rs, 2, (void *)aix_spin_exe), regions_sum_fn(rs, 2, (void *)lib),
	            s);
	regions_free(rs, 2);
	return 0;
}

/*
 * p_scale (unsigned)-1 with a buffer 1/8 the size of the range: every
 * sample of the function must land in one of its counters, none past the
 * buffer's end (the computed scale is the largest that fits).
 */
TEST_IMPL(multirange_aix_computed_scale)
{
	SKIP_IF_SAMPLES_DEFERRED();
	unsigned long lo, hi;
	ASSERT_OK(function_range((void *)aix_spin_exe, &lo, &hi));
	size_t len = hi - lo, bytes = (len / 8 + 2) & ~(size_t)1;
	unsigned short *buf = calloc(1, bytes);
	ASSERT(buf);
	struct prof p[2] = {{(void *)lo, (void *)hi, buf, (int)bytes, PROFIL_AIX_SCALE_AUTO}, {0}};
	unsigned long iters = iters_for(0.6); /* calibrate before profiling */
	ASSERT_OK(AIX(p));
	double cpu = cpu_thread();
	aix_spin_exe(iters);
	cpu = cpu_thread() - cpu; /* measured: iterations slow down under load */
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	double sum = 0, last = 0;
	for (size_t k = 0; k < bytes / 2; k++)
		sum += buf[k], last = buf[k] ? (double)k : last;
	printf("range %zu bytes, %zu counters: %.0f samples in range, last bin %.0f\n", len,
	       bytes / 2, sum, last);
	ASSERT_EQ(sum, st.in_range);
	ASSERT(sum >= 0.85 * cpu * profil_hz());
	/* a scale too large would push the function's tail past the buffer */
	printf("%llu ticks, %llu out of range\n", st.ticks, st.out_of_range);
	ASSERT(st.out_of_range <= 0.02 * (double)st.ticks + 3);
	/* a range far longer than 32768 bytes per counter has no valid scale */
	struct prof huge[2] = {{(void *)0x1000, (void *)0x7f0000000000, buf, 2, ~0u}, {0}};
	ASSERT_ERR(AIX(huge), EINVAL);
	free(buf);
	return 0;
}

TEST_IMPL(multirange_aix_errors)
{
	unsigned short *b = calloc(64, 2);
	ASSERT(b);
	const struct prof ok[3] = {{(void *)0x1000, (void *)0x1080, b, 64, 0x10000},
	                           {(void *)0x2000, (void *)0x2080, b + 32, 64, 0x10000},
	                           {0}};
	struct prof p[3];
	unsigned short tick[2];
	ASSERT_OK(profil(tick, sizeof tick, 0, 2));
#define BAD(edit, err) do { memcpy(p, ok, sizeof p); edit; \
		ASSERT_ERR(AIX(p), err); ASSERT(profiling_on()); } while (0)
	BAD((p[0] = ok[1], p[1] = ok[0]), EINVAL);           /* p_high descending */
	BAD(p[1].p_low = (void *)0x1040, EINVAL);            /* overlap */
	BAD(p[0].p_high = (void *)0x1000, EINVAL);           /* p_low == p_high */
	BAD(p[0].p_high = (void *)0x0fff, EINVAL);           /* p_low > p_high */
	BAD(p[1].p_bufsize = 0, EINVAL);
	BAD(p[1].p_bufsize = -2, EINVAL);
	BAD(p[1].p_buff = NULL, EINVAL);
	BAD(p[1].p_buff = (unsigned short *)(void *)((char *)b + 1), EINVAL);
	/* the array runs into an unmapped page before its terminator */
	char *pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(pages != MAP_FAILED);
	ASSERT_OK(munmap(pages + 4096, 4096));
	struct prof *edge = (struct prof *)(void *)(pages + 4096 - 2 * sizeof *edge);
	memcpy(edge, ok, 2 * sizeof *edge);
	ASSERT_ERR(AIX(edge), EFAULT);
	ASSERT(!profiling_on());
	/* the same two entries with the terminator just before the page end */
	edge = (struct prof *)(void *)(pages + 4096 - 3 * sizeof *edge);
	memcpy(edge, ok, sizeof ok);
	ASSERT_OK(AIX(edge));
	ASSERT(profiling_on());
	ASSERT_ERR(AIX(pages + 4096), EFAULT);
	ASSERT(!profiling_on());
	/* only a terminator, or only "off" entries: profiling stops */
	ASSERT_OK(AIX(ok));
	ASSERT_OK(AIX(&ok[2]));
	ASSERT(!profiling_on());
	memcpy(p, ok, sizeof p);
	p[0].p_scale = 0, p[1].p_scale = 1;
	ASSERT_OK(AIX(ok));
	ASSERT_OK(AIX(p));
	ASSERT(!profiling_on());
	/* a read-only counter buffer */
	ASSERT_OK(mprotect(pages, 4096, PROT_READ));
	memcpy(p, ok, sizeof p);
	p[1].p_buff = (unsigned short *)(void *)pages;
	ASSERT_ERR(AIX(p), EFAULT);
	munmap(pages, 4096);
	free(b);
	return 0;
}

/* The terminator is searched among PROFIL_AIX_MAX_RANGES + 1 entries. */
TEST_IMPL(multirange_aix_terminator_limit)
{
	size_t max = PROFIL_AIX_MAX_RANGES;
	struct prof *p = calloc(max + 2, sizeof *p);
	unsigned short *bufs = calloc(max + 1, sizeof *bufs);
	ASSERT(p && bufs);
	uintptr_t base = 0x10000000;
	for (size_t i = 0; i <= max; i++)
		p[i] = (struct prof){(void *)(base + i * 16), (void *)(base + i * 16 + 16), &bufs[i],
		                     2, 0x2000};
	ASSERT_ERR(AIX(p), EINVAL); /* max + 1 entries, then the terminator */
	ASSERT(!profiling_on());
	p[max] = (struct prof){0};
	ASSERT_OK(AIX(p)); /* exactly max entries */
	ASSERT(profiling_on());
	aix_spin_exe(iters_for(0.05));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT(st.ticks > 0);
	ASSERT_EQ(st.out_of_range, st.ticks);
	free(p), free(bufs);
	return 0;
}
