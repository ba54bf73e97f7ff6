/*
 * rec-static: a statically linked program, which no agent enters.
 *
 * Without arguments it does nothing: `profil record` must refuse it with
 * one clear line.  "reap-exec A... -- B...": runs A... as its child
 * (fork and exec) and waits for it, then execs B... in its own process:
 * an image the agent never saw that reaps a child the agent did profile,
 * before the process goes on in a program the agent enters.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int reap_then_exec(char **argv)
{
	char **then = argv;
	while (*then && strcmp(*then, "--") != 0)
		then++;
	if (!*then || !then[1] || then == argv)
		return 2;
	*then++ = NULL;
	pid_t pid = fork();
	if (pid < 0)
		return 3;
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 4;
	execv(then[0], then);
	return 127;
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "reap-exec") == 0)
		return reap_then_exec(argv + 2);
	return 0;
}
