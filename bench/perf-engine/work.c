/*
 * work.c - the workload of bench/perf-engine.sh (issue 13): a fixed
 * amount of work, a quarter of it in hot(), the rest in cold(), run in
 * small alternating chunks so hot()'s true share of the CPU is steady.
 *
 *   work none            the work, unprofiled (also what perf record runs)
 *   work profil HZ       the work under profil() at HZ, engine from
 *                         PROFIL_ENGINE; hot() is the one profiled range
 *
 * Prints one line: cpu=S (the process's CPU seconds for the work, the
 * profiler's cost in this process included) and, when profiled, the
 * engine, signals (real samples), samples (weighted) and hot= share.
 */

#include <dlfcn.h>
#include <link.h>
#include <profil.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WORK_CHUNKS 4000

__attribute__((noinline, noipa)) unsigned long hot(unsigned long n);
__attribute__((noinline, noipa)) unsigned long hot(unsigned long n)
{
	volatile unsigned long a = 1;
	for (unsigned long i = 0; i < n; i++)
		a = a * 6364136223846793005ul + i;
	return a;
}

__attribute__((noinline, noipa)) unsigned long cold(unsigned long n);
__attribute__((noinline, noipa)) unsigned long cold(unsigned long n)
{
	volatile unsigned long a = 3;
	for (unsigned long i = 0; i < n; i++)
		a = a * 6364136223846793005ul + i + 7;
	return a;
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned long per = argc > 3 ? strtoul(argv[3], NULL, 10) : 15000;
	int prof = argc > 2 && strcmp(argv[1], "profil") == 0;
	static unsigned short *buf;
	size_t nbins = 0;
	if (prof) {
		Dl_info info;
		const ElfW(Sym) *sym = NULL;
		if (!dladdr1((void *)hot, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
			return 2;
		nbins = sym->st_size / 2 + 1;
		buf = calloc(nbins, sizeof *buf);
		profil_set_hz((unsigned int)atoi(argv[2]));
		if (profil(buf, nbins * sizeof *buf, (size_t)info.dli_saddr, 0x10000) != 0)
			return 3;
	}
	double c0 = cpu_now();
	for (int k = 0; k < WORK_CHUNKS; k++) {
		hot(per);
		cold(3 * per);
	}
	double cpu = cpu_now() - c0;
	if (!prof) {
		printf("cpu=%.4f\n", cpu);
		return 0;
	}
	struct profil_stats st;
	profil_get_stats(&st);
	enum profil_engine engine = st.engine; /* "off" once stopped */
	profil(buf, 0, 0, 0);
	profil_get_stats(&st);
	printf("cpu=%.4f engine=%s signals=%llu samples=%llu hot=%.4f\n", cpu,
	       profil_engine_name(engine), st.signals, st.ticks,
	       st.ticks ? (double)st.in_range / (double)st.ticks : 0.0);
	return 0;
}
