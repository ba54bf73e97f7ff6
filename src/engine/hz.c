/*
 * hz.c - the sampling rate: PROFIL_HZ in the environment sets the default
 * (read once, at first use), profil_set_hz() changes it at any time.  A
 * PROFIL_HZ that is not a number is reported on stderr and the default is
 * used; one out of range is reported and clamped to 1..PROFIL_HZ_MAX.
 */
#include "engine/engine_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Written with one write(2): a line that other output cannot split. */
void env_warning(const char *name, const char *value, const char *what)
{
	char line[256];
	int n = base_fmt(line, sizeof line, "profil: %s=%.64s %s\n", name, value, what);
	if (n > (int)sizeof line - 1)
		n = (int)sizeof line - 1, line[n - 1] = '\n';
	if (n > 0) {
		ssize_t w = write(2, line, (size_t)n);
		(void)w;
	}
}

/* 0 until first read; then the rate.  Atomic: read without the lock. */
static _Atomic unsigned int rate;

static unsigned int from_env(void)
{
	const char *s = profil_getenv("PROFIL_HZ");
	if (!s || !*s)
		return PROFIL_HZ_DEFAULT;
	char *end, what[96];
	errno = 0;
	long long v = base_strtoll(s, &end, 10);
	if (*end || end == s) {
		base_fmt(what, sizeof what, "is not a number; using the default, %u",
		         PROFIL_HZ_DEFAULT);
		env_warning("PROFIL_HZ", s, what);
		return PROFIL_HZ_DEFAULT;
	}
	if (v < 1 || v > PROFIL_HZ_MAX || errno == ERANGE) {
		unsigned int c = v < 1 ? 1 : PROFIL_HZ_MAX;
		base_fmt(what, sizeof what, "is outside 1..%u; using %u", PROFIL_HZ_MAX, c);
		env_warning("PROFIL_HZ", s, what);
		return c;
	}
	return (unsigned int)v;
}

static void read_env(void)
{
	unsigned int zero = 0, hz = from_env();
	atomic_compare_exchange_strong(&rate, &zero, hz);
}

unsigned int hz_current(void)
{
	unsigned int hz = atomic_load(&rate);
	if (hz == 0) {
		/* Once per process, so the warning is printed once. */
		static pthread_once_t once = PTHREAD_ONCE_INIT;
		pthread_once(&once, read_env);
		hz = atomic_load(&rate);
	}
	return hz;
}

unsigned int profil_hz(void)
{
	return hz_current();
}

int profil_set_hz(unsigned int hz)
{
	if (hz == 0 || hz > PROFIL_HZ_MAX) {
		errno = EINVAL;
		return -1;
	}
	engine_lock();
	atomic_store(&rate, hz);
	if (timers_signal())
		timers_set_hz(hz);
	engine_unlock();
	return 0;
}
