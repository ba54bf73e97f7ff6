/*
 * rec-pingpong.c - two processes that pass one byte back and forth over
 * two pipes, so that each blocks and wakes at every exchange: the kind of
 * command whose context switches, not its samples, are what the
 * perf-events engine costs (cli/record/enginehint.c).
 *
 *   rec-pingpong UNITS   forks; the parent sends a byte and waits for it
 *                        to come back until it has used UNITS of CPU time
 *                        (rec.h), then closes its pipe; the child echoes
 *                        each byte until the pipe is closed.  Prints the
 *                        number of exchanges.
 */
#include "rec.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void echo(int in, int out)
{
	char c;
	while (read(in, &c, 1) == 1)
		if (write(out, &c, 1) != 1)
			break;
	_exit(0);
}

int main(int argc, char **argv)
{
	unsigned long units = argc > 1 ? strtoul(argv[1], NULL, 10) : 40;
	int there[2], back[2];
	if (pipe(there) != 0 || pipe(back) != 0) {
		perror("rec-pingpong: pipe");
		return 1;
	}
	pid_t child = fork();
	if (child < 0) {
		perror("rec-pingpong: fork");
		return 1;
	}
	if (child == 0) {
		close(there[1]);
		close(back[0]);
		echo(there[0], back[1]);
	}
	close(there[0]);
	close(back[1]);
	unsigned long long end = rec_thread_ns() + units * REC_UNIT_NS;
	unsigned long exchanges = 0;
	char c = 'x';
	while (rec_thread_ns() < end) {
		if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
			break;
		exchanges++;
	}
	close(there[1]);
	waitpid(child, NULL, 0);
	printf("exchanges %lu\n", exchanges);
	return 0;
}
