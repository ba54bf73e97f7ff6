/*
 * test-bins.c - the bin formula and range ends, as pure arithmetic (no
 * signals, no timers).  Reference values come from an independent
 * computation in 128-bit integers.
 */
#include "runner.h"
#include "../src/base/bin.h"

#include <stdint.h>

/* floor(floor((pc - off) >> shift) * scale / 65536) in 128 bits. */
static int ref_index(uint64_t pc, uint64_t off, unsigned shift, uint32_t scale,
                     uint64_t nbins, uint64_t *out)
{
	if (pc < off)
		return 0;
	unsigned __int128 i = ((unsigned __int128)((pc - off) >> shift) * scale) >> 16;
	if (i >= nbins)
		return 0;
	*out = (uint64_t)i;
	return 1;
}

TEST_IMPL(bins_edges)
{
	size_t i = 99;
	/* pc below offset is never counted */
	ASSERT(!bin_index(0x1000 - 1, 0x1000, 1, 0x10000, 100, &i));
	/* scale 0x10000: 2 bytes per counter */
	ASSERT(bin_index(0x1000, 0x1000, 1, 0x10000, 100, &i) && i == 0);
	ASSERT(bin_index(0x1001, 0x1000, 1, 0x10000, 100, &i) && i == 0);
	ASSERT(bin_index(0x1002, 0x1000, 1, 0x10000, 100, &i) && i == 1);
	/* last bin and one past it */
	ASSERT(bin_index(0x1000 + 199, 0x1000, 1, 0x10000, 100, &i) && i == 99);
	ASSERT(!bin_index(0x1000 + 200, 0x1000, 1, 0x10000, 100, &i));
	/* scale 0x8000: 4 bytes per counter; 0x4000: 8 bytes */
	ASSERT(bin_index(0x1000 + 7, 0x1000, 1, 0x8000, 100, &i) && i == 1);
	ASSERT(bin_index(0x1000 + 15, 0x1000, 1, 0x4000, 100, &i) && i == 1);
	/* scale above 0x10000 (LTP profil01 uses 0x20000): 1 byte per counter */
	ASSERT(bin_index(0x1000 + 3, 0x1000, 1, 0x20000, 100, &i) && i == 2);
	/* Tru64 shift: 4 bytes per counter at scale 0x10000 */
	ASSERT(bin_index(0x1000 + 7, 0x1000, 2, 0x10000, 100, &i) && i == 1);
	/* 64-bit addresses, largest scale: must not wrap into a small index */
	/* true index is about 2^79: beyond any nbins, must not wrap */
	ASSERT(!bin_index(UINT64_MAX, 0, 1, UINT32_MAX, SIZE_MAX, &i));
	ASSERT(!bin_index(0xffff800000000000ul, 0, 1, 0xffffffffu, 1u << 20, &i));
	ASSERT(bin_index(0xffff800000000010ul, 0xffff800000000000ul, 1, 0x10000, 16, &i) && i == 8);
	return 0;
}

TEST_IMPL(bins_random_against_reference)
{
	uint64_t x = 88172645463325252ull;
	for (int k = 0; k < 2000000; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t off = x >> (x & 63);
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint64_t pc = off + (x >> (x & 63));
		if (k & 1)
			pc = x;
		uint32_t scale = (uint32_t)(x >> 32) >> ((x >> 5) & 31);
		uint64_t nbins = (x & 0xff) == 0 ? UINT64_MAX : (x >> 12) & 0xfffff;
		unsigned shift = 1 + (unsigned)(x >> 63);
		uint64_t want = 0;
		size_t got = 0;
		int wr = ref_index(pc, off, shift, scale, nbins, &want);
		int gr = bin_index(pc, off, shift, scale, nbins, &got);
		if (wr != gr || (wr && want != got))
			FAIL_AT("pc %#lx off %#lx shift %u scale %#x nbins %lu: ref %d/%lu got %d/%zu",
			        (unsigned long)pc, (unsigned long)off, shift, scale,
			        (unsigned long)nbins, wr, (unsigned long)want, gr, got);
	}
	return 0;
}
