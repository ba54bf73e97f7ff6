/*
 * gprof_demo.c - profile a program with profil() and read the profile
 * with GNU gprof.
 *
 *   gprof_demo [FILE]        writes FILE (default gmon.out), then:
 *   gprof -p -b gprof_demo FILE
 *
 * The histogram covers the program's whole image at one counter per 2
 * bytes.  Three functions take about 4:2:1 of the CPU time; one of them
 * runs in a second thread, which is sampled like the main one.  The
 * program is a PIE: profil_write_gmon() writes addresses relative to its
 * load address, which is what gprof expects.
 */
#include <profil.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Linker-defined: start of the image and end of its code. */
extern char __executable_start[], etext[];

static double cpu_thread(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Keep each function whole and under its own name (no GCC clones such
 * as name.constprop.0), so gprof lists it as written. */
#if defined(__GNUC__) && !defined(__clang__)
#define WHOLE __attribute__((noinline, noclone))
#else
#define WHOLE __attribute__((noinline))
#endif

#define BURN(name, mul)                                                   \
	WHOLE static void name(double seconds)                             \
	{                                                                  \
		volatile unsigned long x = 1;                              \
		double t0 = cpu_thread();                                  \
		while (cpu_thread() - t0 < seconds)                        \
			for (int i = 0; i < 50000; i++)                    \
				x = x * (mul) + 12345;                     \
	}

BURN(parse_input, 6364136223846793005ul)
BURN(transform, 2862933555777941757ul)
BURN(write_output, 3202034522624059733ul)

static void *worker(void *arg)
{
	(void)arg;
	transform(0.4);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *out = argc > 1 ? argv[1] : "gmon.out";
	size_t bytes = (size_t)(etext - __executable_start);
	unsigned short *hist = calloc(bytes / 2 + 1, sizeof *hist);
	pthread_t th;
	if (!hist)
		return 1;
	if (profil(hist, (bytes / 2 + 1) * sizeof *hist, (size_t)__executable_start, 0x10000) != 0) {
		perror("profil");
		return 1;
	}
	pthread_create(&th, NULL, worker, NULL);
	parse_input(0.8);
	write_output(0.2);
	pthread_join(th, NULL);
	profil(NULL, 0, 0, 0); /* stop: the counts are final */
	if (profil_write_gmon(out) != 0) {
		perror(out);
		return 1;
	}
	printf("wrote %s at %u samples per second; now run:\n  gprof -p -b %s %s\n", out,
	       profil_hz(), argv[0], out);
	return 0;
}
