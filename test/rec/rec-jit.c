/*
 * rec-jit.c - makes machine code at run time, as a JIT does, and names it
 * in /tmp/perf-PID.map the way V8 (--perf-basic-prof), the JVM
 * (-XX:+DumpPerfMapAtExit) and CPython 3.12 (-X perf) do.  About half its
 * CPU time runs in that code (jit_spin, called from main, with a frame
 * pointer and no CFI), half in main_hot: after each
 * unit of main_hot the generated loop runs until its CPU time has caught
 * up, measured on the thread's CPU clock, so the shares are even whatever
 * the two loops' speeds.
 *
 *   rec-jit UNITS            the map as JITs write it; its first line
 *                            names the same code "stale_name", a later
 *                            line (which must win) "jit_spin"
 *   rec-jit UNITS symlink    the map is a symbolic link to the real file:
 *                            not to be trusted
 *   rec-jit UNITS stale      the map's time is set an hour back, as if an
 *                            earlier process with this pid had left it
 *   rec-jit UNITS nomap      no map: a JIT run without its perf-map option
 *
 * Prints "pid N" first, so that a test can remove the files afterwards.
 * x86-64 only (the generated code is eleven bytes of it).
 */
#include "rec.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef void spin_fn(unsigned long iterations);

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void main_hot(unsigned long units)
{
	REC_BURN(units, 0x51);
}

/* push %rbp; mov %rsp,%rbp; 1: dec %rdi; jnz 1b; pop %rbp; ret: with a
 * frame pointer, as V8 makes every frame */
static spin_fn *make_code(size_t *len)
{
	static const unsigned char code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xff,
	                                     0xcf, 0x75, 0xfb, 0x5d, 0xc3};
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *mem = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
	                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return NULL;
	memcpy(mem + 64, code, sizeof code); /* not at the page start */
	if (mprotect(mem, (size_t)page, PROT_READ | PROT_EXEC) != 0)
		return NULL;
	*len = sizeof code;
	return (spin_fn *)(void *)(mem + 64);
}

static int write_map(spin_fn *fn, size_t len, int symlinked, int stale)
{
	char map[64], real[64];
	snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
	snprintf(real, sizeof real, "/tmp/rec-jit-%d.real", (int)getpid());
	unlink(map);
	FILE *f = fopen(symlinked ? real : map, "w");
	if (!f)
		return -1;
	uintptr_t at = (uintptr_t)fn;
	fprintf(f, "0x%lx 0x%zx stale_name\n", (unsigned long)at, len);
	fprintf(f, "not a line\n");
	fprintf(f, "%lx %zx jit_spin\n", (unsigned long)at, len);
	if (fclose(f) != 0)
		return -1;
	if (stale) {
		struct timespec back[2] = {{time(NULL) - 3600, 0}, {time(NULL) - 3600, 0}};
		if (utimensat(AT_FDCWD, map, back, 0) != 0)
			return -1;
	}
	return symlinked ? symlink(real, map) : 0;
}

int main(int argc, char **argv)
{
	unsigned long units = argc > 1 ? strtoul(argv[1], NULL, 10) : 30;
	int symlinked = argc > 2 && strcmp(argv[2], "symlink") == 0;
	int stale = argc > 2 && strcmp(argv[2], "stale") == 0;
	int nomap = argc > 2 && strcmp(argv[2], "nomap") == 0;
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
#if defined(__x86_64__)
	size_t len;
	spin_fn *spin = make_code(&len);
	if (!spin || (!nomap && write_map(spin, len, symlinked, stale) != 0)) {
		perror("rec-jit");
		return 1;
	}
	double in_c = 0, in_jit = 0;
	for (unsigned long u = 0; u < units; u++) {
		double t0 = thread_cpu();
		main_hot(1);
		double t1 = thread_cpu();
		in_c += t1 - t0;
		while (in_jit < in_c) {
			spin(1000000);
			double t2 = thread_cpu();
			in_jit += t2 - t1;
			t1 = t2;
		}
	}
	printf("C %.3f s, JIT %.3f s\n", in_c, in_jit);
	return 0;
#else
	(void)symlinked;
	(void)stale;
	(void)nomap;
	main_hot(units);
	fputs("rec-jit: no code generator for this architecture\n", stderr);
	return 1;
#endif
}
