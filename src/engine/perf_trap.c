/*
 * perf_trap.c - whether the perf engine may deliver by attr.sigtrap (the
 * events themselves are held by mappings: perf_mapped.c).
 *
 * The kernel gate.  Linux 5.13 added sigtrap, but until 6.11 (commit
 * c5d93d23a260, "perf: Enqueue SIGTRAP always via task_work") the signal
 * was sent from the irq_work, as fasync's is, and broke blocking system
 * calls the same way.  The task-work path then had fixes for hangs found
 * by syzkaller (a task hung in _free_event, reported on 6.12-rc4; the
 * same pending work queued twice, looping in task_work_run, fixed in
 * 2025), so the gate is the first release after those as we read them:
 * 6.16.  A distribution kernel that backported them is refused too;
 * fasync or the timers serve it.
 *
 * What sigtrap delivery costs the program, measured on 6.18
 * (bench/perf-engine.md): a trap queued as task work while the thread is
 * in the kernel arrives when it returns to user mode, even after the
 * event is disabled and closed (so handover.c keeps its handler on
 * SIGTRAP after a stop: signal_restore()), and an exec made with an
 * event still enabled on the calling thread gets the trap in the new
 * program, which dies of it (so exec.c disables every event before the
 * exec; a raw execve system call that bypasses libc is not seen).
 */
#include "engine/perf_trap.h"
#include "unwind/unwind.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

_Atomic int64_t perf_trap_period;

#define GATE_MAJOR 6
#define GATE_MINOR 16

/* "6.18.44-..." at least GATE_MAJOR.GATE_MINOR. */
static int kernel_ok(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;
	if (uname(&u) != 0)
		return 0;
	const char *p = u.release;
	while (*p >= '0' && *p <= '9')
		major = major * 10 + (unsigned)(*p++ - '0');
	if (*p++ != '.')
		return 0;
	while (*p >= '0' && *p <= '9')
		minor = minor * 10 + (unsigned)(*p++ - '0');
	return major > GATE_MAJOR || (major == GATE_MAJOR && minor >= GATE_MINOR);
}

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif
#ifndef UNDER_TSAN
#define UNDER_TSAN 0
#endif

/* valgrind runs its tool with vgpreload_*.so in the client's LD_PRELOAD
 * (engine_int.h).  Here: it takes a SIGTRAP from the kernel for a
 * synchronous one, raised by the guest instruction it was emulating. */
int engine_under_valgrind(void)
{
	const char *p = profil_getenv("LD_PRELOAD");
	return p && strstr(p, "/vgpreload_") != NULL;
}

/*
 * Go's runtime installs a handler for every signal with raw rt_sigaction
 * system calls at its start, where no interposer sees it, and takes a
 * SIGTRAP it did not raise as fatal ("SIGTRAP: trace trap", sigcode 6):
 * a Go program without cgo, dynamically linked, died at its first sample
 * after that.  A sigtrap event cannot move to another signal
 * (handover.c), a real-time one can, and Go's handler ignores those until
 * the sweeper moves or ends sampling; so a Go program samples on one.
 * Known by the note Go's linker puts in every executable (owner "Go",
 * type 4: the Go build ID), in the first object dl_iterate_phdr lists
 * (the program): uw_has_go_note().
 */
static int main_program_notes(struct dl_phdr_info *info, size_t size, void *out)
{
	(void)size;
	*(int *)out = uw_has_go_note(info);
	return 1; /* the first object is the program */
}

/* Read once, at load: a forked child must not call dl_iterate_phdr (the
 * loader's lock may have been held by another thread of the parent at
 * the fork, and stays held for ever in the child: the stress mix's
 * forked children hung in profil() so), and the program only changes at
 * exec, which loads us anew. */
static int go_main;

/* Before the agent's constructor, which starts the engine (priority 101:
 * ahead of every constructor without one). */
__attribute__((constructor(101))) static void go_program(void)
{
	dl_iterate_phdr(main_program_notes, &go_main);
}

int perf_trap_usable(int traced)
{
	/* TSan runs a synchronous signal's handler at once, in the middle
	 * of its own runtime, and SIGTRAP is one it takes as synchronous. */
	if (!PERF_TRAP_ARCH || UNDER_TSAN || engine_under_valgrind() || go_main)
		return 0;
	return !traced && kernel_ok(); /* a tracer sees every SIGTRAP first */
}
