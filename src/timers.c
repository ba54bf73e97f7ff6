/*
 * timers.c - one CPU-time timer per thread.
 *
 * Why not ITIMER_PROF: the process-wide profiling timer is checked against
 * the whole process's CPU time, and its signal goes to whichever thread
 * the kernel picks (usually the main one).  With threads running in
 * parallel it undercounts and misattributes (glibc's profil; Go issue
 * 35057).  A timer on each thread's own CPU clock, delivered to that
 * thread (SIGEV_THREAD_ID), samples every thread at exactly the rate.
 *
 * The kernel checks CPU timers once per tick (CONFIG_HZ, often 250), so
 * at higher rates one signal stands for several expiries; the handler
 * credits 1 + si_overrun, which keeps totals right.
 *
 * Registry: the (tid, timer) pairs we own.  Every function here runs with
 * the engine lock held; the signal handler never looks at the registry.
 */
#include "sampling.h"

#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

const char profil_timer_tag = 'p';

struct entry {
	pid_t tid;
	timer_t timer;
};

static struct entry *reg;    /* engine lock */
static size_t nreg, capreg;  /* engine lock */
static int cur_sig;          /* engine lock; 0 when stopped */
static unsigned int cur_hz;  /* engine lock */
/* Process the timers belong to: written under the engine lock, read
 * without it by exec.c (a vfork child shares this memory, not the timers). */
static _Atomic pid_t owner_pid;

static pid_t my_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The CPU clock of thread tid, as glibc's pthread_getcpuclockid builds it:
 * ~tid << 3 | CPUCLOCK_PERTHREAD (4) | CPUCLOCK_SCHED (2). */
static clockid_t thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned int)tid << 3) | 6u);
}

static struct itimerspec period(unsigned int hz)
{
	struct itimerspec its;
	its.it_interval.tv_sec = 0;
	its.it_interval.tv_nsec = 1000000000L / hz;
	if (its.it_interval.tv_nsec == 0)
		its.it_interval.tv_nsec = 1;
	if (hz == 1) {
		its.it_interval.tv_sec = 1;
		its.it_interval.tv_nsec = 0;
	}
	its.it_value = its.it_interval;
	return its;
}

static int find(pid_t tid)
{
	for (size_t i = 0; i < nreg; i++)
		if (reg[i].tid == tid)
			return (int)i;
	return -1;
}

/* An armed timer on tid's CPU clock that sends cur_sig to tid. */
static int make_timer(pid_t tid, timer_t *out)
{
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = cur_sig;
	sev.sigev_value.sival_ptr = timer_tag(tid);
	sev.sigev_notify_thread_id = tid;
	timer_t id;
	if (timer_create(thread_clock(tid), &sev, &id) != 0)
		return -1; /* EINVAL: the thread has gone; EAGAIN: no timers */
	struct itimerspec its = period(cur_hz);
	if (timer_settime(id, 0, &its, NULL) != 0) {
		int e = errno;
		timer_delete(id);
		errno = e;
		return -1;
	}
	*out = id;
	return 0;
}

static int add(pid_t tid)
{
	if (nreg == capreg) {
		size_t cap = capreg ? capreg * 2 : 16;
		struct entry *n = realloc(reg, cap * sizeof *n);
		if (!n) {
			errno = ENOMEM;
			return -1;
		}
		reg = n, capreg = cap;
	}
	timer_t id;
	if (make_timer(tid, &id) != 0)
		return -1;
	reg[nreg].tid = tid;
	reg[nreg].timer = id;
	nreg++;
	return 0;
}

static void drop(size_t i)
{
	timer_delete(reg[i].timer);
	reg[i] = reg[--nreg];
}

/*
 * Whether the thread a timer samples has exited.  Not "the timer reads
 * disarmed": a periodic CPU timer also reads disarmed from its expiry
 * until its signal is delivered (the kernel rearms it then), which lasts
 * as long as the thread waits for a CPU or blocks the signal; dropping
 * such a timer lost samples under load.  A tid reused by a new thread
 * before this sweep is handled by timers_add_self().
 */
static int thread_gone(pid_t tid)
{
	return syscall(SYS_tgkill, (pid_t)getpid(), tid, 0) != 0 && errno == ESRCH;
}

/* Calls fn(tid) for each thread of the process; -1 if /proc is missing. */
static int each_thread(int (*fn)(pid_t tid, void *arg), void *arg)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	struct dirent *de;
	int rc = 0;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);
		if (de->d_name[0] == '.' || *end != '\0' || tid <= 0)
			continue;
		if (fn((pid_t)tid, arg) != 0) {
			rc = -1;
			break;
		}
	}
	int e = errno;
	closedir(d);
	errno = e;
	return rc;
}

/* The sweeper's own thread is not the program's and is not sampled. */
static _Atomic pid_t excluded_tid; /* atomic: set by the sweeper itself */

void timers_exclude(pid_t tid)
{
	atomic_store(&excluded_tid, tid);
}

/* Cover tid unless it is covered or excluded; a thread that exited between
 * the listing and timer_create (EINVAL) is not an error. */
static int cover(pid_t tid, void *unused)
{
	(void)unused;
	if (tid == atomic_load(&excluded_tid) || find(tid) >= 0)
		return 0;
	if (add(tid) == 0 || errno == EINVAL || errno == ESRCH)
		return 0;
	return -1;
}

int timers_start(int sig, unsigned int hz)
{
	cur_sig = sig;
	cur_hz = hz;
	owner_pid = getpid();
	if (add(my_tid()) != 0 || each_thread(cover, NULL) != 0) {
		int e = errno;
		timers_stop();
		errno = e;
		return -1;
	}
	return 0;
}

void timers_stop(void)
{
	while (nreg > 0)
		drop(nreg - 1);
	cur_sig = 0;
}

/*
 * Move every timer to signal sig, all or nothing: the new timers are made
 * first, and only when all exist are the old ones deleted.  A thread that
 * exited meanwhile (EINVAL) simply loses its entry.
 */
int timers_resignal(int sig)
{
	timer_t *fresh = malloc((nreg ? nreg : 1) * sizeof *fresh);
	if (!fresh) {
		errno = ENOMEM;
		return -1;
	}
	int old = cur_sig;
	cur_sig = sig;
	unsigned char *gone = calloc(nreg ? nreg : 1, 1);
	size_t i;
	for (i = 0; gone && i < nreg; i++)
		if (make_timer(reg[i].tid, &fresh[i]) != 0 && !(gone[i] = errno == EINVAL))
			break;
	if (!gone || i < nreg) {
		int e = gone ? errno : ENOMEM;
		while (i-- > 0)
			if (!gone[i])
				timer_delete(fresh[i]);
		cur_sig = old;
		free(gone);
		free(fresh);
		errno = e;
		return -1;
	}
	for (i = nreg; i-- > 0;) {
		timer_delete(reg[i].timer);
		if (gone[i]) /* entries above i are done: move the last one here */
			reg[i] = reg[--nreg];
		else
			reg[i].timer = fresh[i];
	}
	free(gone);
	free(fresh);
	return 0;
}

int timers_set_hz(unsigned int hz)
{
	cur_hz = hz;
	struct itimerspec its = period(hz);
	for (size_t i = 0; i < nreg; i++)
		timer_settime(reg[i].timer, 0, &its, NULL);
	return 0;
}

int timers_rescan(void)
{
	if (!cur_sig)
		return 0;
	for (size_t i = nreg; i-- > 0;)
		if (thread_gone(reg[i].tid))
			drop(i);
	return each_thread(cover, NULL);
}

int timers_add_self(void)
{
	if (!cur_sig || getpid() != owner_pid)
		return 0;
	pid_t tid = my_tid();
	int i = find(tid);
	if (i >= 0) /* a thread starts once: an entry is an exited thread's */
		drop((size_t)i);
	return add(tid);
}

void timers_remove_self(void)
{
	if (!cur_sig || getpid() != owner_pid)
		return;
	int i = find(my_tid());
	if (i >= 0)
		drop((size_t)i);
}

unsigned int timers_count(void)
{
	return (unsigned int)nreg;
}

unsigned int timers_untimed(void)
{
	return 0;
}

int timers_signal(void)
{
	return cur_sig;
}

unsigned int timers_hz(void)
{
	return cur_hz;
}

pid_t timers_owner(void)
{
	return atomic_load(&owner_pid);
}

void timers_forget_all(void)
{
	nreg = 0;
	owner_pid = getpid();
}
