/*
 * gmon-hot.c - a program profiled the traditional way: monitor() over its
 * whole text, monitor(NULL) at the end writes gmon.out (PROFIL_GMON names
 * it).  hot_function() takes about four times the CPU of cold_function().
 * Prints the CPU seconds each took, for test-gmon.c to compare with what
 * gprof reads.  Built as a PIE (gmon-hot) and as a non-PIE (gmon-hot-nopie).
 *
 *   gmon-hot SECONDS [BUFFER_FRACTION]
 *
 * BUFFER_FRACTION (default 1) divides the histogram size, so the scale
 * monitor() computes drops below one counter per 2 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "profil.h"

/* Linker-defined: start of the image and end of its text. */
extern char __executable_start[], etext[];

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Seconds of CPU per loop iteration, measured before profiling starts.
 * The functions below run a computed number of iterations and read the
 * clock only at their ends: on Linux 6.18 a thread that reads a CPU clock
 * thousands of times a second while competing for a CPU can have its CPU
 * timer held back for hundreds of milliseconds, which would move samples
 * from one function to the next. */
static double per_iter;

/* Spin for about `seconds` of CPU; distinct code so gprof can tell the
 * two apart.  Returns the CPU seconds taken. */
__attribute__((noinline)) double hot_function(double seconds);
__attribute__((noinline)) double hot_function(double seconds)
{
	volatile unsigned long acc = 1;
	unsigned long n = (unsigned long)(seconds / per_iter);
	double t0 = cpu();
	for (unsigned long i = 0; i < n; i++)
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
	return cpu() - t0;
}

__attribute__((noinline)) double cold_function(double seconds);
__attribute__((noinline)) double cold_function(double seconds)
{
	volatile unsigned long acc = 7;
	unsigned long n = (unsigned long)(seconds / per_iter);
	double t0 = cpu();
	for (unsigned long i = 0; i < n; i++)
		acc = acc * 2862933555777941757ul + 3037000493ul;
	return cpu() - t0;
}

static void calibrate(void)
{
	for (unsigned long n = 1ul << 20;; n *= 4) {
		volatile unsigned long acc = 3;
		double t0 = cpu();
		for (unsigned long i = 0; i < n; i++)
			acc = acc * 6364136223846793005ul + 1442695040888963407ul;
		double t = cpu() - t0;
		if (t > 0.02) {
			per_iter = t / (double)n;
			return;
		}
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.5;
	long fraction = argc > 2 ? atol(argv[2]) : 1;
	size_t text = (size_t)(etext - __executable_start);
	/* header + no call counts + one WORD per 2 bytes of text / fraction */
	size_t words = 64 + text / 2 / (size_t)(fraction > 0 ? fraction : 1);
	unsigned short *buf = calloc(words, sizeof *buf);
	if (!buf)
		return 2;
	calibrate();
	monitor((int (*)(void))(void *)__executable_start, (int (*)(void))(void *)etext, buf, words,
	        0);
	double hot = 0, cold = 0;
	for (int round = 0; round < 8; round++) {
		hot += hot_function(seconds / 10);
		cold += cold_function(seconds / 40);
	}
	monitor(NULL, NULL, NULL, 0, 0);
	printf("hot %.4f cold %.4f\n", hot, cold);
	return 0;
}
