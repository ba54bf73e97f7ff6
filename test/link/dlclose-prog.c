/*
 * dlclose-prog.c - a program not linked with libprofil: dlopen()s
 * libprofil-user.so (which pulls libprofil in), profiles through it,
 * dlclose()s it, then lets a thread made while profiling exit, creates
 * threads and forks.  Exit status 0 when it survived.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/wait.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int released;

static void *parked(void *unused)
{
	(void)unused;
	pthread_mutex_lock(&mu);
	while (!released)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	return NULL;
}

static void *nothing(void *p)
{
	return p;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	int (*profile)(void *(*)(void *)) =
		(int (*)(void *(*)(void *)))dlsym(h, "user_profile");
	if (!profile)
		return 1;
	int samples = profile(parked);
	printf("samples %d\n", samples);
	if (samples <= 0)
		return 1;
	dlclose(h);
	/* the thread made while profiling now exits */
	pthread_mutex_lock(&mu);
	released = 1;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	usleep(100000);
	for (int i = 0; i < 4; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
			return 1;
	}
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	int status = -1;
	waitpid(pid, &status, 0);
	printf("child status %d\n", status);
	return status == 0 ? 0 : 1;
}
