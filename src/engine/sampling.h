/*
 * sampling.h - declarations shared by the signal-context code (sample.c)
 * and the code that installs it (signals.c, fault.c).  Separate from
 * engine.h because <signal.h> with _GNU_SOURCE pulls in <unistd.h>, whose
 * nonnull declaration of profil() profil.c must not see (docs/contract.md,
 * "The classic call").
 */
#ifndef PROFIL_SAMPLING_H
#define PROFIL_SAMPLING_H

#include <signal.h>
#include <stdint.h>

#include "engine/engine_int.h"

/* sample.c: the handler installed for the sampling signal. */
HIDDEN void sample_handler(int sig, siginfo_t *info, void *uc);
/* The interrupted stack walked whole for lazy_helper.c (sample.c). */
HIDDEN uint32_t sample_walk_whole(const void *uc, uint64_t *pcs, uint32_t max);
/* Per-thread recovery point armed by sample.c around its writes into
 * callers' buffers (a __builtin_setjmp buffer); fault.c jumps to it when
 * sample_writing is set on the faulting thread. */
extern __thread void *sample_recover[5] HIDDEN;
extern __thread volatile int sample_writing HIDDEN;
/* This thread is inside the sampling handler; a signal sent meanwhile
 * made it give up the sample (fault.c sets it, sample.c reads it). */
extern __thread volatile int sample_active HIDDEN;
extern __thread volatile int sample_abandon HIDDEN;

#endif /* PROFIL_SAMPLING_H */
