/*
 * sampling.h - declarations shared by the signal-context code (sample.c)
 * and the code that installs it (signals.c, fault.c).  Separate from
 * internal.h because <signal.h> with _GNU_SOURCE pulls in <unistd.h>, whose
 * nonnull declaration of profil() profil.c must not see (docs/contract.md,
 * "The classic call").
 */
#ifndef PROFIL_SAMPLING_H
#define PROFIL_SAMPLING_H

#include <signal.h>
#include <stdint.h>

#include "internal.h"

/* sample.c: the handler installed for the sampling signal. */
HIDDEN void sample_handler(int sig, siginfo_t *info, void *uc);
/* Per-thread recovery point armed by sample.c around its writes into
 * callers' buffers (a __builtin_setjmp buffer); fault.c jumps to it when
 * sample_writing is set on the faulting thread. */
extern __thread void *sample_recover[5] HIDDEN;
extern __thread volatile int sample_writing HIDDEN;
/* This thread is inside the sampling handler; a signal sent meanwhile
 * made it give up the sample (fault.c sets it, sample.c reads it). */
extern __thread volatile int sample_active HIDDEN;
extern __thread volatile int sample_abandon HIDDEN;
/* Its address identifies our timers' signals (defined in timers.c). */
extern const char profil_timer_tag HIDDEN;

/*
 * The sigev_value our timer for thread tid carries.  On 64-bit systems the
 * high half is the low 32 bits of &profil_timer_tag (unique to this copy
 * of the library in the process) and the low half is tid, so the handler
 * learns which thread it interrupted with no system call.  On 32-bit
 * systems the value is &profil_timer_tag alone and the tid reads as 0.
 */
static inline void *timer_tag(pid_t tid)
{
#if UINTPTR_MAX > 0xffffffffu
	return (void *)(((uintptr_t)(uint32_t)(uintptr_t)&profil_timer_tag << 32) |
	                (uint32_t)tid);
#else
	(void)tid;
	return (void *)&profil_timer_tag;
#endif
}

/* Whether si is one of our timers' expiries (not a kill(2), nor a timer
 * of the program's on the same signal). */
static inline int timer_tag_ours(const siginfo_t *si)
{
	if (si->si_code != SI_TIMER)
		return 0;
#if UINTPTR_MAX > 0xffffffffu
	return ((uintptr_t)si->si_value.sival_ptr >> 32) ==
	       (uint32_t)(uintptr_t)&profil_timer_tag;
#else
	return si->si_value.sival_ptr == &profil_timer_tag;
#endif
}

static inline pid_t timer_tag_tid(const siginfo_t *si)
{
	return (pid_t)(uint32_t)(uintptr_t)si->si_value.sival_ptr;
}

#endif /* PROFIL_SAMPLING_H */
