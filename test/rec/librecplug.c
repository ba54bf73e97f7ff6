/* librecplug.so: loaded with dlopen, closed before the program exits. */
#include "rec.h"

__attribute__((noinline)) void plug_hot(unsigned long units)
{
	REC_BURN(units, 2);
}
