/*
 * demo.c - profile a small threaded program with the classic profil() call
 * and print where its CPU time went, by function.
 *
 * The histogram covers the program's own text: offset is the first text
 * address, scale 0x10000 gives one 16-bit counter per 2 bytes.  Functions
 * are found with dladdr() (the demo is linked with -rdynamic).
 *
 *   build/examples/demo            run it
 *   PROFIL_HZ=250 build/examples/demo
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profil.h"

extern const char __executable_start[], etext[];

/* Three kinds of work with different costs (exported so dladdr names them). */
double integrate(long steps);
unsigned long hash_bytes(long rounds);
long sort_numbers(int n);
int cmp_long(const void *a, const void *b);
void *worker(void *arg);

__attribute__((noinline)) double integrate(long steps)
{
	double sum = 0, dx = 1.0 / (double)steps;
	for (long i = 0; i < steps; i++) {
		double x = (double)i * dx;
		sum += 4.0 / (1.0 + x * x) * dx;
	}
	return sum;
}

__attribute__((noinline)) unsigned long hash_bytes(long rounds)
{
	unsigned long h = 1469598103934665603ul;
	for (long r = 0; r < rounds; r++)
		for (int i = 0; i < 64; i++)
			h = (h ^ (unsigned long)(i + r)) * 1099511628211ul;
	return h;
}

int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) long sort_numbers(int n)
{
	long *v = malloc((size_t)n * sizeof *v);
	if (!v)
		return 0;
	for (int i = 0; i < n; i++)
		v[i] = (long)((unsigned long)i * 2654435761ul % 1000003ul);
	qsort(v, (size_t)n, sizeof *v, cmp_long);
	long mid = v[n / 2];
	free(v);
	return mid;
}

/* Results go here so that no work can be optimised away. */
/* per thread: the workers and main all write it (a shared one would be
 * a data race) */
static _Thread_local volatile double sink;

void *worker(void *arg)
{
	long id = (long)arg;
	for (int i = 0; i < 10; i++) {
		sink = integrate(30000000 + i); /* distinct arguments: no call is folded */
		sink = (double)hash_bytes(200000 + 100000 * id + i);
	}
	return NULL;
}

struct row {
	const char *name;
	unsigned long samples;
};

static int by_samples(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	return (x->samples < y->samples) - (x->samples > y->samples);
}

/* Folds the histogram into per-function rows (consecutive bins that
 * dladdr names the same function). */
static size_t fold(const unsigned short *buf, size_t nbins, struct row *rows, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < nbins; i++) {
		if (!buf[i])
			continue;
		Dl_info info;
		const char *name = "?";
		if (dladdr(__executable_start + 2 * i, &info) && info.dli_sname)
			name = info.dli_sname;
		size_t k = 0;
		while (k < n && strcmp(rows[k].name, name) != 0)
			k++;
		if (k == n && n < max)
			rows[n++] = (struct row){name, 0};
		if (k < n)
			rows[k].samples += buf[i];
	}
	qsort(rows, n, sizeof rows[0], by_samples);
	return n;
}

int main(void)
{
	size_t text = (size_t)(etext - __executable_start);
	size_t nbins = text / 2 + 1;
	unsigned short *buf = calloc(nbins, sizeof *buf);
	if (!buf)
		return 1;
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	if (profil(buf, nbins * sizeof *buf, (size_t)__executable_start, 0x10000) != 0) {
		perror("profil");
		return 1;
	}
	pthread_t th[3];
	for (long i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	for (int i = 0; i < 8; i++)
		sink = (double)sort_numbers(1000000);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	struct profil_stats running;
	profil_get_stats(&running);
	profil(NULL, 0, 0, 0);
	struct profil_stats st; /* final counts: kept until the next start */
	profil_get_stats(&st);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double cpu = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;

	struct row rows[64];
	size_t n = fold(buf, nbins, rows, 64);
	printf("profil demo: 4 threads, %.2f CPU seconds, %u samples/CPU s, engine %s, signal %d\n",
	       cpu, st.hz, profil_engine_name(running.engine), running.signal);
	printf("%llu samples (%llu in this program, %llu elsewhere: libc, kernel entry)\n\n",
	       st.ticks, st.in_range, st.out_of_range);
	printf("%8s %7s  %s\n", "samples", "share", "function");
	for (size_t i = 0; i < n; i++)
		printf("%8lu %6.1f%%  %s\n", rows[i].samples,
		       100.0 * (double)rows[i].samples / (double)st.ticks, rows[i].name);
	printf("%8llu %6.1f%%  (outside the program's text)\n", st.out_of_range,
	       100.0 * (double)st.out_of_range / (double)st.ticks);
	printf("\nsamples / (CPU s x rate) = %.3f\n", (double)st.ticks / (cpu * st.hz));
	free(buf);
	return 0;
}
