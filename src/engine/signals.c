/*
 * signals.c - which signal carries samples.
 *
 * SIGPROF by default.  If the program already owns SIGPROF (a handler, or
 * SIG_IGN, or an armed ITIMER_PROF, or a thread that blocks it to take it
 * with sigwait() or a signalfd), we take the highest real-time signal that
 * is free in the same sense, and leave the program's SIGPROF and
 * ITIMER_PROF alone.  PROFIL_SIGNAL (a number, "PROF", "SIGPROF",
 * "RTMIN+n" or "RTMAX-n") overrides the choice; a value that names no
 * such signal is reported once on stderr and the default is used.
 *
 * A thread that blocks every real-time signal (a helper thread of a
 * runtime, glibc's SIGEV_THREAD thread, our own sweeper) consumes none of
 * them in particular; it does not make a signal taken.
 *
 * Engine lock held for all of these; not in signal context.  The
 * installed signal, its handler and the program's view of it live in
 * handover.c.
 */
#include "engine/sampling.h"
#include "engine/engine_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

/* Disposition SIG_DFL, as the program sees it (our interposer answers
 * for the signals we own). */
static int is_default(int sig)
{
	struct sigaction sa;
	return sigaction(sig, NULL, &sa) == 0 && !(sa.sa_flags & SA_SIGINFO) &&
	       sa.sa_handler == SIG_DFL;
}

static int prof_timer_armed(void)
{
	struct itimerval it;
	return getitimer(ITIMER_PROF, &it) == 0 &&
	       (it.it_value.tv_sec != 0 || it.it_value.tv_usec != 0);
}

/* Bit of sig in a /proc status mask (bit 0 is signal 1). */
#define SIGBIT(sig) (1ull << ((sig) - 1))

/* The calling thread's blocked mask, from the kernel without /proc: the
 * status file (stdio, a line-by-line scan) cost each process's start
 * 50-100 us, and at start the caller is usually the only thread. */
static unsigned long long blocked_here(void)
{
	sigset_t cur;
	unsigned long long m = 0;
	if (fault_raw_sigmask(SIG_BLOCK, NULL, &cur) != 0)
		return 0;
	for (int s = 1; s <= 64; s++)
		if (sigismember(&cur, s) == 1)
			m |= SIGBIT(s);
	return m;
}

/*
 * Signals some thread blocks while leaving other real-time signals
 * deliverable: those a sigwait() or signalfd consumer keeps for itself.
 * A thread that blocks all but two real-time signals or fewer blocks
 * "everything": its mask can leave out what cannot be blocked (valgrind
 * keeps SIGRTMAX for itself), and a consumer keeps a few, not all.
 */
struct consumed {
	pid_t self;
	unsigned long long rt, all;
};

static int add_consumer(pid_t tid, void *arg)
{
	struct consumed *c = arg;
	unsigned long long m = tid == c->self ? blocked_here() : engine_blocked_mask(tid);
	if (__builtin_popcountll(c->rt & ~m) > 2)
		c->all |= m;
	return 0;
}

static unsigned long long consumed_signals(void)
{
	struct consumed c = {(pid_t)syscall(SYS_gettid), 0, 0};
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		c.rt |= SIGBIT(s);
	if (tasklist_each(add_consumer, &c) < 0)
		return 0;
	return c.all;
}

static int is_free(int sig, unsigned long long consumed)
{
	return !(consumed & SIGBIT(sig)) && is_default(sig);
}

static int free_rt(int not, unsigned long long consumed)
{
	for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--)
		if (sig != not && is_free(sig, consumed))
			return sig;
	errno = EAGAIN;
	return -1;
}

/* A real-time signal other than `not` that is free; -1 EAGAIN if none. */
int signal_free_rt(int not)
{
	return free_rt(not, consumed_signals());
}

/* "+n" / "-n" after RTMIN or RTMAX: the offset, or 0 with *ok cleared. */
static long offset_of(const char *s, int *ok)
{
	if (!*s)
		return 0;
	char *end;
	errno = 0;
	long n = base_strtoll(s, &end, 10);
	if ((*s != '+' && *s != '-') || *end || errno)
		*ok = 0;
	return n;
}

/* Parses PROFIL_SIGNAL; returns the signal or -1. */
static int parse_signal(const char *s)
{
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	if (strcasecmp(s, "PROF") == 0)
		return SIGPROF;
	int ok = 1;
	long n;
	if (strncasecmp(s, "RTMIN", 5) == 0) {
		n = SIGRTMIN + offset_of(s + 5, &ok);
	} else if (strncasecmp(s, "RTMAX", 5) == 0) {
		n = SIGRTMAX + offset_of(s + 5, &ok);
	} else {
		char *end;
		errno = 0;
		n = base_strtoll(s, &end, 10);
		ok = *s && !*end && !errno;
	}
	if (!ok || (n != SIGPROF && (n < SIGRTMIN || n > SIGRTMAX)))
		return -1;
	return (int)n;
}

int signal_choose(void)
{
	static _Atomic int warned;
	const char *env = profil_getenv("PROFIL_SIGNAL");
	if (env && *env) {
		int sig = parse_signal(env);
		if (sig > 0)
			return sig;
		if (!atomic_exchange(&warned, 1))
			env_warning("PROFIL_SIGNAL", env,
			            "names neither SIGPROF nor a real-time signal; choosing one");
	}
	unsigned long long consumed = consumed_signals();
	int prof_free = is_free(SIGPROF, consumed) && !prof_timer_armed();
	if (prof_free && !signal_avoid_prof)
		return SIGPROF;
	int rt = free_rt(0, consumed);
	return rt < 0 && prof_free ? SIGPROF : rt;
}

int signal_avoid_prof;
