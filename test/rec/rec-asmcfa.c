/*
 * rec-asmcfa.c - runs asmcfa.h's code, whose CFI finds the caller's
 * frame as OpenSSL's assembly does (a CFA on rax; the caller's rsp saved
 * in the frame) or glibc's lazy-binding trampoline does (a CFA on rbx,
 * which its callee saves and reuses), so that its samples' stacks can be
 * checked to reach main (test/cli/record.t).
 *
 *   rec-asmcfa ROUNDS       ROUNDS rounds of OpenSSL's two (about 1 ms a
 *                           round here)
 *   rec-asmcfa ROUNDS rbx   ROUNDS rounds of the trampoline's
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asmcfa.h"

int main(int argc, char **argv)
{
	unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
	int rbx = argc > 2 && !strcmp(argv[2], "rbx");
	for (unsigned long i = 0; i < rounds; i++) {
		if (rbx) {
			asm_rbx_frame(2000000);
			continue;
		}
		asm_rax_frame(1000000, 1000000);
		asm_saved_frame(2000000);
	}
	printf("%lu rounds\n", rounds);
	return 0;
}
