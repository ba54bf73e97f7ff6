/*
 * sort.c - qsort() without its allocation.
 *
 * glibc's qsort() sorts by merging into a buffer it mallocs once the array
 * passes 1 KiB; our parts must not call the program's allocator (alloc.c
 * says why), and the arrays sorted here (a table's ranges, the unwind
 * tables' rows and modules, the registry's thread ids) reach tens of
 * thousands of elements.  So: an introsort in place.  Quicksort with the
 * median of three as pivot and both scans stopping on equal keys (an
 * array of equal keys splits in halves), the smaller side recursed into
 * and the larger looped on (stack depth at most log2 n), insertion sort
 * below SMALL elements, and heapsort for a range whose quicksort has gone
 * 2 log2 n levels deep: O(n log n) comparisons at worst, whatever the
 * input.  Not stable, as qsort() is not.
 */
#include "base/base.h"

#include <string.h>

#define SMALL 12

static void swap(char *a, char *b, size_t size)
{
	char tmp[64];
	while (size) {
		size_t k = size < sizeof tmp ? size : sizeof tmp;
		memcpy(tmp, a, k);
		memcpy(a, b, k);
		memcpy(b, tmp, k);
		a += k, b += k, size -= k;
	}
}

typedef int (*cmp_fn)(const void *, const void *);

static void insertion(char *a, size_t n, size_t size, cmp_fn cmp)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cmp(a + (j - 1) * size, a + j * size) > 0; j--)
			swap(a + (j - 1) * size, a + j * size, size);
}

/* Restores the max-heap below root in a[0, n). */
static void sift_down(char *a, size_t root, size_t n, size_t size, cmp_fn cmp)
{
	for (;;) {
		size_t child = 2 * root + 1;
		if (child >= n)
			return;
		if (child + 1 < n && cmp(a + child * size, a + (child + 1) * size) < 0)
			child++;
		if (cmp(a + root * size, a + child * size) >= 0)
			return;
		swap(a + root * size, a + child * size, size);
		root = child;
	}
}

static void heapsort_range(char *a, size_t n, size_t size, cmp_fn cmp)
{
	for (size_t i = n / 2; i-- > 0;)
		sift_down(a, i, n, size, cmp);
	for (size_t end = n; end-- > 1;) {
		swap(a, a + end * size, size);
		sift_down(a, 0, end, size, cmp);
	}
}

/* Puts the median of a[0], a[n/2], a[n-1] at a[0], something no smaller
 * at a[n-1] (the first scan's sentinel). */
static void median_first(char *a, size_t n, size_t size, cmp_fn cmp)
{
	char *mid = a + (n / 2) * size, *last = a + (n - 1) * size;
	if (cmp(mid, a) < 0)
		swap(mid, a, size);
	if (cmp(last, mid) < 0) {
		swap(last, mid, size);
		if (cmp(mid, a) < 0)
			swap(mid, a, size);
	}
	swap(a, mid, size); /* a[0] <= pivot <= a[n-1], pivot first */
}

/* Partitions around a[0]; returns the pivot's final index. */
static size_t partition(char *a, size_t n, size_t size, cmp_fn cmp)
{
	size_t i = 1, j = n - 1;
	for (;;) {
		while (cmp(a + i * size, a) < 0)
			i++;
		while (cmp(a + j * size, a) > 0)
			j--;
		if (i >= j)
			break;
		swap(a + i * size, a + j * size, size);
		i++, j--;
	}
	swap(a, a + j * size, size);
	return j;
}

static void introsort(char *a, size_t n, size_t size, cmp_fn cmp, unsigned depth)
{
	while (n > SMALL) {
		if (depth-- == 0) {
			heapsort_range(a, n, size, cmp);
			return;
		}
		median_first(a, n, size, cmp);
		size_t p = partition(a, n, size, cmp);
		size_t left = p, right = n - p - 1;
		if (left < right) {
			introsort(a, left, size, cmp, depth);
			a += (p + 1) * size, n = right;
		} else {
			introsort(a + (p + 1) * size, right, size, cmp, depth);
			n = left;
		}
	}
	insertion(a, n, size, cmp);
}

void sort_inplace(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	unsigned depth = 0;
	for (size_t k = n; k > 1; k >>= 1)
		depth += 2;
	if (n > 1 && size)
		introsort(base, n, size, cmp, depth);
}
