/*
 * rawsig.h - a signal handler installed as Go's runtime installs its own:
 * a raw rt_sigaction system call, which no sigaction() interposer sees:
 * by the instruction, as Go makes it (libc's syscall() is the profil
 * agent's, which takes an rt_sigaction as sigaction() does: agent/rawsig.c).
 * x86-64 only (the kernel's struct and a restorer of our own, glibc's
 * __restore_rt not being exported); RAWSIG_OK is 0 elsewhere.
 *
 * Include it in one file of a program: the restorer is a local symbol of
 * that file's object.
 */
#ifndef PROFIL_TEST_RAWSIG_H
#define PROFIL_TEST_RAWSIG_H

#include <signal.h>
#include <unistd.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define RAWSIG_OK 1

/* What the kernel runs when a handler returns: rt_sigreturn (15). */
__asm__(".text\n"
        ".p2align 4\n"
        "rawsig_restore_rt:\n"
        "\tmovq $15, %rax\n"
        "\tsyscall\n"
        "\thlt\n");
void rawsig_restore_rt(void) __asm__("rawsig_restore_rt");

struct rawsig_kaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

#define RAWSIG_SA_RESTORER 0x04000000UL

/* rt_sigaction (13) by the syscall instruction: 0, or -errno. */
static inline long rawsig_rt_sigaction(long sig, const void *act, void *oact)
{
	long ret;
	register long r10 __asm__("r10") = 8; /* sigsetsize */
	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "0"(13L), "D"(sig), "S"(act), "d"(oact), "r"(r10)
	                 : "rcx", "r11", "memory");
	return ret;
}

/* Go's flags and mask: SA_ONSTACK | SA_RESTART | SA_SIGINFO, all blocked. */
static inline int rawsig_set(int sig, void (*fn)(int, siginfo_t *, void *))
{
	struct rawsig_kaction a = {(void *)fn,
	                           SA_SIGINFO | SA_ONSTACK | SA_RESTART | RAWSIG_SA_RESTORER,
	                           (void *)rawsig_restore_rt, ~0UL};
	return (int)rawsig_rt_sigaction(sig, &a, (void *)0);
}

/* The handler the kernel has for sig. */
static inline void *rawsig_get(int sig)
{
	struct rawsig_kaction a;
	if (rawsig_rt_sigaction(sig, (void *)0, &a) != 0)
		return (void *)0;
	return a.handler;
}

/* Every signal a Go program takes at start (all but SIGKILL, SIGSTOP and
 * glibc's own 32 and 33); returns how many failed. */
static inline int rawsig_set_all(void (*fn)(int, siginfo_t *, void *))
{
	int failed = 0;
	for (int sig = 1; sig < 65; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != 32 && sig != 33)
			failed += rawsig_set(sig, fn) != 0;
	return failed;
}
#else
#define RAWSIG_OK 0
#endif

#endif
