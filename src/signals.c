/*
 * signals.c - which signal carries samples, and its disposition.
 *
 * SIGPROF by default.  If the program already owns SIGPROF (a handler, or
 * SIG_IGN, or an armed ITIMER_PROF), we take the highest real-time signal
 * whose disposition is SIG_DFL instead, and leave the program's SIGPROF
 * and ITIMER_PROF alone.  PROFIL_SIGNAL (a number, "PROF", "SIGPROF",
 * "RTMIN+n" or "RTMAX-n") overrides the choice.
 *
 * All functions run with the engine lock held.  They call sigaction()
 * through its public symbol, so that whoever interposes it (a sanitizer
 * runtime, which must see every handler) sees ours; our own interposer
 * (sigwrap.c) passes them straight to libc, because this thread holds
 * the engine lock (engine_held_here()).
 */
#include "sampling.h"
#include "fault.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>

static struct sigaction saved;  /* engine lock: disposition we replaced */
static int installed;           /* engine lock: signal we installed, or 0 */
/* The same signal, for sigwrap.c to read without the lock: atomic. */
static _Atomic int sampling;

/* Reached from sigaction(), which a sanitizer runtime calls before
 * instrumented code may run: not instrumented for TSan (see fault.h). */
NO_TSAN int signal_sampling(void)
{
	return atomic_load(&sampling);
}

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

/* Parses PROFIL_SIGNAL; returns the signal or -1. */
static int parse_signal(const char *s)
{
	if (strncasecmp(s, "SIG", 3) == 0)
		s += 3;
	char *end;
	long n;
	if (strcasecmp(s, "PROF") == 0)
		return SIGPROF;
	if (strncasecmp(s, "RTMIN", 5) == 0) {
		n = s[5] ? strtol(s + 5, &end, 10) : 0;
		if (s[5] && *end)
			return -1;
		n += SIGRTMIN;
	} else if (strncasecmp(s, "RTMAX", 5) == 0) {
		n = s[5] ? strtol(s + 5, &end, 10) : 0;
		if (s[5] && *end)
			return -1;
		n += SIGRTMAX;
	} else {
		n = strtol(s, &end, 10);
		if (*s == '\0' || *end)
			return -1;
	}
	if (n != SIGPROF && (n < SIGRTMIN || n > SIGRTMAX))
		return -1;
	return (int)n;
}

/* A real-time signal other than `not` whose disposition is SIG_DFL. */
static int free_rt_signal(int not)
{
	for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--)
		if (sig != not && is_default(sig))
			return sig;
	errno = EAGAIN;
	return -1;
}

int signal_choose(void)
{
	const char *env = getenv("PROFIL_SIGNAL");
	if (env && *env) {
		int sig = parse_signal(env);
		if (sig > 0)
			return sig;
		/* An unusable override is ignored rather than failing profil():
		 * the default choice below is always safe. */
	}
	if (is_default(SIGPROF) && !prof_timer_armed())
		return SIGPROF;
	return free_rt_signal(0);
}

static void our_action(struct sigaction *sa);

int signal_install(int sig)
{
	struct sigaction sa;
	our_action(&sa);
	if (sigaction(sig, &sa, &saved) != 0)
		return -1;
	installed = sig;
	atomic_store(&sampling, sig);
	return 0;
}

static void our_action(struct sigaction *out)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = sample_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	/*
	 * Nothing may interrupt the handler: a program handler that ran on
	 * top of it and siglongjmp'd away would leave profil_inflight raised
	 * for ever, and the next engine_publish() would wait for ever.  The
	 * synchronous fault signals stay unblocked: the kernel kills a
	 * process whose fault signal is blocked, and fault.c must catch a
	 * write into a buffer that went bad.
	 */
	sigfillset(&sa.sa_mask);
	sigdelset(&sa.sa_mask, SIGSEGV);
	sigdelset(&sa.sa_mask, SIGBUS);
	sigdelset(&sa.sa_mask, SIGILL);
	sigdelset(&sa.sa_mask, SIGFPE);
	sigdelset(&sa.sa_mask, SIGTRAP);
	*out = sa;
}

/*
 * Called after every timer is deleted, so nothing generates the signal any
 * more; but an expiry may still be pending on some thread.  Setting the
 * disposition to SIG_IGN discards pending instances in every thread
 * (POSIX), so restoring a SIG_DFL that would kill the process is safe.
 */
void signal_restore(void)
{
	if (!installed)
		return;
	struct sigaction ign;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(installed, &ign, NULL);
	sigaction(installed, &saved, NULL);
	installed = 0;
	atomic_store(&sampling, 0);
}

/* Engine lock held: samples move to another signal, old goes to act. */
static int move_sampling(int old, const struct sigaction *act, struct sigaction *oact)
{
	int sig = free_rt_signal(old);
	struct sigaction ours, prev, ign;
	our_action(&ours);
	if (sig < 0 || sigaction(sig, &ours, &prev) != 0)
		return -1;
	if (timers_resignal(sig) != 0) {
		sigaction(sig, &prev, NULL);
		return -1;
	}
	if (oact)
		*oact = saved; /* what the program had before we came */
	/* An expiry of a deleted timer may still be queued for old (older
	 * kernels keep it): discard it rather than hand it to the program. */
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(old, &ign, NULL);
	sigaction(old, act, NULL);
	saved = prev;
	installed = sig;
	atomic_store(&sampling, sig);
	return 0;
}

/*
 * A program that installs its own handler for SIGPROF after profiling
 * started on it (profiling often starts first: LD_PRELOAD, a constructor)
 * keeps its handler and its ITIMER_PROF working: samples move to a free
 * real-time signal, all timers at once, and the program gets SIGPROF.
 * Not from a signal handler that interrupted our own configuration code
 * on this thread (the lock is ours), nor when no signal is free: then the
 * call goes to libc unchanged and the program's handler sees our samples.
 */
int signal_hand_over(int sig, const struct sigaction *act, struct sigaction *oact)
{
	if (engine_held_here())
		return -1;
	engine_lock();
	int rc = installed == sig ? move_sampling(sig, act, oact) : -1;
	engine_unlock();
	return rc;
}
