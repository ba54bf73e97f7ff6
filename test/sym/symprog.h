/*
 * symprog.h - the programs and libraries the symbolizer's tests read.
 * Each probe records the address it was called from; symprog prints
 * them (minus one: inside the call, as a profiler records a caller) with
 * its /proc/self/maps, and symtest symbolizes them after it has exited.
 * Lines the tests expect are marked in the sources with "@name".
 */
#ifndef PROFIL_TEST_SYMPROG_H
#define PROFIL_TEST_SYMPROG_H

#ifdef __cplusplus
extern "C" {
#endif

enum { P_PLAIN, P_INLINE, P_LIB, P_CXX, P_LIBC, NPROBES };
typedef void probe_fn(int slot);

void symlib_function(probe_fn *probe);   /* libsymlib.so */
int symcxx_entry(probe_fn *probe);       /* libsymcxx.so */

#ifdef __cplusplus
}
#endif

#endif
