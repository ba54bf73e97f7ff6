/*
 * test-multirange.c - multi-range profiling across mappings: the Tru64
 * form, 1,000 ranges in every form, switching forms under load, and the
 * Tru64 form's errors and range limit.  The AIX and sprofil forms have
 * files of their own (their struct prof tags clash).
 */
#include "multirange.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <time.h>

SPIN_FN(mr_spin_exe, 50)
SPIN_FN(mr_spin_load, 51)

TEST_IMPL(multirange_tru64_attribution)
{
	SKIP_IF_SAMPLES_DEFERRED();
	spin_fn lib = lib_spin("spinlib_spin");
	struct region rs[2];
	text_regions(rs, (void *)mr_spin_exe, (void *)lib, 4);
	ASSERT_OK(start_tru64(rs, 2));
	struct split s = run_split(mr_spin_exe, 0.4, lib, 0.8, 30);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	check_split(regions_sum_fn(rs, 2, (void *)mr_spin_exe), regions_sum_fn(rs, 2, (void *)lib),
	            s);
	regions_free(rs, 2);
	return 0;
}

/*
 * 999 slices of the executable's text plus libspin.so's: 1,000 ranges.
 * Each form must find the right slice for every sample, so the split
 * between the two functions holds and the counters add up to in_range.
 */
static void thousand(struct region *rs, spin_fn lib, unsigned width)
{
	uintptr_t lo, hi, llo, lhi;
	text_of((void *)mr_spin_exe, &lo, &hi);
	text_of((void *)lib, &llo, &lhi);
	uintptr_t slice = ((hi - lo) / 999) & ~(uintptr_t)3;
	ASSERT(slice >= 4);
	struct region *exe = lo < llo ? rs : rs + 1;
	for (int i = 0; i < 999; i++)
		region_init(&exe[i], lo + i * slice, i == 998 ? hi : lo + (i + 1) * slice, width);
	region_init(lo < llo ? &rs[999] : &rs[0], llo, lhi, width);
}

static void check_thousand(int (*start)(const struct region *, size_t), unsigned width,
                           const char *name)
{
	spin_fn lib = lib_spin("spinlib_spin");
	struct region rs[1000];
	thousand(rs, lib, width);
	ASSERT_OK(start(rs, 1000));
	struct split s = run_split(mr_spin_exe, 0.3, lib, 0.3, 20);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	printf("%s: ", name);
	check_split(regions_sum_fn(rs, 1000, (void *)mr_spin_exe),
	            regions_sum_fn(rs, 1000, (void *)lib), s);
	ASSERT_EQ(regions_total(rs, 1000), st.in_range);
	regions_free(rs, 1000);
}

static int start_sprofil_uint(const struct region *rs, size_t n)
{
	return mr_start_sprofil(rs, n, NULL, MR_PROF_UINT);
}

TEST_IMPL(multirange_1000_ranges)
{
	SKIP_IF_SAMPLES_DEFERRED();
	check_thousand(start_tru64, 4, "tru64");
	check_thousand(mr_start_aix, 2, "aix");
	check_thousand(start_sprofil_uint, 4, "sprofil");
	return 0;
}

/* ---- switching forms while several threads are being sampled ---- */

static atomic_int load_on = 1;

static void *load_main(void *p)
{
	spin_fn f = p;
	while (atomic_load(&load_on))
		f(20000);
	return NULL;
}

/* Sleeps until the load threads have used secs of CPU: ~secs * hz
 * samples (2/3 of them for the classic form's single range), however
 * loaded the machine is. */
static void wait_cpu(double secs)
{
	struct timespec nap = {0, 5 * 1000 * 1000};
	double c0 = cpu_process();
	while (cpu_process() - c0 < secs)
		nanosleep(&nap, NULL);
}

/* One configuration of the cycle: its regions and how it started. */
struct config {
	const char *name;
	struct region rs[2];
	double after; /* counter total right after it was replaced */
};

static void start_config(struct config *c, int form, spin_fn lib)
{
	static const char *names[] = {"classic", "tru64", "aix", "sprofil"};
	c->name = names[form];
	text_regions(c->rs, (void *)mr_spin_exe, (void *)lib, form == 1 || form == 3 ? 4 : 2);
	if (form == 0) {
		/* one range only: the lower mapping's; rs[1] stays at zero */
		ASSERT_OK(profil(c->rs[0].buf, c->rs[0].nbins * 2, c->rs[0].lo, 0x10000));
	} else if (form == 1) {
		ASSERT_OK(start_tru64(c->rs, 2));
	} else if (form == 2) {
		ASSERT_OK(mr_start_aix(c->rs, 2));
	} else {
		ASSERT_OK(mr_start_sprofil(c->rs, 2, NULL, MR_PROF_UINT));
	}
}

TEST_IMPL(multirange_switch_forms_under_load)
{
	spin_fn lib = lib_spin("spinlib_spin");
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, load_main,
		                         i == 1 ? (void *)lib : (void *)mr_spin_load), 0);
	enum { ROUNDS = 3, FORMS = 4 };
	struct config cfg[ROUNDS * FORMS];
	for (int i = 0; i < ROUNDS * FORMS; i++) {
		start_config(&cfg[i], i % FORMS, lib);
		if (i > 0)
			cfg[i - 1].after = regions_total(cfg[i - 1].rs, 2);
		wait_cpu(0.06);
	}
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	cfg[ROUNDS * FORMS - 1].after = regions_total(cfg[ROUNDS * FORMS - 1].rs, 2);
	ASSERT(!profiling_on());
	wait_cpu(0.06); /* the threads keep running: nothing may count */
	atomic_store(&load_on, 0);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < ROUNDS * FORMS; i++) {
		double now = regions_total(cfg[i].rs, 2);
		printf("%-8s %5.0f samples\n", cfg[i].name, now);
		ASSERT(now > 10);             /* it was live in its window */
		ASSERT_EQ(now, cfg[i].after); /* and dead once replaced */
		regions_free(cfg[i].rs, 2);
	}
	return 0;
}

/* ---- Tru64 errors ---- */

/* A running configuration that errors must leave alone: a tick counter. */
static unsigned short tick[2];

static void expect_unchanged(unsigned long long ticks_before)
{
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT(st.engine != PROFIL_ENGINE_OFF);
	ASSERT(st.ticks >= ticks_before); /* not restarted: stats not reset */
}

static unsigned long long running_ticks(void)
{
	mr_spin_exe(iters_for(0.02));
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT(st.ticks > 0);
	return st.ticks;
}

#define TRU64(a, n, f) profil((unsigned short *)(void *)(a), (n), (size_t)-1, (f))

TEST_IMPL(multirange_tru64_errors)
{
	unsigned *b1 = calloc(64, 4), *b2 = calloc(64, 4);
	ASSERT(b1 && b2);
	uintptr_t base = 0x100000;
	struct profil_args ok[2] = {
		{b1, (void *)(base + 0x200), (void *)(base + 0x100), (void *)(base + 0x100), 0x10000},
		{b2, (void *)(base + 0x100), (void *)base, (void *)base, 0x10000}};
	struct profil_args a[2];
	ASSERT_OK(profil(tick, sizeof tick, 0, 2));
	unsigned long long t0 = running_ticks();
#define BAD(edit, err) do { memcpy(a, ok, sizeof a); edit; \
		ASSERT_ERR(TRU64(a, 2, 0), err); expect_unchanged(t0); } while (0)
	BAD((a[0] = ok[1], a[1] = ok[0]), EINVAL);                 /* increasing lowpc */
	BAD(a[1].highpc = (void *)(base + 0x101), EINVAL);         /* overlap */
	BAD(a[0].lowpc = a[0].highpc, EINVAL);                      /* empty */
	BAD(a[1].lowpc = (void *)(base + 0x100), EINVAL);           /* lowpc >= highpc */
	BAD(a[0].offset = (void *)(base + 0x180), EINVAL);          /* offset > lowpc */
	BAD(a[1].buffer = NULL, EINVAL);
	BAD(a[1].buffer = (unsigned *)(void *)((char *)b2 + 2), EINVAL); /* misaligned */
	ASSERT_ERR(TRU64(ok, 2, 1), EINVAL);                                 /* flags */
	ASSERT_ERR(TRU64(ok, PROFIL_MAX_RANGES + 1, 0), EINVAL);            /* count */
	expect_unchanged(t0);
	/* an unreadable array is EFAULT, not a crash; profiling turns off */
	void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(page != MAP_FAILED);
	ASSERT_ERR(TRU64(page, 1, 0), EFAULT);
	ASSERT(!profiling_on());
	/* a read-only buffer: EFAULT, profiling off */
	ASSERT_OK(profil(tick, sizeof tick, 0, 2));
	ASSERT_OK(mprotect(page, 4096, PROT_READ));
	memcpy(a, ok, sizeof a);
	a[0].buffer = page;
	ASSERT_ERR(TRU64(a, 2, 0), EFAULT);
	ASSERT(!profiling_on());
	/* n == 0 profiles nothing; scale 0/1 entries are left out */
	ASSERT_OK(profil(tick, sizeof tick, 0, 2));
	ASSERT_OK(TRU64(ok, 0, 0));
	ASSERT(!profiling_on());
	memcpy(a, ok, sizeof a);
	a[0].scale = 1, a[1].scale = 0;
	ASSERT_OK(TRU64(a, 2, 0));
	ASSERT(!profiling_on());
	ASSERT_OK(TRU64(ok, 2, 0));
	ASSERT(profiling_on());
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	munmap(page, 4096);
	free(b1), free(b2);
	return 0;
}

/* Exactly PROFIL_MAX_RANGES ranges are accepted; one more is EINVAL. */
TEST_IMPL(multirange_tru64_limit)
{
	size_t max = PROFIL_MAX_RANGES;
	struct profil_args *a = calloc(max + 1, sizeof *a);
	unsigned *bufs = calloc(max + 1, sizeof *bufs);
	ASSERT(a && bufs);
	uintptr_t base = 0x10000000; /* no code here: samples are out of range */
	for (size_t i = 0; i <= max; i++) {
		uintptr_t lo = base + (max - i) * 16;
		a[i] = (struct profil_args){&bufs[i], (void *)(lo + 16), (void *)lo, (void *)lo,
		                            0x4000}; /* 16 bytes, one counter */
	}
	ASSERT_ERR(TRU64(a, max + 1, 0), EINVAL);
	ASSERT(!profiling_on());
	ASSERT_OK(TRU64(a + 1, max, 0));
	mr_spin_exe(iters_for(0.05));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT(st.ticks > 0);
	ASSERT_EQ(st.out_of_range, st.ticks);
	free(a), free(bufs);
	return 0;
}
