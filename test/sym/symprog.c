/*
 * symprog.c - prints where its probes were called from and its mappings
 * (see symprog.h).  Built PIE and non-PIE, with -O2 so that inner() and
 * middle() are inlined into outer().
 */
#include "symprog.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *volatile seen[NPROBES];
volatile int sink;

__attribute__((noinline, noipa)) static void probe(int slot)
{
	seen[slot] = __builtin_return_address(0);
}

__attribute__((noinline, noipa)) void plain_function(void);
void plain_function(void)
{
	probe(P_PLAIN); /* @plain */
	sink++;
}

static inline __attribute__((always_inline)) void inner(void)
{
	probe(P_INLINE); /* @inner */
	sink++;
}

static inline __attribute__((always_inline)) void middle(void)
{
	inner(); /* @middle */
	sink++;
}

__attribute__((noinline, noipa)) void outer(void);
void outer(void)
{
	middle(); /* @outer */
	sink++;
}

/* qsort calls it from inside libc: its return address is libc's. */
__attribute__((noinline)) static int compare(const void *a, const void *b)
{
	seen[P_LIBC] = __builtin_return_address(0);
	return *(const int *)a - *(const int *)b;
}

static void print_vdso(void)
{
	void *h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *fn = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	if (fn)
		printf("fn vdso %p\n", fn);
}

int main(void)
{
	int v[] = {3, 1, 2};
	plain_function();
	outer();
	symlib_function(probe);
	symcxx_entry(probe);
	qsort(v, 3, sizeof v[0], compare);
	static const char *const names[NPROBES] = {"plain", "inline", "lib", "cxx", "libc"};
	for (int i = 0; i < NPROBES; i++)
		printf("probe %s %#lx\n", names[i], (unsigned long)(uintptr_t)seen[i] - 1);
	print_vdso();
	printf("pid %d\n", (int)getpid());
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[1024];
	while (maps && fgets(line, sizeof line, maps))
		printf("map %s", line);
	return 0;
}
