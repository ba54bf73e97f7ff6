/*
 * multirange.c - profile the executable and libc at once with sprofil(),
 * then print each histogram's hottest bins by symbol (dladdr).
 *
 *   cc -O2 -rdynamic multirange.c -lprofil -ldl -lm
 *
 * The work: a loop of our own (hot_loop) and libc's qsort() and
 * memset().  Each region covers one object's executable segment, found
 * with dl_iterate_phdr; one 16-bit counter per 4 bytes of text
 * (scale 0x8000).
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/profil.h>

#include <profil.h>

struct text {
	uintptr_t lo, hi;
	const char *name;
};

/* The executable segment of the object that holds text->lo on entry. */
static int find_text(struct dl_phdr_info *info, size_t size, void *data)
{
	struct text *t = data;
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && t->lo >= lo &&
		    t->lo < lo + ph->p_memsz) {
			t->lo = lo, t->hi = lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

/* Not static: -rdynamic exports it, so dladdr() can name it. */
double hot_loop(long n);
__attribute__((noinline)) double hot_loop(long n)
{
	volatile double x = 1;
	for (long i = 0; i < n; i++)
		x = x * 1.0000001 + 1e-9;
	return x;
}

int cmp(const void *a, const void *b);
int cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

static void work(void)
{
	enum { N = 1 << 16 };
	static int v[N];
	static char big[1 << 20];
	for (int round = 0; round < 40; round++) {
		hot_loop(4000000);
		for (int i = 0; i < N; i++)
			v[i] = rand();
		qsort(v, N, sizeof v[0], cmp);
		for (int i = 0; i < 200; i++)
			memset(big, i, sizeof big);
	}
}

/* "symbol+offset", or "object+offset" for code with no dynamic symbol
 * (static functions, libc's internal variants of memset and qsort). */
static void describe(void *pc, char *out, size_t len)
{
	Dl_info info;
	if (!dladdr(pc, &info)) {
		snprintf(out, len, "%p", pc);
	} else if (info.dli_sname) {
		snprintf(out, len, "%s+0x%lx", info.dli_sname,
		         (unsigned long)((char *)pc - (char *)info.dli_saddr));
	} else {
		const char *obj = strrchr(info.dli_fname, '/');
		snprintf(out, len, "%s+0x%lx", obj ? obj + 1 : info.dli_fname,
		         (unsigned long)((char *)pc - (char *)info.dli_fbase));
	}
}

/* Prints the five fullest counters of one region, by symbol. */
static void report(const struct text *t, const unsigned short *buf, size_t nbins)
{
	unsigned long total = 0;
	unsigned short *left = malloc(nbins * sizeof *left);
	memcpy(left, buf, nbins * sizeof *left);
	for (size_t k = 0; k < nbins; k++)
		total += buf[k];
	printf("%s: %lu samples\n", t->name, total);
	for (int top = 0; top < 5; top++) {
		size_t best = 0;
		for (size_t k = 1; k < nbins; k++)
			if (left[k] > left[best])
				best = k;
		if (left[best] == 0)
			break;
		char where[128];
		describe((void *)(t->lo + best * 4), where, sizeof where); /* 4 bytes/bin */
		printf("  %5u  %s\n", left[best], where);
		left[best] = 0;
	}
	free(left);
}

int main(void)
{
	struct text t[2] = {{(uintptr_t)hot_loop, 0, "executable"},
	                    {(uintptr_t)qsort, 0, "libc"}};
	unsigned short *buf[2];
	struct prof p[2];
	for (int i = 0; i < 2; i++) {
		dl_iterate_phdr(find_text, &t[i]);
		size_t nbins = (t[i].hi - t[i].lo + 3) / 4;
		buf[i] = calloc(nbins, sizeof *buf[i]);
		p[i] = (struct prof){buf[i], nbins * sizeof *buf[i], t[i].lo, 0x8000};
	}
	struct timeval period;
	if (sprofil(p, 2, &period, PROF_USHORT) != 0) {
		perror("sprofil");
		return 1;
	}
	work();
	sprofil(NULL, 0, NULL, 0);
	printf("one sample per %ld us of CPU time\n", (long)period.tv_usec);
	for (int i = 0; i < 2; i++)
		report(&t[i], buf[i], p[i].pr_size / sizeof *buf[i]);
	return 0;
}
