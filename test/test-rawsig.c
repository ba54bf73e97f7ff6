/*
 * test-rawsig.c - a program that sets signal handlers behind our back.
 *
 * Go's runtime installs its handler for every signal with raw
 * rt_sigaction system calls at start, so no sigaction() interposer sees
 * it.  Before, the library kept sampling on a signal whose handler was
 * now the program's: nothing was sampled, silently, and the program got
 * signals it never asked for.  The sweeper now compares, every 100 ms,
 * what the kernel has with what we installed: the samples move to a free
 * signal, or, with none free or the fault signals taken too, sampling
 * ends with PROFIL_STOP_SIGNAL_TAKEN and the timers go.
 */
#include "safety.h"
#include "rawsig.h"

static atomic_ulong program_got; /* signals the program's handler ran for */

static void program_handler(int sig, siginfo_t *info, void *uc)
{
	(void)sig, (void)info, (void)uc;
	atomic_fetch_add(&program_got, 1);
}

static void start_on_timers(void)
{
	setenv("PROFIL_ENGINE", "timer", 1);
	static unsigned short buf[2];
	ASSERT_OK(profil(buf, sizeof buf, 0, 2));
}

static struct profil_stats stats(void)
{
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	return st;
}

/* Burns CPU until pred() holds, at most `secs` of wall time. */
static int burn_until(int (*pred)(void), double secs)
{
	double end = mono_now() + secs;
	while (mono_now() < end) {
		if (pred())
			return 1;
		burn(0.02);
	}
	return pred();
}

static int first_sig;

static int moved(void)
{
	struct profil_stats st = stats();
	return st.signal != first_sig || st.stopped != PROFIL_STOP_NONE;
}

static int ended(void)
{
	return stats().stopped == PROFIL_STOP_SIGNAL_TAKEN;
}

/* The program takes the sampling signal alone: samples move, keep coming,
 * and none reaches the program's handler. */
TEST_IMPL(safety_raw_sigaction_moves_samples)
{
	if (!RAWSIG_OK)
		return TEST_SKIP_STATUS;
#if RAWSIG_OK
	start_on_timers();
	first_sig = stats().signal;
	ASSERT(first_sig > 0);
	ASSERT_OK(rawsig_set(first_sig, program_handler));
	ASSERT(burn_until(moved, 3));
	struct profil_stats st = stats();
	printf("samples moved from %d to %d\n", first_sig, st.signal);
	ASSERT_EQ(st.stopped, PROFIL_STOP_NONE);
	ASSERT(st.signal > 0 && st.signal != first_sig);
	ASSERT(rawsig_get(first_sig) == (void *)program_handler);
	burn(0.05); /* a sample queued before the move may still arrive */
	atomic_store(&program_got, 0);
	unsigned long long before = st.ticks;
	burn(0.4);
	ASSERT_EQ(atomic_load(&program_got), 0);
	ASSERT(stats().ticks > before + 20); /* 0.4 s at 100 Hz: about 40 */
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT(rawsig_get(first_sig) == (void *)program_handler);
#endif
	return 0;
}

/* As Go does: every signal at once.  Nowhere to move, and fault recovery
 * gone: sampling ends, visibly, and the program keeps its handlers. */
TEST_IMPL(safety_raw_sigaction_on_every_signal_ends_sampling)
{
	if (!RAWSIG_OK)
		return TEST_SKIP_STATUS;
#if RAWSIG_OK
	start_on_timers();
	first_sig = stats().signal;
	ASSERT_EQ(rawsig_set_all(program_handler), 0);
	ASSERT(burn_until(ended, 3));
	struct profil_stats st = stats();
	ASSERT_EQ(st.signal, 0);
	ASSERT_EQ(st.threads, 0);
	burn(0.05);
	atomic_store(&program_got, 0);
	burn(0.4);
	ASSERT_EQ(atomic_load(&program_got), 0);
	ASSERT(rawsig_get(first_sig) == (void *)program_handler);
	ASSERT(rawsig_get(SIGSEGV) == (void *)program_handler);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT(rawsig_get(first_sig) == (void *)program_handler);
	ASSERT(rawsig_get(SIGSEGV) == (void *)program_handler);
#endif
	return 0;
}

/* Only the fault signals: a faulting buffer write could no longer be
 * recovered, so sampling ends rather than risk killing the program. */
TEST_IMPL(safety_raw_sigaction_on_sigsegv_ends_sampling)
{
	if (!RAWSIG_OK)
		return TEST_SKIP_STATUS;
#if RAWSIG_OK
	start_on_timers();
	ASSERT_OK(rawsig_set(SIGSEGV, program_handler));
	ASSERT(burn_until(ended, 3));
	ASSERT_EQ(stats().signal, 0);
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	ASSERT(rawsig_get(SIGSEGV) == (void *)program_handler);
#endif
	return 0;
}
