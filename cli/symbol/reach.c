/*
 * reach.c - address intervals sorted by start, with the highest end of
 * every prefix: which intervals start at or below an address, how far the
 * farthest of them reaches, and which of them cover it, each by a binary
 * search (symtab.c's index of a symbol table).  Sorting is a radix sort,
 * stable, in linear time: libLLVM's table alone has 258,000 symbols, and
 * qsort() over their bounds cost rustc's recording a third of a second
 * (the radix sort of the spans themselves still 0.27 s: sort_by_keys()).
 */
#include "symint.h"

#include <stdlib.h>
#include <string.h>

int sym_reach_add(struct sym_reach *r, uint64_t start, uint64_t end, int idx)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct sym_span *v = realloc(r->v, cap * sizeof *v);
		if (!v)
			return -1;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = (struct sym_span){start, end, idx, 0};
	return 0;
}

#define RADIX_BITS 8
#define RADIX (1u << RADIX_BITS)

/* Digit counts into each digit's first position in the sorted order. */
static void starts_of_digits(size_t *count)
{
	size_t pos = 0;
	for (size_t d = 0; d < RADIX; d++) {
		size_t c = count[d];
		count[d] = pos;
		pos += c;
	}
}

/* Sorts n spans by start, stably (equal starts keep their order), with a
 * pass per byte of the key that is not the same in every span (a module's
 * addresses share their high bytes). */
static int sort_spans(struct sym_span *v, size_t n)
{
	struct sym_span *tmp = malloc((n ? n : 1) * sizeof *tmp);
	size_t *count = malloc(RADIX * sizeof *count);
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return -1;
	}
	for (unsigned shift = 0; shift < 64; shift += RADIX_BITS) {
		memset(count, 0, RADIX * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(v[i].start >> shift) & (RADIX - 1)]++;
		if (n && count[(v[0].start >> shift) & (RADIX - 1)] == n)
			continue; /* one digit for all: nothing to move */
		starts_of_digits(count);
		for (size_t i = 0; i < n; i++)
			tmp[count[(v[i].start >> shift) & (RADIX - 1)]++] = v[i];
		memcpy(v, tmp, n * sizeof *v);
	}
	free(tmp);
	free(count);
	return 0;
}

/*
 * The same order, sorting 8-byte keys instead of 24-byte spans: key =
 * (start - lowest start) << POS_BITS | position of the span, radix-sorted
 * on the start bits only (LSD radix is stable, and positions are already
 * ascending), then the spans moved into key order (permute()).  The scatter passes
 * are cache misses either way; a third of the bytes makes them about
 * twice as fast on rustc's 1.9 million spans.  Needs fewer than 2^24
 * spans and starts within 2^40 of each other; else sort_spans().
 */
#define POS_BITS 24

#define POS_MASK (((uint64_t)1 << POS_BITS) - 1)
#define MOVED ((uint64_t)1 << 63)

/*
 * v[i] = v[key[i] & POS_MASK] for every i at once, in place: each cycle
 * of the permutation is followed from its first slot, whose span is held
 * aside, and each key marked MOVED as its slot is filled.  A gathered
 * copy of the spans was 46 MB of fresh pages for rustc's spans, copied
 * back after: a fifth of a first recording's symbolizing.
 */
static void permute(struct sym_span *v, size_t n, uint64_t *key)
{
	for (size_t i = 0; i < n; i++)
		key[i] &= POS_MASK;
	for (size_t i = 0; i < n; i++) {
		if (key[i] & MOVED)
			continue;
		struct sym_span first = v[i];
		for (size_t j = i;;) {
			size_t from = (size_t)(key[j] & POS_MASK);
			key[j] |= MOVED;
			if (from == i) {
				v[j] = first;
				break;
			}
			v[j] = v[from];
			j = from;
		}
	}
}

static int sort_by_keys(struct sym_span *v, size_t n)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < n; i++) {
		lo = v[i].start < lo ? v[i].start : lo;
		hi = v[i].start > hi ? v[i].start : hi;
	}
	if (n >= (size_t)1 << POS_BITS || hi - lo >= (uint64_t)1 << (64 - POS_BITS))
		return sort_spans(v, n);
	uint64_t *key = malloc(n * sizeof *key), *tmp = malloc(n * sizeof *tmp);
	size_t *count = malloc(RADIX * sizeof *count);
	int rc = -1;
	if (!key || !tmp || !count)
		goto done;
	for (size_t i = 0; i < n; i++)
		key[i] = (v[i].start - lo) << POS_BITS | i;
	for (unsigned shift = POS_BITS; shift < 64; shift += RADIX_BITS) {
		if ((hi - lo) >> (shift - POS_BITS) == 0)
			break; /* no start has a bit this high */
		memset(count, 0, RADIX * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(key[i] >> shift) & (RADIX - 1)]++;
		starts_of_digits(count);
		for (size_t i = 0; i < n; i++)
			tmp[count[(key[i] >> shift) & (RADIX - 1)]++] = key[i];
		uint64_t *t = key;
		key = tmp;
		tmp = t;
	}
	permute(v, n, key);
	rc = 0;
done:
	free(key);
	free(tmp);
	free(count);
	return rc;
}

/* By start, then by the order of addition: callers add in table order. */
int sym_reach_finish(struct sym_reach *r)
{
	if (r->n > 1 && sort_by_keys(r->v, r->n) != 0)
		return -1;
	free(r->maxend);
	r->maxend = malloc((r->n ? r->n : 1) * sizeof *r->maxend);
	if (!r->maxend)
		return -1;
	uint64_t high = 0;
	for (size_t i = 0; i < r->n; i++) {
		high = r->v[i].end > high ? r->v[i].end : high;
		r->maxend[i] = high;
	}
	return 0;
}

size_t sym_reach_count(const struct sym_reach *r, uint64_t addr)
{
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t sym_reach_upto(const struct sym_reach *r, uint64_t addr)
{
	size_t k = sym_reach_count(r, addr);
	return k ? r->maxend[k - 1] : 0;
}

/* Walks back from the last interval starting at or below addr while some
 * interval before reaches past addr (the prefix maximum says so). */
int sym_reach_covering(const struct sym_reach *r, uint64_t addr, const struct sym_span **out,
                       int max)
{
	int k = 0;
	for (size_t j = sym_reach_count(r, addr); j-- > 0 && r->maxend[j] > addr;) {
		if (r->v[j].end <= addr)
			continue;
		if (k == max)
			return -1;
		out[k++] = &r->v[j];
	}
	return k;
}

const struct sym_span *sym_reach_latest(const struct sym_reach *r, uint64_t addr)
{
	const struct sym_span *best = NULL;
	for (size_t j = sym_reach_count(r, addr); j-- > 0 && r->maxend[j] > addr;)
		if (addr < r->v[j].end && (!best || r->v[j].idx > best->idx))
			best = &r->v[j];
	return best;
}

void sym_reach_free(struct sym_reach *r)
{
	free(r->v);
	free(r->maxend);
	*r = (struct sym_reach){0};
}
