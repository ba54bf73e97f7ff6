/*
 * recgolib-main.c - a C program that calls the Go library of recgolib.go
 * (librecgo.so) for N rounds, and a C loop of its own as long:
 * test/rec/recgo-build.sh lib, test/cli/record.t.
 */
#include <stdio.h>
#include <stdlib.h>

long GoHot(long n); /* librecgo.so */

__attribute__((noinline)) static long c_hot(long n)
{
	volatile long s = 0;
	for (long i = 0; i < n; i++)
		s = s * 31 + (i ^ (s >> 7));
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000000;
	printf("%ld\n", GoHot(n) ^ c_hot(n));
	return 0;
}
