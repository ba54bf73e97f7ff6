/*
 * sampling.h - declarations shared by the signal-context code (sample.c,
 * sample_write.c, sample_records.c)
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
#include "unwind/unwind.h"

/* sample.c: the handler installed for the sampling signal. */
HIDDEN void sample_handler(int sig, siginfo_t *info, void *uc);
/* The interrupted stack walked whole for lazy_helper.c (sample.c). */
HIDDEN uint32_t sample_walk_whole(const void *uc, uint64_t *pcs, uint32_t max);
/* sample_write.c: one sample of weight w at pc (its stack from uc, the
 * interrupted registers, or 0 for the pc alone) into the table t, under
 * fault recovery; the caller holds profil_inflight raised. */
HIDDEN __attribute__((noinline)) void sample_record(struct ptable *t, pid_t tid, uintptr_t pc,
                                                    const void *uc, unsigned long w);
/* sample_write.c, for sample_records.c: len bytes of t's ring reserved
 * (*at its position), or 0 when the reader is too far behind; a record
 * reserved as room words, words of them written, committed as type; a
 * table whose memory faulted withdrawn. */
HIDDEN unsigned char *sample_ring_reserve(const struct ptable *t, uint32_t len, uint64_t *at);
HIDDEN void sample_ring_commit(const struct ptable *t, unsigned char *r, uint64_t at,
                               uint32_t room, uint32_t words, uint32_t type);
HIDDEN void sample_withdraw(struct ptable *t);
/* The first entry of a walk (pcs[0] exact, then return addresses) that is
 * neither in this library nor in the module holding also (0: none), n if
 * none; a marker ends the search there. */
HIDDEN uint32_t sample_first_foreign(const struct uw_table *ut, const uint64_t *pcs,
                                     uint32_t n, uintptr_t also);
/* The interrupted stack (uc) into pcs[], at most max frames, *n the count
 * so far: its own recovery point armed around the walk, the caller's put
 * back after (a bad stack costs the sample its callers, not the table). */
HIDDEN __attribute__((noinline)) enum uw_end
sample_walk_recovered(const struct uw_table *ut, const void *uc, uint64_t *pcs, uint32_t max,
                      volatile uint32_t *n);
/* Thread-local data of signal context is initial-exec everywhere it is
 * named, not only where it is defined: another file's access would
 * otherwise go through __tls_get_addr(), which may allocate (a thread's
 * first access to a dlopen()ed library's block) and so is no call for a
 * signal handler. */
#define IE_TLS __attribute__((tls_model("initial-exec")))
/* Per-thread recovery point armed by sample_write.c around its writes into
 * callers' buffers (a __builtin_setjmp buffer); fault.c jumps to it when
 * sample_writing is set on the faulting thread. */
extern __thread void *sample_recover[5] IE_TLS HIDDEN;
extern __thread volatile int sample_writing IE_TLS HIDDEN;
/* This thread is inside the sampling handler; a signal sent meanwhile
 * made it give up the sample (fault.c sets it, sample.c reads it). */
extern __thread volatile int sample_active IE_TLS HIDDEN;
extern __thread volatile int sample_abandon IE_TLS HIDDEN;

#endif /* PROFIL_SAMPLING_H */
