# symnest.s - symbols that overlap, alias and lack sizes, so that
# symcases-table.c's comparison of symtab.c with libdwfl meets every rule
# of libdwfl's choice: a weak symbol inside a global one (listed before
# and after it), aliases of different sizes and bindings at one address,
# local symbols (a second pass) inside and outside the global ones,
# sizeless labels, and stretches no symbol covers.
	.text
	.weak	early_weak
	.type	early_weak, @function
	.globl	big
	.type	big, @function
big:
	.skip	32
early_weak:
	.skip	32
	.globl	same_a
	.type	same_a, @function
	.globl	same_b
	.type	same_b, @function
	.weak	same_w
	.type	same_w, @function
same_a:
same_b:
same_w:
	.skip	16
	.type	local_in, @function
local_in:
	.skip	32
label_in:
	.skip	16
	.globl	sizeless_g
sizeless_g:
	.skip	160
	.size	big, 256
	.size	early_weak, 32
	.size	same_a, 16
	.size	same_b, 32
	.size	same_w, 16
	.size	local_in, 32
	.type	local_out, @function
local_out:
	.skip	64
	.size	local_out, 64
label_out:
	.skip	64
	.globl	sizeless_after
sizeless_after:
	.skip	32
	.type	local_after_label, @function
local_after_label:
	.skip	32
	.size	local_after_label, 32
	.globl	late_global
	.type	late_global, @function
late_global:
	.skip	64
	.weak	late_weak
	.type	late_weak, @function
late_weak:
	.skip	16
	.size	late_weak, 16
	.size	late_global, 128
	.section .note.GNU-stack,"",@progbits
