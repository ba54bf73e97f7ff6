/*
 * asmcfa.h - code whose CFI finds the caller's frame the two ways
 * OpenSSL's assembly does, where no offset from rsp can (the stack
 * pointer is realigned).  Run by test/rec/rec-asmcfa.c under `profil
 * record`; its rows and walks checked in place by test/test-unwind.c.
 *
 *   asm_rax_frame(leaf, own)  keeps its frame's base in rax
 *                   (`.cfi_def_cfa_register %rax`, aesni_gcm_encrypt's
 *                   way), calls asm_rax_leaf(leaf), which spins and leaves
 *                   rax alone (as OpenSSL's own routines do), then spins
 *                   own times itself; asm_rax_frame_ret: the return
 *                   address of that call
 *   asm_saved_frame(n)  saves the caller's rsp at rsp + 24 and says so
 *                   by a CFA expression (`.cfi_cfa_expression
 *                   %rsp+24,deref,+8`), spins n times (from
 *                   asm_saved_frame_body), then moves rsp up so that the
 *                   saved word lies below it, at rsp - 8, in its red zone
 *                   (sha512_block_data_order_avx2's way: the rule at
 *                   asm_saved_frame_red), and returns through it
 *
 * and the way glibc's lazy-binding trampoline (_dl_runtime_resolve_xsavec)
 * finds it, a CFA on rbx, a register its callee saves and reuses:
 *
 *   asm_rbx_frame(n)  pushes rbx, keeps its frame's base in it
 *                   (`.cfi_def_cfa_register %rbx`), realigns rsp and
 *                   calls asm_rbx_callee(n) (asm_rbx_frame_ret: the
 *                   return address), which saves rbx below its CFA
 *                   (`.cfi_offset %rbx, -16`, as _dl_fixup does) and
 *                   counts n down in it (from asm_rbx_callee_body)
 */
#ifndef PROFIL_TEST_ASMCFA_H
#define PROFIL_TEST_ASMCFA_H

void asm_rax_frame(unsigned long leaf_spins, unsigned long own_spins);
void asm_rax_leaf(unsigned long spins);
void asm_saved_frame(unsigned long spins);
void asm_rbx_frame(unsigned long spins);
void asm_rbx_callee(unsigned long spins);
extern const char asm_rax_frame_ret[], asm_saved_frame_body[], asm_saved_frame_red[];
extern const char asm_rbx_frame_ret[], asm_rbx_callee_body[];

__asm__(".text\n"
        ".globl asm_rax_frame\n"
        ".type asm_rax_frame, @function\n"
        "asm_rax_frame:\n"
        "\t.cfi_startproc\n"
        "\tmovq %rsp, %rax\n"
        "\t.cfi_def_cfa_register %rax\n"
        "\tpushq %rbx\n"
        "\t.cfi_offset %rbx, -16\n"
        "\tandq $-64, %rsp\n"
        "\tcall asm_rax_leaf\n"
        ".globl asm_rax_frame_ret\n"
        "asm_rax_frame_ret:\n"
        "1:\tsubq $1, %rsi\n"
        "\tjnz 1b\n"
        "\tmovq -8(%rax), %rbx\n"
        "\tmovq %rax, %rsp\n"
        "\t.cfi_def_cfa_register %rsp\n"
        "\tret\n"
        "\t.cfi_endproc\n"
        ".size asm_rax_frame, .-asm_rax_frame\n"
        ".globl asm_rax_leaf\n"
        ".type asm_rax_leaf, @function\n"
        "asm_rax_leaf:\n"
        "\t.cfi_startproc\n"
        "2:\tsubq $1, %rdi\n"
        "\tjnz 2b\n"
        "\tret\n"
        "\t.cfi_endproc\n"
        ".size asm_rax_leaf, .-asm_rax_leaf\n"
        ".globl asm_saved_frame\n"
        ".type asm_saved_frame, @function\n"
        "asm_saved_frame:\n"
        "\t.cfi_startproc\n"
        "\tmovq %rsp, %rax\n"
        "\tsubq $64, %rsp\n"
        "\tandq $-32, %rsp\n"
        "\tmovq %rax, 24(%rsp)\n"
        /* DW_CFA_def_cfa_expression: DW_OP_breg7 24, DW_OP_deref,
         * DW_OP_plus_uconst 8 */
        "\t.cfi_escape 0x0f, 0x05, 0x77, 0x18, 0x06, 0x23, 0x08\n"
        ".globl asm_saved_frame_body\n"
        "asm_saved_frame_body:\n"
        "3:\tsubq $1, %rdi\n"
        "\tjnz 3b\n"
        "\tleaq 32(%rsp), %rsp\n"
        /* the same at rsp - 8 (DW_OP_breg7 -8) */
        "\t.cfi_escape 0x0f, 0x05, 0x77, 0x78, 0x06, 0x23, 0x08\n"
        ".globl asm_saved_frame_red\n"
        "asm_saved_frame_red:\n"
        "\tmovq -8(%rsp), %rsp\n"
        "\t.cfi_def_cfa %rsp, 8\n"
        "\tret\n"
        "\t.cfi_endproc\n"
        ".size asm_saved_frame, .-asm_saved_frame\n"
        ".globl asm_rbx_frame\n"
        ".type asm_rbx_frame, @function\n"
        "asm_rbx_frame:\n"
        "\t.cfi_startproc\n"
        "\tpushq %rbx\n"
        "\t.cfi_adjust_cfa_offset 8\n"
        "\t.cfi_offset %rbx, -16\n"
        "\tmovq %rsp, %rbx\n"
        "\t.cfi_def_cfa_register %rbx\n"
        "\tandq $-64, %rsp\n"
        "\tcall asm_rbx_callee\n"
        ".globl asm_rbx_frame_ret\n"
        "asm_rbx_frame_ret:\n"
        "\tmovq %rbx, %rsp\n"
        "\t.cfi_def_cfa_register %rsp\n"
        "\tpopq %rbx\n"
        "\t.cfi_adjust_cfa_offset -8\n"
        "\t.cfi_restore %rbx\n"
        "\tret\n"
        "\t.cfi_endproc\n"
        ".size asm_rbx_frame, .-asm_rbx_frame\n"
        ".globl asm_rbx_callee\n"
        ".type asm_rbx_callee, @function\n"
        "asm_rbx_callee:\n"
        "\t.cfi_startproc\n"
        "\tpushq %rbx\n"
        "\t.cfi_adjust_cfa_offset 8\n"
        "\t.cfi_offset %rbx, -16\n"
        "\tmovq %rdi, %rbx\n"
        ".globl asm_rbx_callee_body\n"
        "asm_rbx_callee_body:\n"
        "4:\tsubq $1, %rbx\n"
        "\tjnz 4b\n"
        "\tpopq %rbx\n"
        "\t.cfi_adjust_cfa_offset -8\n"
        "\t.cfi_restore %rbx\n"
        "\tret\n"
        "\t.cfi_endproc\n"
        ".size asm_rbx_callee, .-asm_rbx_callee\n");

#endif
