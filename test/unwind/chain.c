/*
 * chain.c - libuwchain.so: the shared library in the middle of the call
 * chains test/unwind/prog.c samples, built -O2 -fomit-frame-pointer.
 */
#include "chain.h"

/* per thread: several threads pass through here (a shared one is a data
 * race TSan reports) */
_Thread_local volatile unsigned long uw_lib_sink;

/* Calls back into the program, and does work after the call so that the
 * compiler cannot make it a tail call (which would drop this frame). */
unsigned long uw_through(unsigned long (*cb)(unsigned long), unsigned long n)
{
	unsigned long r = cb(n);
	uw_lib_sink += r;
	return r;
}
