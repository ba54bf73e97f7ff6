/*
 * librecalt.c: a second plugin, loaded and closed in turns with
 * librecplug.so (rec-prog plugswap), so that the two take each other's
 * place in the address space hundreds of times.  Its table makes it
 * larger than librecplug.so: the two ranges differ, and overlap where the
 * loader reuses the hole the other left.
 */
#include "rec.h"

const unsigned char alt_table[64 << 10] = {1};

__attribute__((noinline)) void alt_hot(unsigned long units)
{
	REC_BURN(units + alt_table[0] - 1, 7);
}
