/*
 * test-fmt.c - the library's own snprintf, strtoull and strtoll
 * (src/base/fmt.c) against the C library's: the same characters, lengths
 * and truncation for every conversion the library writes, and the same
 * values and end pointers for every string shape the library parses.
 */
#include "runner.h"
#include "../src/base/base.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* base_fmt and snprintf of one format and argument, at every buffer size
 * from 0 to past the whole output. */
#define SAME(fmt, ...)                                                                     \
	do {                                                                               \
		char want[256], got[256];                                                  \
		int wn = snprintf(want, sizeof want, fmt, __VA_ARGS__);                    \
		for (size_t size = 0; size <= (size_t)wn + 2; size++) {                    \
			char w[256], g[256];                                               \
			memset(w, 'W', sizeof w), memset(g, 'W', sizeof g);                \
			int a = snprintf(w, size, fmt, __VA_ARGS__);                       \
			int b = base_fmt(g, size, fmt, __VA_ARGS__);                       \
			if (a != b || memcmp(w, g, sizeof w) != 0)                         \
				FAIL_AT("\"%s\" at size %zu: \"%.*s\" (%d), want \"%.*s\" (%d)", \
				        fmt, size, (int)size, g, b, (int)size, w, a);      \
		}                                                                          \
		(void)got;                                                                 \
	} while (0)

TEST_IMPL(fmt_matches_snprintf)
{
	static const long long ints[] = {0, 1, -1, 9, 10, -10, 255, 4096, 65535, 2147483647,
	                                 -2147483647 - 1, 4294967295LL, LLONG_MAX, LLONG_MIN};
	for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
		long long v = ints[i];
		SAME("%d", (int)v);
		SAME("%i|%5d|%-5d|%05d", (int)v, (int)v, (int)v, (int)v);
		SAME("%u %x %X %08x %02x", (unsigned)v, (unsigned)v, (unsigned)v, (unsigned)v,
		     (unsigned)v);
		SAME("%ld %lu %lx %09ld", (long)v, (unsigned long)v, (unsigned long)v, (long)v);
		SAME("%lld %llu %llx", v, (unsigned long long)v, (unsigned long long)v);
		SAME("%zu %zx", (size_t)v, (size_t)v);
		SAME("%hd %hu %hhd %hhu", (short)v, (unsigned short)v, (signed char)v,
		     (unsigned char)v);
	}
	static const char *strs[] = {"", "a", "/proc/self/fd/3", "profil-record.AbC123",
	                             ("a string longer than sixty-four characters, so that "
	                              "%.64s cuts it where snprintf does")};
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
		const char *s = strs[i];
		SAME("%s", s);
		SAME("[%s/%s.%d]", s, s, 7);
		SAME("%.64s|%.0s|%.3s|%10s|%-10s|", s, s, s, s, s);
		SAME("%c%c%%%s", 'x', '%', s);
	}
	/* the library's own formats, as its callers write them */
	SAME("%d.%u.ring", 12345, 0u);
	SAME("/proc/self/task/%d/fd/%d", 77, 5);
	SAME("PROFIL-RING %s %zu", "tok", (size_t)1 << 40);
	SAME("%d:%llu:%llu", 3, 66306ull, 123456789012ull);
	SAME("file-%lx-%lx-%lx-%lx.%09ld", 0x803ul, 0x1234ul, 0x10ul, 0x65f0c2aul, 42L);
	SAME("%s/uw%08x-%s-%lx", "/c", 0x38574e55u, "4178c06f", 0x2119aa4ul);
	SAME("profil: %s=%.64s %s\n", "PROFIL_HZ", "abc", "is not a number");
	return 0;
}

TEST_IMPL(fmt_conversions_it_does_not_know_are_written_as_they_stand)
{
	char buf[64];
	const char *volatile f = "a%yb%"; /* not a literal: the compiler would refuse it */
	int n = base_fmt(buf, sizeof buf, f, 0);
	if (n != 5 || strcmp(buf, "a%yb%") != 0)
		FAIL_AT("\"%s\" (%d), want \"a%%yb%%\" (5)", buf, n);
	return 0;
}

/* base_strtoull/strtoll against strtoull/strtoll on one string and base. */
static void same_parse(const char *s, int base)
{
	char *we, *ge;
	unsigned long long wu = strtoull(s, &we, base), gu = base_strtoull(s, &ge, base);
	if (wu != gu || we != ge)
		FAIL_AT("base_strtoull(\"%s\", %d): %llu, end +%td; want %llu, +%td", s, base, gu,
		        ge - s, wu, we - s);
	long long ws = strtoll(s, &we, base), gs = base_strtoll(s, &ge, base);
	if (ws != gs || we != ge)
		FAIL_AT("base_strtoll(\"%s\", %d): %lld, end +%td; want %lld, +%td", s, base, gs,
		        ge - s, ws, we - s);
}

TEST_IMPL(fmt_parses_as_strtoull_and_strtoll)
{
	static const char *cases[] = {
		"0", "7", "42", "  42", "\t\n42x", "+42", "-42", "-0", "", " ", "x", "-", "+",
		"4294967295", "4294967296", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "-9223372036854775809", "18446744073709551615",
		"18446744073709551616", "99999999999999999999999", "-18446744073709551615",
		"0x10", "0X1f", "0x", "0xg", "ff", "FF", "7fffffffffffffff", "ffffffffffffffff",
		"1ffffffffffffffff", "00400000-00452000", "12:34", "123 456",
		"7f1c2a3b4000-7f1c2a3b6000 r-xp 00001000 08:01 131074 /usr/lib/x.so",
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		same_parse(cases[i], 10);
		same_parse(cases[i], 16);
	}
	return 0;
}

TEST_IMPL(fmt_clock_reads_the_kernels_clock)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t before = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	int64_t got = base_clock_ns(CLOCK_MONOTONIC);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t after = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	if (got < before || got > after)
		FAIL_AT("base_clock_ns(CLOCK_MONOTONIC) %lld outside [%lld, %lld]", (long long)got,
		        (long long)before, (long long)after);
	if (base_clock_ns((clockid_t)12345) != 0)
		FAIL_AT("a clock that does not exist read as nonzero");
	return 0;
}
