/*
 * rec-ctor.c - a program whose library (librecctor.so) burns CPU time in
 * its constructor, before main: prints "ctor UNITS" with what it burned.
 *
 *   rec-ctor [UNITS]
 */
#include "rec.h"

#include <stdio.h>

int main(void)
{
	printf("ctor %lu\n", recctor_burned());
	return 0;
}
