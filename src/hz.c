/*
 * hz.c - the sampling rate: PROFIL_HZ in the environment sets the default
 * (read once, at first use), profil_set_hz() changes it at any time.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

/* 0 until first read; then the rate.  Atomic: read without the lock. */
static _Atomic unsigned int rate;

static unsigned int from_env(void)
{
	const char *s = getenv("PROFIL_HZ");
	if (!s || !*s)
		return PROFIL_HZ_DEFAULT;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*end || v == 0 || v > PROFIL_HZ_MAX)
		return PROFIL_HZ_DEFAULT; /* documented: a bad value is ignored */
	return (unsigned int)v;
}

unsigned int hz_current(void)
{
	unsigned int hz = atomic_load(&rate);
	if (hz == 0) {
		unsigned int zero = 0;
		hz = from_env();
		if (!atomic_compare_exchange_strong(&rate, &zero, hz))
			hz = zero;
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
