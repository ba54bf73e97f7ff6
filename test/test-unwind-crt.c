/*
 * test-unwind-crt.c - the rows of _init and _fini (src/unwind/unwind_crt.c),
 * code from crti.o and crtn.o that has no FDE.  A sample in a library's
 * _init (the page faults of its first code at dlopen, OpenSSL's CPU probe
 * that libcrypto's .init calls) ended "[unknown];_init".
 *
 * The rest of the unwinder (uw_emit(), uw_module_build(), unwind_walk())
 * is test-unwind.c's, which includes it.
 */
#include "runner.h"

#include "../src/unwind/unwind_crt.c"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>

/* Code as Debian's binaries have it (objdump), and shapes that are not. */
static const uint8_t zlib_init[] = {         /* libz.so.1's _init */
	0x48, 0x83, 0xec, 0x08,                   /* sub $8,%rsp */
	0x48, 0x8b, 0x05, 0xbd, 0xaf, 0x01, 0x00, /* mov __gmon_start__@GOT(%rip),%rax */
	0x48, 0x85, 0xc0,                         /* test %rax,%rax */
	0x74, 0x02,                               /* je +2 */
	0xff, 0xd0,                               /* call *%rax */
	0x48, 0x83, 0xc4, 0x08,                   /* add $8,%rsp */
	0xc3};                                    /* ret */
static const uint8_t crypto_init[] = {       /* libcrypto.so.3's: its CPU probe */
	0x48, 0x83, 0xec, 0x08, 0x48, 0x8b, 0x05, 0x6d, 0xcb, 0x3b, 0x00, 0x48, 0x85, 0xc0,
	0x74, 0x02, 0xff, 0xd0,
	0xe8, 0x09, 0xb6, 0x16, 0x00,             /* call OPENSSL_cpuid_setup */
	0x48, 0x83, 0xc4, 0x08, 0xc3};
static const uint8_t cet_fini[] = {          /* with -fcf-protection (Ubuntu) */
	0xf3, 0x0f, 0x1e, 0xfa,                   /* endbr64 */
	0x48, 0x83, 0xec, 0x08, 0x48, 0x83, 0xc4, 0x08, 0xc3};
static const uint8_t pushes[] = {            /* a push inside: not crt's shape */
	0x48, 0x83, 0xec, 0x08, 0x53, 0xff, 0xd0, 0x5b, 0x48, 0x83, 0xc4, 0x08, 0xc3};
static const uint8_t no_sub[] = {            /* a function that starts otherwise */
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xc4, 0x08, 0xc3};

TEST_IMPL(unwind_crt_shapes)
{
	size_t body = 0;
	ASSERT_EQ(crt_shape(zlib_init, sizeof zlib_init, &body), 22u);
	ASSERT_EQ(body, 4u);
	ASSERT_EQ(crt_shape(crypto_init, sizeof crypto_init, &body), 27u);
	ASSERT_EQ(crt_shape(cet_fini, sizeof cet_fini, &body), 12u);
	ASSERT_EQ(body, 8u);
	ASSERT_EQ(crt_shape(pushes, sizeof pushes, &body), 0u);
	ASSERT_EQ(crt_shape(no_sub, sizeof no_sub, &body), 0u);
	/* the epilogue past what may be read: nothing */
	ASSERT_EQ(crt_shape(zlib_init, sizeof zlib_init - 1, &body), 0u);
	ASSERT_EQ(crt_shape(zlib_init, 3, &body), 0u);
	return 0;
}

struct lib {
	const char *suffix;
	struct uw_module *m;
	uintptr_t init;
};

static int find_lib(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct lib *l = arg;
	size_t ln = strlen(info->dlpi_name), ls = strlen(l->suffix);
	if (l->m || ln < ls || strcmp(info->dlpi_name + ln - ls, l->suffix) != 0)
		return 0;
	uintptr_t hdr = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	l->m = uw_module_build(info, hdr);
	struct trows t = {0};
	t.text_lo = l->m ? l->m->lo : 0, t.text_hi = l->m ? l->m->hi : 0;
	uintptr_t fn[2];
	init_fini(info, &t, fn);
	l->init = fn[0];
	return 1;
}

/*
 * Our own libprofil.so, built by gcc with crti.o's _init: a walk from its
 * second instruction (after "sub $8,%rsp"), whose return address is 8
 * above the stack pointer, reaches that caller (an address in no module,
 * where the walk then ends, failed): two frames.  Without the rows, the
 * frame-pointer step from a zero rbp ended it at one.
 */
TEST_IMPL(unwind_crt_walk_from_init)
{
	void *h = dlopen("libprofil.so.1", RTLD_NOW);
	ASSERT(h != NULL);
	struct lib l = {"/libprofil.so.1", NULL, 0};
	dl_iterate_phdr(find_lib, &l);
	ASSERT(l.m != NULL);
	ASSERT(l.init != 0);
	size_t body = 0;
	ASSERT(crt_shape((const uint8_t *)l.init, 64, &body) > 0);
	struct uw_table *table = malloc(sizeof *table + sizeof table->mods[0]);
	ASSERT(table != NULL);
	table->nmods = 1;
	table->mods[0] = l.m;
	uintptr_t stack[64] = {0}, caller = 0x1234560;
	stack[9] = caller; /* rsp = &stack[8]: the pad, then the return address */
	uint64_t pcs[8];
	volatile uint32_t n = 0;
	enum uw_end end = unwind_walk(table, l.init + body, (uintptr_t)&stack[8], 0, 0, pcs, 8, &n);
	printf("_init of libprofil.so.1 at %#lx, body +%zu: %u frames, end %d\n",
	       (unsigned long)l.init, body, (unsigned)n, (int)end);
	ASSERT_EQ(n, 2u);
	ASSERT_EQ(pcs[1], (uint64_t)caller);
	ASSERT_EQ(end, UW_END_FAILED);
	free(table);
	uw_module_free(l.m);
	dlclose(h);
	return 0;
}
