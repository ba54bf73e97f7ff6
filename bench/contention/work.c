/*
 * work.c - bench/contention.sh's workload: two functions of equal CPU
 * time, measured on the thread's CPU clock, which differ only in how
 * often they read that clock: chatty() every ~0.1 ms, quiet() every
 * ~2 ms.  Reading a CPU clock updates the scheduler's accounting
 * (update_curr), where it may decide to switch threads, so on a busy
 * machine chatty() is left at a read far more often than quiet() is.
 *
 *   work SECONDS    about SECONDS of CPU, half in each; prints the split
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void chatty(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) void quiet(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	double want = argc > 1 ? atof(argv[1]) : 1.0, in_quiet = 0, in_chatty = 0;
	while (in_quiet + in_chatty < want) {
		double t0 = thread_cpu();
		quiet(2000000);
		double t1 = thread_cpu();
		in_quiet += t1 - t0;
		while (in_chatty < in_quiet) {
			chatty(100000);
			double t2 = thread_cpu();
			in_chatty += t2 - t1;
			t1 = t2;
		}
	}
	printf("quiet %.3f s, chatty %.3f s\n", in_quiet, in_chatty);
	return 0;
}
