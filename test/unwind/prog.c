/*
 * prog.c - known call chains for the stack walk's tests (test-unwind.c),
 * built -O2 -fomit-frame-pointer and run under the agent, which records
 * into a ring file in $PROFIL_RECORD_DIR.  With no `profil record`
 * reading it, every sample stays in the ring; at the end the program
 * reads its own ring file and checks each stack whose leaf is uw_hot
 * against the chain that led there, resolving addresses in its own
 * address space (dladdr; the program is linked -rdynamic).
 *
 *   uwprog chain     main and a second thread: work -> qsort (libc) ->
 *                    uw_cmp -> uw_through (libuwchain.so) -> uw_hot
 *   uwprog recurse   main -> uw_recurse x 51 -> uw_hot
 *   uwprog signal    main -> uw_interrupted, interrupted by SIGALRM whose
 *                    handler (on a sigaltstack) runs uw_hot
 *   uwprog truncate  uw_recurse x 201 -> uw_hot, run with a depth limit
 *   uwprog fault     on a thread: uw_fault_outer -> uw_fault_mid -> uw_hot,
 *                    with the page holding uw_fault_outer's return address
 *                    made PROT_NONE meanwhile: every walk faults there,
 *                    the fault costs that sample its callers only
 *   uwprog cutcache  every table in $PROFIL_UNWIND_CACHE cut to nothing
 *                    (the rows the agent mapped from them are gone), then
 *                    main -> uw_recurse x 51 -> uw_hot: each walk faults
 *                    on its first row, the samples go on
 *   uwprog dlstorm LIB   main -> uw_recurse x 21 -> uw_hot while a second
 *                    thread dlopen()s and dlclose()s LIB without pause
 *                    (each dlclose rebuilds and retires the tables)
 *   uwprog forkwords main -> uw_fork_site, which forks 20 children that
 *                    _exit(0) at once: each writes its word with the
 *                    fork's callers into this ring (ring.h RING_FORKED)
 *
 * Prints "hot N", "full N" (stacks of the whole expected chain, complete),
 * "main N", "thread N", "truncated N", "unknown N"; then "forked N" (the
 * children's words whose first caller is uw_fork_site) and "dirty N" (the
 * bytes of the ring's free space after its last record that are not
 * zero: a writer must leave none, or the reader takes them for a record);
 * the test judges.
 */
#include "chain.h"
#include "../../src/base/ring.h"

#include <dirent.h>
#include <stdatomic.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SECONDS 1.0

/* Global, and exported by -rdynamic, so that dladdr() names them. */
unsigned long uw_hot(unsigned long n);
int uw_cmp(const void *a, const void *b);
void uw_work(void);
void *uw_thread_main(void *arg);
unsigned long uw_recurse(int n);
void uw_on_alarm(int sig);
void uw_interrupted(void);
void uw_fault_mid(uintptr_t page);
void uw_fault_outer(void);
int uw_fork_site(int n);

/* Per thread: the hot loops of several threads use it, and a shared one
 * would be a data race (TSan stopped the program under `make tsan`). */
_Thread_local volatile unsigned long uw_sink;
static volatile int alarm_done;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The hot leaf: spins n rounds. */
__attribute__((noinline)) unsigned long uw_hot(unsigned long n)
{
	unsigned long s = 0;
	for (unsigned long i = 0; i < n; i++)
		s += i * i ^ uw_sink;
	return s;
}

__attribute__((noinline)) int uw_cmp(const void *a, const void *b)
{
	uw_sink += uw_through(uw_hot, 2000);
	return *(const int *)a - *(const int *)b;
}

__attribute__((noinline)) void uw_work(void)
{
	int v[64];
	double end = thread_cpu() + SECONDS;
	while (thread_cpu() < end) {
		for (int i = 0; i < 64; i++)
			v[i] = rand() & 0xffff;
		qsort(v, 64, sizeof v[0], uw_cmp);
		uw_sink += (unsigned long)v[0];
	}
}

__attribute__((noinline)) void *uw_thread_main(void *arg)
{
	uw_work();
	uw_sink++;
	return arg;
}

__attribute__((noinline)) unsigned long uw_recurse(int n)
{
	unsigned long r = n ? uw_recurse(n - 1) : uw_hot(100000);
	uw_sink += r; /* after the call: not a tail call, not a loop */
	return r + 1;
}

/* Inlined: main calls uw_recurse itself. */
static inline __attribute__((always_inline)) void recurse_for(int depth)
{
	double end = thread_cpu() + SECONDS;
	while (thread_cpu() < end)
		uw_recurse(depth);
}

__attribute__((noinline)) void uw_on_alarm(int sig)
{
	(void)sig;
	double end = thread_cpu() + SECONDS;
	while (thread_cpu() < end)
		uw_sink += uw_hot(100000);
	alarm_done = 1;
}

__attribute__((noinline)) void uw_interrupted(void)
{
	unsigned long spins = 0;
	while (!alarm_done)
		spins++;
	uw_sink += spins;
}

/* Spins in uw_hot with `page` unreadable, then gives it back. */
__attribute__((noinline)) void uw_fault_mid(uintptr_t page)
{
	double end = thread_cpu() + SECONDS;
	while (thread_cpu() < end)
		uw_sink += uw_hot(100000);
	if (mprotect((void *)page, 4096, PROT_READ | PROT_WRITE) != 0)
		abort();
	uw_sink++;
}

/* 16 KiB of frame between our return address and uw_fault_mid's frames,
 * so the page holding the return address is touched by nothing but the
 * stack walk until uw_fault_mid has given it back. */
__attribute__((noinline)) void uw_fault_outer(void)
{
	volatile char pad[16384];
	pad[0] = 1;
	uintptr_t slot = (uintptr_t)__builtin_frame_address(0) + 8;
	uintptr_t page = slot & ~(uintptr_t)4095;
	if (mprotect((void *)page, 4096, PROT_NONE) != 0)
		abort();
	uw_fault_mid(page);
	uw_sink += pad[0];
}

static void *fault_thread(void *arg)
{
	uw_fault_outer();
	return arg;
}

static void fault_case(void)
{
	size_t size = 1 << 20;
	void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_attr_t a;
	pthread_t th;
	if (stack == MAP_FAILED || pthread_attr_init(&a) != 0 ||
	    pthread_attr_setstack(&a, stack, size) != 0 ||
	    pthread_create(&th, &a, fault_thread, NULL) != 0) {
		perror("uwprog: fault thread");
		exit(2);
	}
	pthread_join(th, NULL);
}

static volatile int storm_stop;
static volatile long storm_cycles;

static void *storm(void *lib)
{
	while (!storm_stop) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "uwprog: %s\n", dlerror());
			exit(2);
		}
		dlclose(h);
		storm_cycles++;
	}
	return NULL;
}

static void signal_case(void)
{
	static char alt[64 * 1024];
	stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = uw_on_alarm;
	sa.sa_flags = SA_ONSTACK;
	if (sigaltstack(&ss, NULL) != 0 || sigaction(SIGALRM, &sa, NULL) != 0) {
		perror("uwprog: signal setup");
		exit(2);
	}
	struct itimerval it = {{0, 0}, {0, 20000}};
	setitimer(ITIMER_REAL, &it, NULL);
	uw_interrupted();
}

/* The function pc is in, as one of ours by name, "libc", or "?". */
static const char *name_of(uint64_t pc)
{
	Dl_info di;
	if (!dladdr((void *)(uintptr_t)pc, &di) || !di.dli_fname)
		return "?";
	if (strstr(di.dli_fname, "libc.so"))
		return "libc";
	return di.dli_sname ? di.dli_sname : "?";
}

static int is_sigreturn(uint64_t pc)
{
	static const unsigned char code[] = {0x48, 0xc7, 0xc0, 0x0f, 0, 0, 0, 0x0f, 0x05};
	return memcmp((const void *)(uintptr_t)pc, code, sizeof code) == 0;
}

struct tally {
	long hot, full, main, thread, truncated, unknown, shown;
};

static void show(struct tally *t, const char *why, const uint64_t *pcs, uint32_t n)
{
	if (t->shown++ >= 3)
		return;
	fprintf(stderr, "uwprog: %s:", why);
	for (uint32_t k = 0; k < n; k++)
		fprintf(stderr, " %s", RING_PC_IS_MARKER(pcs[k]) ? "MARKER" : name_of(pcs[k] - (k > 0)));
	fputc('\n', stderr);
}

/* Frames of pcs from k on named `name`, in a row. */
static uint32_t run_of(const uint64_t *pcs, uint32_t n, uint32_t k, const char *name)
{
	uint32_t c = 0;
	while (k + c < n && !RING_PC_IS_MARKER(pcs[k + c]) &&
	       strcmp(name_of(pcs[k + c] - 1), name) == 0)
		c++;
	return c;
}

/* Whether the stack (leaf uw_hot) is the chain `mode` makes. */
static int full_chain(const char *mode, const uint64_t *pcs, uint32_t n, struct tally *t)
{
	uint32_t k = 1;
	if (!strcmp(mode, "chain")) {
		if (run_of(pcs, n, k, "uw_through") != 1 || run_of(pcs, n, k + 1, "uw_cmp") != 1)
			return 0;
		uint32_t c = run_of(pcs, n, k + 2, "libc");
		k += 2 + c;
		if (c == 0 || run_of(pcs, n, k, "uw_work") != 1)
			return 0;
		if (run_of(pcs, n, k + 1, "main") == 1)
			return ++t->main;
		return run_of(pcs, n, k + 1, "uw_thread_main") == 1 ? ++t->thread : 0;
	}
	if (!strcmp(mode, "recurse"))
		return run_of(pcs, n, k, "uw_recurse") == 51 && run_of(pcs, n, k + 51, "main") == 1;
	if (!strcmp(mode, "cutcache"))
		return n == 2 && pcs[1] == RING_PC_UNKNOWN;
	if (!strcmp(mode, "fault"))
		return n == 4 && pcs[3] == RING_PC_UNKNOWN && run_of(pcs, n, 1, "uw_fault_mid") == 1 &&
		       run_of(pcs, n, 2, "uw_fault_outer") == 1;
	if (!strcmp(mode, "dlstorm"))
		return run_of(pcs, n, k, "uw_recurse") == 21 && run_of(pcs, n, k + 21, "main") == 1;
	if (!strcmp(mode, "truncate"))
		return n == 17 && pcs[16] == RING_PC_TRUNCATED && run_of(pcs, n, 1, "uw_recurse") == 15;
	/* signal: the handler, the trampoline, the interrupted frame, main */
	return run_of(pcs, n, 1, "uw_on_alarm") == 1 && n > 4 && is_sigreturn(pcs[2]) &&
	       run_of(pcs, n, 3, "uw_interrupted") == 1 && run_of(pcs, n, 4, "main") == 1;
}

static void judge(const char *mode, const struct ring_record *r, struct tally *t)
{
	uint32_t n = RING_HDR_WORDS(r->hdr) - 2;
	int marker = RING_PC_IS_MARKER(r->pcs[n - 1]);
	if (strcmp(name_of(r->pcs[0]), "uw_hot") != 0)
		return;
	t->hot++;
	t->truncated += r->pcs[n - 1] == RING_PC_TRUNCATED;
	t->unknown += r->pcs[n - 1] == RING_PC_UNKNOWN;
	int want_marker = !strcmp(mode, "truncate") || !strcmp(mode, "fault") ||
	                  !strcmp(mode, "cutcache");
	if (marker == want_marker && full_chain(mode, r->pcs, n, t))
		t->full++;
	else
		show(t, "not the full chain", r->pcs, n);
}

/* n children, one at a time, each ending at once. */
__attribute__((noinline)) int uw_fork_site(int n)
{
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p == 0)
			_exit(0);
		if (p < 0 || waitpid(p, NULL, 0) != p)
			return -1;
	}
	return 0;
}

/* A child's word (ring.h RING_FORKED) whose first caller is uw_fork_site. */
static int from_fork_site(const struct ring_forked *r)
{
	return RING_HDR_WORDS(r->hdr) > 2 && !RING_PC_IS_MARKER(r->pcs[0]) &&
	       strcmp(name_of(r->pcs[0] - 1), "uw_fork_site") == 0;
}

/* truncate(2) to 0 bytes every cached table in $PROFIL_UNWIND_CACHE. */
static void cut_cache(void)
{
	const char *dir = getenv("PROFIL_UNWIND_CACHE");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	int cut = 0;
	char path[4096];
	while (d && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, "uw", 2) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		cut += truncate(path, 0) == 0;
	}
	if (d)
		closedir(d);
	printf("cut %d\n", cut);
}

/* Our ring file: $PROFIL_RECORD_DIR/<pid>.<n>.ring. */
static FILE *open_ring(void)
{
	const char *dir = getenv("PROFIL_RECORD_DIR");
	char prefix[32], path[4096];
	snprintf(prefix, sizeof prefix, "%d.", (int)getpid());
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	FILE *f = NULL;
	while (d && !f && (e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		f = fopen(path, "rb");
	}
	if (d)
		closedir(d);
	return f;
}

static void check_ring(const char *mode)
{
	FILE *f = open_ring();
	static struct ring_file rf;
	if (!f || fread(&rf, sizeof rf, 1, f) != 1) {
		fprintf(stderr, "uwprog: no ring file (run under the agent)\n");
		exit(2);
	}
	/* This process is sampled while it reads its own ring: a sample taken
	 * after head was read is a whole record past that head, which is not
	 * dirt (CI, under load: "dirty 54", a 10-word sample inside this
	 * fread).  So head is read again after the data: records are taken up
	 * to the first head, and the free space checked from the later one
	 * (a reservation moves head before its record is written, so the
	 * records written meanwhile all lie below it).  Reading until head
	 * held still did not end on a long run's ring, sampled in every read. */
	uint64_t head = atomic_load(&rf.head);
	unsigned char *data = malloc(rf.data_size);
	if (!data || head > rf.data_size || fseek(f, (long)rf.data_offset, SEEK_SET) != 0 ||
	    fread(data, 1, rf.data_size, f) != rf.data_size || fseek(f, 0, SEEK_SET) != 0 ||
	    fread(&rf, sizeof rf, 1, f) != 1) {
		fprintf(stderr, "uwprog: ring wrapped or unreadable\n");
		exit(2);
	}
	uint64_t later = atomic_load(&rf.head);
	uint64_t clean_from = later > head ? later : head;
	struct tally t = {0};
	long forked = 0, dirty = 0;
	uint64_t off = 0;
	while (off + 8 <= head) {
		const struct ring_record *r = (const void *)(data + off);
		if (r->hdr == 0)
			break;
		if (RING_HDR_TYPE(r->hdr) == RING_SAMPLE && RING_HDR_WORDS(r->hdr) > 2)
			judge(mode, r, &t);
		if (RING_HDR_TYPE(r->hdr) == RING_FORKED)
			forked += from_fork_site((const struct ring_forked *)r);
		off += RING_HDR_WORDS(r->hdr) * 8;
	}
	if (off != head)
		dirty = -1; /* the records did not end at head */
	for (uint64_t i = clean_from; off == head && i < rf.data_size; i++)
		dirty += data[i] != 0;
	printf("hot %ld\nfull %ld\nmain %ld\nthread %ld\ntruncated %ld\nunknown %ld\n", t.hot,
	       t.full, t.main, t.thread, t.truncated, t.unknown);
	printf("forked %ld\ndirty %ld\n", forked, dirty);
	free(data);
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "chain";
	if (!strcmp(mode, "chain")) {
		pthread_t th;
		if (pthread_create(&th, NULL, uw_thread_main, NULL) != 0)
			return 2;
		uw_work();
		pthread_join(th, NULL);
	} else if (!strcmp(mode, "recurse")) {
		recurse_for(50);
	} else if (!strcmp(mode, "truncate")) {
		recurse_for(200);
	} else if (!strcmp(mode, "cutcache")) {
		cut_cache();
		recurse_for(50);
	} else if (!strcmp(mode, "dlstorm") && argc > 2) {
		pthread_t th;
		if (pthread_create(&th, NULL, storm, argv[2]) != 0)
			return 2;
		recurse_for(20);
		storm_stop = 1;
		pthread_join(th, NULL);
		printf("cycles %ld\n", storm_cycles);
	} else if (!strcmp(mode, "forkwords")) {
		if (uw_fork_site(20) != 0)
			return 2;
	} else if (!strcmp(mode, "fault")) {
		fault_case();
	} else if (!strcmp(mode, "signal")) {
		signal_case();
	} else {
		fprintf(stderr, "uwprog: unknown mode %s\n", mode);
		return 2;
	}
	check_ring(mode);
	uw_sink++; /* main's own frame stays below the callees */
	return 0;
}
