/*
 * prog.c - a program linked with libprofil.a, statically (static-prog) and
 * dynamically (archive-prog): profiles itself with a thread, forks and
 * execs a PATH command, checks a forked child is profiled, and says what
 * it counted (issue 9, item 9).
 * Exit status 0 when everything worked.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "profil.h"

static volatile unsigned long sink;

static void *work(void *p)
{
	for (unsigned long i = 0; i < (unsigned long)(size_t)p; i++)
		sink += i;
	return NULL;
}

int main(void)
{
	static unsigned short buf[2];
	if (profil(buf, sizeof buf, 0, 2) != 0) {
		perror("profil");
		return 1;
	}
	pthread_t t;
	int rc = pthread_create(&t, NULL, work, (void *)(size_t)100000000);
	if (rc != 0) {
		printf("pthread_create: error %d\n", rc);
		return 1;
	}
	pthread_join(t, NULL);
	/* a forked child is profiled too: fork.o's handlers give it a timer
	 * (they were missing from links with the archive: process.h) */
	pid_t kid = fork();
	if (kid == 0) {
		/* volatile: the compiler sees work() leave buf alone */
		volatile unsigned short *count = buf;
		unsigned short before = count[0];
		work((void *)(size_t)100000000);
		_exit(count[0] > before ? 0 : 3);
	}
	int kid_status = -1;
	waitpid(kid, &kid_status, 0);
	pid_t pid = fork();
	if (pid == 0) {
		execlp("true", "true", (char *)NULL);
		_exit(127);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	unsigned short *volatile none = NULL; /* glibc declares it nonnull */
	profil(none, 0, 0, 0);
	struct profil_stats st;
	profil_get_stats(&st);
	printf("samples %u ticks %llu child status %d, profiled child status %d\n", buf[0],
	       st.ticks, status, kid_status);
	return buf[0] > 0 && buf[0] == st.ticks && status == 0 && kid_status == 0 ? 0 : 1;
}
