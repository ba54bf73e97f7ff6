/*
 * test-masked.c - a sample that falls where the program blocks SIGSEGV
 * and SIGBUS (inside its own SEGV handler, or a thread that blocks them)
 * must not write: if the buffer had gone bad, the fault could not be
 * recovered and the kernel would kill the process (issue 9, item 5).
 * The weight is held and written with the thread's next sample.
 */
#include "safety.h"

#include <sys/mman.h>
#include <sys/wait.h>

/* A child profiles into a buffer, blocks SIGSEGV and SIGBUS, protects the
 * buffer and spins: on the old code its next sample's write killed it. */
static void masked_child(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned short *buf = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
	                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || profil(buf, (size_t)page, 0, 2) != 0)
		_exit(2);
	sigset_t faults;
	sigemptyset(&faults);
	sigaddset(&faults, SIGSEGV);
	sigaddset(&faults, SIGBUS);
	pthread_sigmask(SIG_BLOCK, &faults, NULL);
	mprotect(buf, (size_t)page, PROT_READ);
	burn(0.3);
	struct profil_stats st;
	profil_get_stats(&st);
	_exit(st.deferred > 0 && st.faults == 0 ? 0 : 3);
}

TEST_IMPL(masked_samples_never_fault)
{
	if (skip_under("valgrind", "valgrind delivers signals at its own points"))
		return 0;
	if (skip_under("tsan", "TSan defers asynchronous signals"))
		return 0;
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0)
		masked_child();
	int status;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		FAIL_AT("the child was killed by signal %d", WTERMSIG(status));
	ASSERT(WIFEXITED(status));
	ASSERT_EQ(WEXITSTATUS(status), 0);
	return 0;
}

/* The held weight is written when the thread unblocks: totals stay whole. */
TEST_IMPL(masked_weight_written_later)
{
	if (skip_under("valgrind", "valgrind delivers signals at its own points"))
		return 0;
	if (skip_under("tsan", "TSan defers asynchronous signals"))
		return 0;
	static unsigned short counter[1];
	ASSERT_OK(profil(counter, sizeof counter, 0, 2)); /* scale 2: a tick counter */
	sigset_t faults, old;
	sigemptyset(&faults);
	sigaddset(&faults, SIGSEGV);
	sigaddset(&faults, SIGBUS);
	double c0 = cpu_thread();
	pthread_sigmask(SIG_BLOCK, &faults, &old);
	burn(0.4);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	unsigned short while_masked = counter[0];
	burn(0.2);
	double c1 = cpu_thread();
	struct profil_stats st;
	ASSERT_OK(profil_get_stats(&st));
	ASSERT_OK(profil(no_buf, 0, 0, 0));
	printf("deferred %llu, counted while masked %u, counter %u for %.3f CPU s\n",
	       st.deferred, while_masked, counter[0], c1 - c0);
	ASSERT(st.deferred > 0);
	ASSERT(while_masked == 0);
	/* Everything the timers delivered is in the counter (the last tick
	 * of the thread may not have been delivered yet: 10 ms). */
	double want = (c1 - c0) * profil_hz();
	ASSERT_NEAR((double)counter[0], want, 0.05 * want + 0.01 * profil_hz());
	return 0;
}
