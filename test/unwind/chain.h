/* chain.h - libuwchain.so's interface (test/unwind/chain.c). */
#ifndef PROFIL_TEST_UNWIND_CHAIN_H
#define PROFIL_TEST_UNWIND_CHAIN_H

unsigned long uw_through(unsigned long (*cb)(unsigned long), unsigned long n);

#endif
