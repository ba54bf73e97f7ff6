/*
 * bin.h - the bin formula of profil(2), exact for every 64-bit pc and every
 * 32-bit scale.  Used by the signal handler (sample.c) and the range-table
 * code; pure arithmetic, no calls.
 *
 *   index = floor(floor((pc - offset) >> shift) * scale / 65536)
 *
 * With d = (pc - offset) >> shift, d < 2^64 and scale < 2^32 the product
 * needs 96 bits.  Split d = dh * 65536 + dl (dl < 65536):
 *
 *   floor(d * scale / 65536) = dh * scale + floor(dl * scale / 65536)
 *
 * because dh * scale * 65536 is a multiple of 65536.  dl * scale < 2^48
 * never overflows; dh * scale and the sum are checked with the compiler's
 * overflow builtins (a mul/add and a flag test, no library call).  An
 * overflowing index is certainly >= nbins, since nbins < 2^64.
 */
#ifndef PROFIL_BIN_H
#define PROFIL_BIN_H

#include <stddef.h>
#include <stdint.h>

/* Returns 1 and sets *index when pc maps to a counter below nbins. */
static inline int bin_index(uintptr_t pc, uintptr_t offset, unsigned shift,
                            uint32_t scale, size_t nbins, size_t *index)
{
	if (pc < offset)
		return 0;
	uint64_t d = (uint64_t)(pc - offset) >> shift;
	uint64_t high, low = ((d & 0xffffu) * scale) >> 16, i;
	if (__builtin_mul_overflow(d >> 16, (uint64_t)scale, &high))
		return 0;
	if (__builtin_add_overflow(high, low, &i))
		return 0;
	if (i >= nbins)
		return 0;
	*index = (size_t)i;
	return 1;
}

#endif /* PROFIL_BIN_H */
