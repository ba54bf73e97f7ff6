/*
 * restart.h - a system call our sampling signal restarted gives back the
 * EINTR that the program's own signal asked for.  Included by dispatch.c,
 * whose dispatch() runs it first on every delivery of our signal: signal
 * context, no libc, no errno.
 *
 * The problem (CPython's test_siginterrupt_on and test_without_siginterrupt,
 * under `profil record`, about one run in a hundred): a thread blocks in
 * read(); the program's SIGALRM, whose handler has no SA_RESTART, wakes
 * it, and read() leaves the kernel with -ERESTARTSYS.  On that same way
 * out the kernel runs the thread's CPU-timer work (POSIX CPU timers are
 * processed on return to user mode since Linux 5.10 on x86), which queues
 * our sampling signal: its expiry had been seen by a tick while the
 * thread was still in the kernel, on its way into read().  Both signals
 * are now pending, and the kernel takes the thread's own signals before
 * the process's: ours is delivered first, and the restart is decided by
 * the first handler alone.  Ours has SA_RESTART, so read() is restarted;
 * SIGALRM's handler runs on top of ours, and when both have returned the
 * thread blocks in read() again, its EINTR lost, for ever.
 *
 * The repair, from our handler: the kernel has rewound the thread to its
 * `syscall` instruction (rip -= 2, rax = the call's number; rcx still
 * holds the return address the instruction saved, rip + 2).  Our handler
 * blocks every signal but SIGSEGV and SIGBUS (dispatch.c), so the
 * program's signal is still pending, and blocked, while we run.  If one
 * is pending that the interrupted code did not block and whose handler
 * has no SA_RESTART, the call is made to return -EINTR instead, exactly
 * as it would have without us; that signal is delivered as we return.
 * Two system calls (rt_sigpending, rt_sigaction to read a disposition)
 * are made, as inline instructions that touch no errno, and only when
 * the pc is such a restart point.
 *
 * Only for calls that restart with -ERESTARTSYS (a handler without
 * SA_RESTART makes them fail with EINTR): reads and writes, sockets,
 * waits, locks, opens, futex, SysV and POSIX queues.  fork and clone
 * restart with -ERESTARTNOINTR whatever the handler says and must never
 * see EINTR; poll, select, nanosleep and pause return EINTR to any
 * handler and are never rewound for one.  The pc alone cannot tell a
 * rewound call from a thread interrupted just before it executed the
 * instruction, with rcx left equal to rip + 2 by the same call made just
 * before: EINTR there is what that pending signal could have caused a
 * moment later, and it needs such a signal pending too.  x86-64 only.
 */
#ifndef PROFIL_ENGINE_RESTART_H
#define PROFIL_ENGINE_RESTART_H

#include <errno.h>
#include <signal.h>
#include <ucontext.h>
#include <sys/syscall.h>

#if defined(__x86_64__)

struct restart_ksigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

static inline long restart_syscall3(long nr, long a, long b, long c)
{
	register long r10 __asm__("r10") = 8; /* sigsetsize, where taken */
	long ret;
	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10)
	                 : "rcx", "r11", "memory");
	return ret;
}

/* Calls whose -ERESTARTSYS becomes EINTR under a handler without
 * SA_RESTART (signal(7), "Interruption of system calls"). */
static inline int restart_sys_eintr_capable(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_readv: case SYS_writev:
	case SYS_pread64: case SYS_pwrite64: case SYS_preadv: case SYS_pwritev:
	case SYS_preadv2: case SYS_pwritev2: case SYS_open: case SYS_openat:
	case SYS_ioctl: case SYS_fcntl: case SYS_flock: case SYS_wait4:
	case SYS_waitid: case SYS_accept: case SYS_accept4: case SYS_connect:
	case SYS_recvfrom: case SYS_sendto: case SYS_recvmsg: case SYS_sendmsg:
	case SYS_recvmmsg: case SYS_sendmmsg: case SYS_futex: case SYS_msgrcv:
	case SYS_msgsnd: case SYS_mq_timedreceive: case SYS_mq_timedsend:
	case SYS_sendfile: case SYS_splice: case SYS_tee: case SYS_vmsplice:
		return 1;
	}
	return 0;
}

/* own: our sampling signal, which is not the program's to ask for EINTR. */
static inline void restart_give_back_eintr(void *ucontext, int own)
{
	ucontext_t *uc = ucontext;
	greg_t *g = uc->uc_mcontext.gregs;
	const unsigned char *ip = (const unsigned char *)g[REG_RIP];
	if (g[REG_RCX] != g[REG_RIP] + 2 || !restart_sys_eintr_capable(g[REG_RAX]) ||
	    ip[0] != 0x0f || ip[1] != 0x05)
		return;
	unsigned long pending = 0;
	if (restart_syscall3(SYS_rt_sigpending, (long)&pending, 8, 0) != 0)
		return;
	pending &= ~*(const unsigned long *)&uc->uc_sigmask;
	for (int s = 1; s <= 64 && pending; s++) {
		unsigned long bit = 1ul << (s - 1);
		if (!(pending & bit))
			continue;
		pending &= ~bit;
		if (s == own || s == SIGSEGV || s == SIGBUS || s == SIGKILL || s == SIGSTOP)
			continue;
		struct restart_ksigaction old;
		if (restart_syscall3(SYS_rt_sigaction, s, 0, (long)&old) != 0)
			continue;
		if (old.handler == (void *)SIG_DFL || old.handler == (void *)SIG_IGN ||
		    (old.flags & SA_RESTART))
			continue;
		g[REG_RIP] += 2; /* past the instruction: the call has returned */
		g[REG_RAX] = -EINTR;
		return;
	}
}

#else
static inline void restart_give_back_eintr(void *ucontext, int own)
{
	(void)ucontext;
	(void)own;
}
#endif

#endif
