/*
 * rec-smallstack.c - the sampling handler and the stacks it runs on.
 *
 * A goroutine called from C (a Go c-shared library) runs on a 4 KiB
 * stack with nothing mapped below it to catch an overflow, and Go sets
 * an alternate signal stack on every thread that runs Go code.  A signal
 * handler without SA_ONSTACK runs on the small stack and writes below
 * it: the sampling handler did, and a Python script calling a Go library
 * through ctypes died of the memory it overwrote ("unexpected return pc
 * for runtime.cgocallbackg1").  And an alternate stack can be too small
 * for a sample beside the kernel's frame: the handler must not write
 * past it either.
 *
 *   rec-smallstack small UNITS
 *                  a 64 KiB alternate stack set; small_hot runs for
 *                  UNITS of CPU time (rec.h) on SMALL bytes of stack
 *                  of its own, a painted region under it; then prints
 *                  "below N": bytes written in that region (0 unless a
 *                  handler overflowed the small stack), "frame N": how
 *                  deep the alternate stack is written by the kernel's
 *                  signal frame and an empty handler (raised first, on
 *                  its own), and "handler N": how much deeper the
 *                  samples wrote it, the sampling handler's own use
 *                  (dispatch.c keeps SAMPLE_STACK_ROOM for it)
 *   rec-smallstack tiny UNITS
 *                  the alternate stack is the top frame + 1 KiB of a
 *                  painted region: room for the kernel's frame, not for
 *                  a sample; tiny_hot runs UNITS on the thread's own
 *                  stack; then "below N": bytes written under the
 *                  alternate stack (0: every sample there was dropped)
 */
#include "rec.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

/* 2 KiB, MINSIGSTKSZ: less than any kernel signal frame plus a handler
 * that walks a stack needs, whatever the CPU's register state. */
#define SMALL 2048
#define BELOW (60 * 1024)
#define ALT (64 * 1024)
#define PAINT 0x5a

static ucontext_t main_ctx, small_ctx;
static unsigned long units;

__attribute__((noinline)) static void small_hot(void)
{
	REC_BURN(units, 0x61);
}

__attribute__((noinline)) static void tiny_hot(void)
{
	REC_BURN(units, 0x62);
}

/* Bytes from base written since painting, counted from the far end
 * inward: the deepest write's distance from base + size. */
static size_t depth_written(const unsigned char *base, size_t size)
{
	for (size_t i = 0; i < size; i++)
		if (base[i] != PAINT)
			return size - i;
	return 0;
}

static void empty_handler(int sig)
{
	(void)sig;
}

/* The kernel's signal frame on alt (its size depends on the CPU's
 * register state), with an empty handler's: SIGUSR1 raised once. */
static size_t kernel_frame(unsigned char *alt)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = empty_handler;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, &old) != 0)
		return 0;
	raise(SIGUSR1);
	sigaction(SIGUSR1, &old, NULL);
	size_t frame = depth_written(alt, ALT);
	memset(alt, PAINT, ALT);
	return frame;
}

static int alt_set(unsigned char *sp, size_t size)
{
	stack_t ss = {.ss_sp = sp, .ss_size = size, .ss_flags = 0};
	if (sigaltstack(&ss, NULL) != 0) {
		perror("sigaltstack");
		return -1;
	}
	return 0;
}

static int run_small(unsigned char *alt, size_t frame)
{
	unsigned char *region = malloc(BELOW + SMALL);
	if (!region)
		return 1;
	memset(region, PAINT, BELOW + SMALL);
	getcontext(&small_ctx);
	small_ctx.uc_stack.ss_sp = region + BELOW;
	small_ctx.uc_stack.ss_size = SMALL;
	small_ctx.uc_link = &main_ctx;
	makecontext(&small_ctx, small_hot, 0);
	if (swapcontext(&main_ctx, &small_ctx) != 0) {
		perror("swapcontext");
		return 1;
	}
	/* The alternate stack's depth counts every sample that ran there,
	 * on the small stack or here: the handler's deepest use. */
	size_t below = depth_written(region, BELOW);
	size_t deep = depth_written(alt, ALT);
	printf("below %zu\nframe %zu\nhandler %zu\n", below, frame,
	       deep > frame ? deep - frame : 0);
	return 0;
}

static int run_tiny(unsigned char *alt, size_t frame)
{
	size_t size = frame + 1024;
	if (frame == 0 || alt_set(alt + ALT - size, size) != 0)
		return 1;
	tiny_hot();
	size_t deep = depth_written(alt, ALT);
	printf("below %zu\n", deep > size ? deep - size : 0);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	units = strtoul(argv[2], NULL, 10);
	unsigned char *alt = malloc(ALT);
	if (!alt)
		return 1;
	memset(alt, PAINT, ALT);
	if (alt_set(alt, ALT) != 0)
		return 1;
	size_t frame = kernel_frame(alt);
	/* Binds clock_gettime() here: the loader's lazy binding saves the
	 * vector registers on the stack, more than the small one holds. */
	(void)rec_thread_ns();
	if (strcmp(argv[1], "small") == 0)
		return run_small(alt, frame);
	if (strcmp(argv[1], "tiny") == 0)
		return run_tiny(alt, frame);
	return 2;
}
