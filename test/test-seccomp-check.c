/*
 * test-seccomp-check.c - the agent's reading of a seccomp filter
 * (agent/bpf.c, agent/filtercheck.c), against the kernel's.
 *
 * A program that installs a filter is asked, before the install, what it
 * would refuse of the agent's calls; a wrong answer either kills the
 * program (a refusal read as allowed) or ends its sampling for nothing.
 * So the interpreter is checked against the kernel itself: each filter
 * below is installed in a forked child, which makes the call, and the
 * kernel's answer must be the one bpf.c worked out.  The filters' answers
 * are SECCOMP_RET_ERRNO with distinct numbers, so a child survives every
 * answer and the number says which branch the kernel took.
 */
#include "runner.h"
#include "../agent/agent.h"

#include <fcntl.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#else
#define ARCH 0
#endif

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG(i) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[i]))
#define ERR(n) BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (n))
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define KILL BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
#define PROG(...) {__VA_ARGS__}

struct prog {
	const char *what;
	struct sock_filter code[16];
	unsigned short len;
};

#define P(name, ...) {name, PROG(__VA_ARGS__), \
	sizeof (struct sock_filter[]){__VA_ARGS__} / sizeof (struct sock_filter)}

/* Filters whose every answer is allow or a numbered error. */
static const struct prog progs[] = {
	P("by number", LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpgid, 0, 1), ERR(201),
	  ALLOW),
	P("argument at least", LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpriority, 1, 0),
	  ALLOW, LD_ARG(1), BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 5, 0, 1), ERR(202), ALLOW),
	P("masked argument", LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpriority, 1, 0),
	  ALLOW, LD_ARG(1), BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),
	  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x30, 0, 1), ERR(203), ALLOW),
	P("bit set", LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpriority, 1, 0), ALLOW,
	  LD_ARG(1), BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 2, 0, 1), ERR(204), ALLOW),
	P("scratch memory", LD_NR, BPF_STMT(BPF_ST, 3), BPF_STMT(BPF_LD | BPF_IMM, 0),
	  BPF_STMT(BPF_LDX | BPF_MEM, 3), BPF_STMT(BPF_MISC | BPF_TXA, 0),
	  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpriority, 0, 1), ERR(205), ALLOW),
	P("arithmetic against X", LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpriority, 1, 0),
	  ALLOW, LD_ARG(1), BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 3),
	  BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1), BPF_STMT(BPF_LDX | BPF_IMM, 10),
	  BPF_JUMP(BPF_JMP | BPF_JGT | BPF_X, 0, 0, 1), ERR(206), ALLOW),
	P("answer from A", LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpriority, 1, 0),
	  ALLOW, LD_ARG(1), BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x3f),
	  BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 210),
	  BPF_STMT(BPF_ALU | BPF_OR | BPF_K, SECCOMP_RET_ERRNO), BPF_STMT(BPF_RET | BPF_A, 0)),
	P("architecture", BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0), ERR(207), ALLOW),
	P("high half of an argument", LD_NR,
	  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpriority, 1, 0), ALLOW,
	  BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]) + 4),
	  BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0), ERR(208), ALLOW),
	P("division, length", LD_NR, BPF_STMT(BPF_LDX | BPF_W | BPF_LEN, 0),
	  BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0), BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
	  SYS_getpriority / sizeof (struct seccomp_data), 0, 1), ERR(209), ALLOW),
};

/* The calls made: getpgid(0) (the same answer in the child), and getpriority(PRIO_PROCESS, who) for whos
 * that take each branch above (who 0 is this process; others do not
 * exist, and the kernel says ESRCH: a number no filter uses). */
static const long whos[] = {0, 2, 5, 0x32, 7, 1 << 20, -1};

static long call(long nr, long who)
{
	return nr == SYS_getpgid ? syscall(SYS_getpgid, 0) : syscall(SYS_getpriority, 0, who);
}

/* What the kernel answers to the call under the filter: the call's
 * return value, or -errno; from a child that installs it. */
static long kernel_answer(const struct prog *p, long nr, long who)
{
	int fd[2];
	ASSERT_OK(pipe(fd));
	pid_t pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct sock_fprog f = {p->len, (struct sock_filter *)p->code};
		long r = -1;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &f) == 0) {
			r = call(nr, who);
			r = r < 0 ? -errno : r;
		} else {
			r = -100000; /* not installed */
		}
		(void)!write(fd[1], &r, sizeof r);
		_exit(0);
	}
	close(fd[1]);
	long r = -200000;
	if (read(fd[0], &r, sizeof r) != sizeof r)
		FAIL_AT("%s: the child wrote nothing", p->what);
	close(fd[0]);
	int st;
	ASSERT_EQ(waitpid(pid, &st, 0), pid);
	return r;
}

/* What bpf.c says the kernel answers: its errno, or the call's own
 * result when it allows. */
static long our_answer(const struct prog *p, long nr, long who)
{
	struct seccomp_data d = {0};
	d.nr = (int)nr;
	d.arch = ARCH;
	d.args[0] = 0;
	d.args[1] = (uint64_t)who;
	uint32_t ret = agent_bpf_run(p->code, p->len, &d);
	if ((ret & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO)
		return -(long)(ret & SECCOMP_RET_DATA);
	ASSERT_EQ(ret & SECCOMP_RET_ACTION_FULL, SECCOMP_RET_ALLOW);
	long r = call(nr, who);
	return r < 0 ? -errno : r;
}

TEST_IMPL(seccomp_bpf_as_the_kernel)
{
	if (!ARCH) {
		snprintf(test_skip_reason, sizeof test_skip_reason, "x86-64 and arm64 only");
		return 0;
	}
	int checked = 0;
	for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++) {
		for (size_t j = 0; j <= sizeof whos / sizeof whos[0]; j++) {
			long nr = j ? SYS_getpriority : SYS_getpgid;
			long who = j ? whos[j - 1] : 0;
			long kernel = kernel_answer(&progs[i], nr, who);
			long ours = our_answer(&progs[i], nr, who);
			if (kernel != ours)
				FAIL_AT("%s, call %ld(%ld): the kernel answers %ld, bpf.c %ld",
				        progs[i].what, nr, who, kernel, ours);
			checked += kernel <= -200 && kernel > -300;
		}
	}
	ASSERT(checked >= 10); /* the filters' own answers were taken, not only the calls' */
	return 0;
}

/* Programs the kernel would not run end in a refusal, never a pass. */
TEST_IMPL(seccomp_bpf_malformed)
{
	struct seccomp_data d = {.nr = SYS_getpgid, .arch = ARCH};
	const struct sock_filter off_end[] = {LD_NR};
	const struct sock_filter bad_load[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), ALLOW};
	const struct sock_filter past_data[] = {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 64), ALLOW};
	const struct sock_filter bad_mem[] = {BPF_STMT(BPF_ST, 16), ALLOW};
	const struct sock_filter jump_out[] = {BPF_JUMP(BPF_JMP | BPF_JA, 1, 0, 0), ALLOW};
	const struct sock_filter cond_out[] = {LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
	                                       ALLOW};
	const struct sock_filter byte_load[] = {BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0), ALLOW};
	const struct sock_filter div_zero[] = {BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0), ALLOW};
	ASSERT_EQ(agent_bpf_run(off_end, 1, &d), BPF_MALFORMED);
	ASSERT_EQ(agent_bpf_run(bad_load, 2, &d), BPF_MALFORMED);
	ASSERT_EQ(agent_bpf_run(past_data, 2, &d), BPF_MALFORMED);
	ASSERT_EQ(agent_bpf_run(bad_mem, 2, &d), BPF_MALFORMED);
	ASSERT_EQ(agent_bpf_run(jump_out, 2, &d), BPF_MALFORMED);
	ASSERT_EQ(agent_bpf_run(cond_out, 3, &d), BPF_MALFORMED);
	ASSERT_EQ(agent_bpf_run(byte_load, 2, &d), BPF_MALFORMED);
	ASSERT_EQ(agent_bpf_run(div_zero, 2, &d), 0); /* the kernel's: KILL_THREAD */
	ASSERT_EQ(agent_bpf_run(NULL, 0, &d), BPF_MALFORMED);
	return 0;
}

/* A filter that answers `action` to system call nr, allows the rest. */
static unsigned refusals_for(long nr, uint32_t action)
{
	const struct sock_filter f[] = {LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
	                                BPF_STMT(BPF_RET | BPF_K, action), ALLOW};
	return filter_refusals(f, 4);
}

TEST_IMPL(seccomp_refusals_by_call)
{
	const unsigned both = FILTER_REFUSES_EVENTS | FILTER_REFUSES_AGENT;
	const struct sock_filter allow[] = {ALLOW};
	const struct sock_filter deny_all[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 1)};
	const struct sock_filter kill_all[] = {KILL};
	ASSERT_EQ(filter_refusals(allow, 1), 0);
	/* failures the agent copes with, but for a ring file's creation:
	 * nothing more could be recorded (man-db's sandbox) */
	ASSERT_EQ(filter_refusals(deny_all, 1), FILTER_REFUSES_AGENT);
	ASSERT_EQ(refusals_for(SYS_ftruncate, SECCOMP_RET_ERRNO | 38), FILTER_REFUSES_AGENT);
	ASSERT_EQ(refusals_for(SYS_flock, SECCOMP_RET_ERRNO | 38), 0);
	ASSERT_EQ(filter_refusals(kill_all, 1), both);
	ASSERT_EQ(refusals_for(SYS_perf_event_open, SECCOMP_RET_KILL_PROCESS), FILTER_REFUSES_EVENTS);
	ASSERT_EQ(refusals_for(SYS_ioctl, SECCOMP_RET_TRAP), FILTER_REFUSES_EVENTS);
	ASSERT_EQ(refusals_for(SYS_perf_event_open, SECCOMP_RET_ERRNO | 1), 0);
	ASSERT_EQ(refusals_for(SYS_timer_create, SECCOMP_RET_KILL_THREAD), FILTER_REFUSES_AGENT);
	ASSERT_EQ(refusals_for(SYS_openat, SECCOMP_RET_TRAP), FILTER_REFUSES_AGENT);
	ASSERT_EQ(refusals_for(SYS_flock, SECCOMP_RET_USER_NOTIF), FILTER_REFUSES_AGENT);
	ASSERT_EQ(refusals_for(SYS_clock_gettime, SECCOMP_RET_KILL_PROCESS), both);
	ASSERT_EQ(refusals_for(SYS_getpgid, SECCOMP_RET_LOG), 0);
	ASSERT_EQ(refusals_for(SYS_execve, SECCOMP_RET_KILL_PROCESS), 0); /* not the agent's */
	/* Chromium's: getrusage of anything but RUSAGE_SELF or _THREAD
	 * kills; the agent asks RUSAGE_CHILDREN only where no filter is */
	const struct sock_filter chromium[] = {
		LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getrusage, 0, 3), LD_ARG(0),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 2, 0, 1), KILL, ALLOW};
	ASSERT_EQ(filter_refusals(chromium, 6), 0);
	/* libseccomp compares arguments as 64-bit values: AT_FDCWD as glibc
	 * passes it, sign-extended (a low-half AT_FDCWD would not pass) */
	const struct sock_filter openat_cwd_only[] = {
		LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]) + 4),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 0, 2), LD_ARG(0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)AT_FDCWD, 1, 0), KILL, ALLOW};
	ASSERT_EQ(filter_refusals(openat_cwd_only, 8), 0);
	/* one that knows only another architecture's calls refuses ours */
	const struct sock_filter other_arch[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH ^ 1, 0, 1), ALLOW, KILL};
	ASSERT_EQ(filter_refusals(other_arch, 4), both);
	return 0;
}
