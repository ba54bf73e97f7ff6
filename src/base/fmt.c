/*
 * fmt.c - the formatting, number parsing and clock reading the library
 * and the agent do when a process starts, in their own code rather than
 * the C library's.
 *
 * Why: the agent starts in every process of a recording, and most of
 * them are short (a shell script's commands, a build's tools).  Each
 * region of the C library's code or data a process touches for the first
 * time is a page fault in that process (the kernel maps a file's pages
 * into each address space on demand, 64 KiB around the one touched),
 * and /bin/true touches little of libc.  snprintf() (vfprintf and its
 * tables), strtoul() and a clock read through the vDSO (its data pages)
 * were 6 page faults of a profiled /bin/true, 10-28 us each on a virtual
 * machine whose page tables the hypervisor shadows: more than the rest
 * of what these calls do.  These stay in the agent's own pages, which
 * the process touches anyway.
 *
 * base_fmt() is snprintf() for the conversions the library uses, and
 * only those: flags '0' and '-', a field width, a precision for %s;
 * length modifiers hh, h, l, ll, z; conversions d i u x X s c %.
 * Anything else is written as it stands ("%y" -> "%y"), which
 * test-fmt.c's comparison with snprintf() would show.  No locale, no
 * allocation, no lock: safe in a signal handler too.
 */
#include "base/base.h"

#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

struct out {
	char *buf;
	size_t size, len; /* len: what would be written, NUL not counted */
};

static void put_char(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_repeat(struct out *o, char c, size_t n)
{
	while (n--)
		put_char(o, c);
}

/* body (n characters, after sign) in a field of width: padding left with
 * spaces or (zero) zeros after the sign, or right (left_align). */
static void put_field(struct out *o, const char *sign, const char *body, size_t n, size_t width,
                      int zero, int left_align)
{
	size_t s = strlen(sign), total = s + n;
	size_t pad = width > total ? width - total : 0;
	if (!left_align && !zero)
		put_repeat(o, ' ', pad);
	for (size_t i = 0; i < s; i++)
		put_char(o, sign[i]);
	if (!left_align && zero)
		put_repeat(o, '0', pad);
	for (size_t i = 0; i < n; i++)
		put_char(o, body[i]);
	if (left_align)
		put_repeat(o, ' ', pad);
}

/* v's digits in base (10 or 16), at the end of tmp[24]; their start. */
static char *digits(unsigned long long v, unsigned base, int upper, char *end)
{
	const char *set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char *p = end;
	do
		*--p = set[v % base];
	while (v /= base);
	return p;
}

struct spec {
	int zero, left, has_prec, len; /* len: -2 hh, -1 h, 0, 1 l, 2 ll, 3 z */
	size_t width, prec;
};

/* The conversion spec after '%' at *f; its conversion character. */
static char parse_spec(const char **f, struct spec *s)
{
	const char *p = *f;
	*s = (struct spec){0};
	for (;; p++) {
		if (*p == '0')
			s->zero = 1;
		else if (*p == '-')
			s->left = 1;
		else
			break;
	}
	while (*p >= '0' && *p <= '9')
		s->width = s->width * 10 + (size_t)(*p++ - '0');
	if (*p == '.') {
		s->has_prec = 1;
		for (p++; *p >= '0' && *p <= '9'; p++)
			s->prec = s->prec * 10 + (size_t)(*p - '0');
	}
	if (*p == 'h')
		s->len = p[1] == 'h' ? (p++, -2) : -1, p++;
	else if (*p == 'l')
		s->len = p[1] == 'l' ? (p++, 2) : 1, p++;
	else if (*p == 'z')
		s->len = 3, p++;
	*f = p + (*p != '\0');
	return *p;
}

static long long signed_arg(va_list *ap, int len)
{
	switch (len) {
	case -2: return (signed char)va_arg(*ap, int);
	case -1: return (short)va_arg(*ap, int);
	case 1: return va_arg(*ap, long);
	case 2: return va_arg(*ap, long long);
	case 3: return (long long)va_arg(*ap, ssize_t);
	default: return va_arg(*ap, int);
	}
}

static unsigned long long unsigned_arg(va_list *ap, int len)
{
	switch (len) {
	case -2: return (unsigned char)va_arg(*ap, unsigned);
	case -1: return (unsigned short)va_arg(*ap, unsigned);
	case 1: return va_arg(*ap, unsigned long);
	case 2: return va_arg(*ap, unsigned long long);
	case 3: return va_arg(*ap, size_t);
	default: return va_arg(*ap, unsigned);
	}
}

static void convert(struct out *o, char c, const struct spec *s, va_list *ap)
{
	char tmp[24], *end = tmp + sizeof tmp;
	const char *sign = "";
	const char *body;
	size_t n;
	switch (c) {
	case 'd':
	case 'i': {
		long long v = signed_arg(ap, s->len);
		unsigned long long m = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
		sign = v < 0 ? "-" : "";
		body = digits(m, 10, 0, end);
		break;
	}
	case 'u':
	case 'x':
	case 'X':
		body = digits(unsigned_arg(ap, s->len), c == 'u' ? 10 : 16, c == 'X', end);
		break;
	case 'c':
		tmp[0] = (char)va_arg(*ap, int);
		put_field(o, "", tmp, 1, s->width, 0, s->left);
		return;
	case 's': {
		const char *str = va_arg(*ap, const char *);
		str = str ? str : "(null)";
		n = s->has_prec ? strnlen(str, s->prec) : strlen(str);
		put_field(o, "", str, n, s->width, 0, s->left);
		return;
	}
	default:
		return;
	}
	n = (size_t)(end - body);
	put_field(o, sign, body, n, s->width, s->zero, s->left);
}

int base_vfmt(char *buf, size_t size, const char *f, va_list ap)
{
	struct out o = {buf, size, 0};
	va_list args;
	va_copy(args, ap);
	while (*f) {
		if (*f != '%') {
			put_char(&o, *f++);
			continue;
		}
		const char *at = f++;
		if (*f == '%') {
			put_char(&o, '%');
			f++;
			continue;
		}
		struct spec s;
		char c = parse_spec(&f, &s);
		if (c && strchr("diuxXcs", c))
			convert(&o, c, &s, &args);
		else
			while (at < f) /* not ours: as it stands */
				put_char(&o, *at++);
	}
	va_end(args);
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return o.len > 0x7fffffff ? -1 : (int)o.len;
}

int base_fmt(char *buf, size_t size, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = base_vfmt(buf, size, f, ap);
	va_end(ap);
	return n;
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

/* strtoull()'s parse in base 10 or 16: blanks, a sign, 0x (base 16),
 * digits; *neg the sign, 1 overflow.  *end at the first unread character,
 * s itself when no digit was read. */
static int parse(const char *s, char **end, int base, int *neg, unsigned long long *v)
{
	const char *p = s;
	int over = 0;
	*neg = 0;
	*v = 0;
	while (*p == ' ' || (*p >= '\t' && *p <= '\r'))
		p++;
	if (*p == '+' || *p == '-')
		*neg = *p++ == '-';
	if (base == 16 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && digit_value(p[2]) < 16)
		p += 2;
	const char *first = p;
	for (int d; (d = digit_value(*p)) < base; p++) {
		if (*v > (~0ull - (unsigned)d) / (unsigned)base)
			over = 1;
		*v = *v * (unsigned)base + (unsigned)d;
	}
	if (end)
		*end = (char *)(p == first ? s : p);
	return over;
}

unsigned long long base_strtoull(const char *s, char **end, int base)
{
	int neg;
	unsigned long long v;
	if (parse(s, end, base, &neg, &v))
		return ~0ull;
	return neg ? 0ull - v : v;
}

long long base_strtoll(const char *s, char **end, int base)
{
	int neg;
	unsigned long long v;
	int over = parse(s, end, base, &neg, &v);
	unsigned long long limit = neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
	if (over || v > limit)
		return neg ? LLONG_MIN : LLONG_MAX;
	if (neg)
		return v == limit ? LLONG_MIN : -(long long)v;
	return (long long)v;
}

/* For a CPU-time clock the vDSO makes this system call itself, after
 * reading its data pages: straight to the kernel is cheaper as well. */
int base_clock_read(clockid_t clock, struct timespec *ts)
{
	return syscall(SYS_clock_gettime, clock, ts) == 0 ? 0 : -1;
}

int64_t base_clock_ns(clockid_t clock)
{
	struct timespec ts;
	if (base_clock_read(clock, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
