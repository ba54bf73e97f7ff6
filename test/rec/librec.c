/* librec.so: a hot function in a shared library linked to rec-prog. */
#include "rec.h"

__attribute__((noinline)) void lib_hot(unsigned long units)
{
	REC_BURN(units, 1);
}
