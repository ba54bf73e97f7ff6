/* symlib.c - a shared library function for the symbolizer's tests. */
#include "symprog.h"

volatile int symlib_sink;

__attribute__((noinline)) void symlib_function(probe_fn *probe)
{
	probe(P_LIB); /* @lib */
	symlib_sink++;
}
