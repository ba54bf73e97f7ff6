/*
 * sampling.h - declarations shared by the signal-context code (sample.c)
 * and the code that installs it (signals.c, fault.c).  Separate from
 * internal.h because <signal.h> with _GNU_SOURCE pulls in <unistd.h>, whose
 * nonnull declaration of profil() profil.c must not see (SPEC.md §1).
 */
#ifndef PROFIL_SAMPLING_H
#define PROFIL_SAMPLING_H

#include <signal.h>

#include "internal.h"

/* sample.c: the handler installed for the sampling signal. */
HIDDEN void sample_handler(int sig, siginfo_t *info, void *uc);
/* Per-thread recovery point armed by sample.c around its writes into
 * callers' buffers (a __builtin_setjmp buffer); fault.c jumps to it when
 * sample_writing is set on the faulting thread. */
extern __thread void *sample_recover[5] HIDDEN;
extern __thread volatile int sample_writing HIDDEN;
/* Address carried in si_value by our timers (defined in timers.c). */
extern const char profil_timer_tag HIDDEN;

#endif /* PROFIL_SAMPLING_H */
