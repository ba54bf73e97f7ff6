/*
 * bpf.c - a seccomp filter's answer to one system call, worked out the
 * way the kernel works it out: by running the filter's classic BPF
 * program on the call's struct seccomp_data.
 *
 * Why: a program that installs a filter (a sandbox) tells us, in the
 * program it hands to prctl(PR_SET_SECCOMP) or seccomp(2), exactly what
 * it will refuse.  The agent asks it, before the install, about each
 * call it may still make (filtercheck.c), and gives up what would be
 * refused instead of finding out by being killed.
 *
 * The instructions are those the kernel accepts in a seccomp filter
 * (kernel/seccomp.c, seccomp_check_filter()): loads of 32-bit words of
 * struct seccomp_data at aligned offsets, its length, immediates and
 * the 16 scratch words; stores to them; 32-bit arithmetic and logic;
 * forward jumps; returns.  A division by zero ends the program with 0,
 * as the kernel's does (SECCOMP_RET_KILL_THREAD).  Anything else, a jump
 * out of the program or a program that runs off its end, is answered
 * BPF_MALFORMED: the caller takes it for a refusal (the kernel would
 * refuse such a program, and then nothing is installed; but a program
 * we misread must not pass for a permissive one).  Every jump is
 * forward, so a run takes at most len steps.
 */
#include "agent.h"

#include <stddef.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#define SCRATCH 16 /* BPF_MEMWORDS */

/* The 32-bit word of d at byte offset k, or -1 when k is not one. */
static int load_word(const struct seccomp_data *d, uint32_t k, uint32_t *out)
{
	if (k % 4 != 0 || k > sizeof *d - 4)
		return -1;
	memcpy(out, (const char *)d + k, 4);
	return 0;
}

/* A op= b; -1 for an operation seccomp does not allow, 1 for a division
 * by zero. */
static int alu(uint16_t op, uint32_t *a, uint32_t b)
{
	switch (op) {
	case BPF_ADD: *a += b; return 0;
	case BPF_SUB: *a -= b; return 0;
	case BPF_MUL: *a *= b; return 0;
	case BPF_DIV: if (!b) return 1; *a /= b; return 0;
	case BPF_MOD: if (!b) return 1; *a %= b; return 0;
	case BPF_OR: *a |= b; return 0;
	case BPF_AND: *a &= b; return 0;
	case BPF_XOR: *a ^= b; return 0;
	case BPF_LSH: *a = b < 32 ? *a << b : 0; return 0;
	case BPF_RSH: *a = b < 32 ? *a >> b : 0; return 0;
	case BPF_NEG: *a = -*a; return 0;
	default: return -1;
	}
}

/* Whether the jump op taken on a against b. */
static int taken(uint16_t op, uint32_t a, uint32_t b, int *bad)
{
	switch (op) {
	case BPF_JEQ: return a == b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	case BPF_JSET: return (a & b) != 0;
	default: *bad = 1; return 0;
	}
}

uint32_t agent_bpf_run(const struct sock_filter *f, size_t len, const struct seccomp_data *d)
{
	uint32_t a = 0, x = 0, mem[SCRATCH] = {0};
	if (!f || len == 0 || len > BPF_MAXINSNS)
		return BPF_MALFORMED;
	for (size_t pc = 0; pc < len; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t k = i->k, *reg;
		int bad = 0;
		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
		case BPF_LDX:
			reg = BPF_CLASS(i->code) == BPF_LD ? &a : &x;
			if (BPF_SIZE(i->code) != BPF_W)
				return BPF_MALFORMED;
			if (BPF_MODE(i->code) == BPF_ABS && reg == &a) {
				if (load_word(d, k, reg) != 0)
					return BPF_MALFORMED;
			} else if (BPF_MODE(i->code) == BPF_LEN) {
				*reg = sizeof *d;
			} else if (BPF_MODE(i->code) == BPF_IMM) {
				*reg = k;
			} else if (BPF_MODE(i->code) == BPF_MEM && k < SCRATCH) {
				*reg = mem[k];
			} else {
				return BPF_MALFORMED;
			}
			break;
		case BPF_ST:
		case BPF_STX:
			if (k >= SCRATCH)
				return BPF_MALFORMED;
			mem[k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU: {
			int r = alu(BPF_OP(i->code), &a, BPF_SRC(i->code) == BPF_X ? x : k);
			if (r < 0)
				return BPF_MALFORMED;
			if (r > 0)
				return 0; /* division by zero: the kernel's program returns 0 */
			break;
		}
		case BPF_JMP:
			if (BPF_OP(i->code) == BPF_JA) {
				if (k >= len - pc - 1)
					return BPF_MALFORMED;
				pc += k;
				break;
			}
			if (taken(BPF_OP(i->code), a, BPF_SRC(i->code) == BPF_X ? x : k, &bad))
				pc += i->jt;
			else
				pc += i->jf;
			if (bad || pc >= len - 1)
				return BPF_MALFORMED; /* the next step would leave the program */
			break;
		case BPF_RET:
			if (BPF_RVAL(i->code) == BPF_K)
				return k;
			if (BPF_RVAL(i->code) == BPF_A)
				return a;
			return BPF_MALFORMED;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else if (BPF_MISCOP(i->code) == BPF_TXA)
				a = x;
			else
				return BPF_MALFORMED;
			break;
		}
	}
	return BPF_MALFORMED; /* ran off its end */
}
