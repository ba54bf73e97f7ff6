/*
 * librecinit.so: code in its .init section, as OpenSSL's libcrypto has
 * (its CPU probe): the call below lands between crti.o's prologue of
 * _init and crtn.o's epilogue, which carry no CFI, so that a walk from
 * init_hot must step through _init by the rows src/unwind/unwind_crt.c
 * makes.  rec-prog initcode dlopen()s it.
 */
#include "rec.h"

void init_hot(void);

__attribute__((noinline)) void init_hot(void)
{
	REC_BURN(120, 8);
}

__asm__(".pushsection .init,\"ax\",@progbits\n\t"
        "call init_hot@PLT\n\t"
        ".popsection");
