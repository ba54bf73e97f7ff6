/*
 * test-dynsym.c - a loaded object's functions by name from its own GNU
 * hash table (src/base/dynsym.c), which the lazy helper uses for the C
 * library's system call wrappers in place of dladdr1().  The oracle is
 * the loader's: dlsym() on libc's handle for where libc defines a name,
 * dladdr1() for the symbol and size there.  The runner links its own copy of dynsym.c (Makefile,
 * TEST_AGENT_SRC).
 */
#include "runner.h"
#include "base/base.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

struct found {
	const char *prefix; /* of the object's file name or soname */
	struct dl_phdr_info info;
	int seen;
};

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct found *f = arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	if (!f->seen && strncmp(base, f->prefix, strlen(f->prefix)) == 0) {
		f->info = *info;
		f->seen = 1;
	}
	return 0;
}

/* The lazy helper's wrappers and more of libc's functions: each where
 * the loader finds it, with the size of the symbol the loader has there. */
TEST_IMPL(dynsym_finds_libc_functions_as_the_loader)
{
	static const char *const names[] = {
		"read", "write", "readv", "writev", "pread64", "pwrite64", "recv", "recvfrom",
		"recvmsg", "send", "sendto", "sendmsg", "poll", "ppoll", "select", "pselect",
		"epoll_wait", "epoll_pwait", "nanosleep", "clock_nanosleep", "accept", "accept4",
		"connect", "wait4", "waitpid", "open", "close", "getpid", "qsort", "fopen",
		"pthread_create", "malloc", "free", "dl_iterate_phdr", "getaddrinfo"};
	struct found libc = {"libc.so", {0}, 0};
	dl_iterate_phdr(find_object, &libc);
	ASSERT(libc.seen);
	/* libc's own definitions, not the first in the search order: the
	 * runner's library and a sanitizer's interceptors define some names
	 * first (under ASan, 24 of these) */
	void *handle = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	ASSERT(handle);
	size_t checked = 0;
	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		uintptr_t at;
		size_t size = dynsym_function(&libc.info, names[i], &at);
		void *loader = dlsym(handle, names[i]);
		Dl_info di;
		const ElfW(Sym) *sym = NULL;
		ASSERT(loader && dladdr1(loader, &di, (void **)&sym, RTLD_DL_SYMENT) && sym);
		ASSERT_EQ((uintptr_t)di.dli_fbase, libc.info.dlpi_addr);
		if (size != sym->st_size || at != (uintptr_t)loader)
			FAIL_AT("%s: %zu bytes at %#lx; the loader's %zu at %p", names[i], size,
			        (unsigned long)at, (size_t)sym->st_size, loader);
		checked++;
	}
	dlclose(handle);
	fprintf(stderr, "  %zu of %zu names checked in libc\n", checked,
	        sizeof names / sizeof *names);
	return 0;
}

/* No answer for what is not a plain function there: a name libc does not
 * define, a variable, an IFUNC (its symbol is the resolver).  memcpy is
 * also the versions' case: glibc defines an older memcpy@GLIBC_2.2.5, a
 * plain function, before the default memcpy@@GLIBC_2.14, an IFUNC, and
 * the older one is not what a lookup without a version binds. */
TEST_IMPL(dynsym_answers_only_plain_functions)
{
	struct found libc = {"libc.so", {0}, 0};
	dl_iterate_phdr(find_object, &libc);
	ASSERT(libc.seen);
	uintptr_t at = 1;
	ASSERT_EQ(dynsym_function(&libc.info, "no_such_function_in_libc", &at), 0);
	ASSERT_EQ(at, 0);
	ASSERT_EQ(dynsym_function(&libc.info, "environ", &at), 0);
	ASSERT_EQ(dynsym_function(&libc.info, "", &at), 0);
	/* x86-64 glibc selects these by CPU: STT_GNU_IFUNC */
	ASSERT_EQ(dynsym_function(&libc.info, "memcpy", &at), 0);
	ASSERT_EQ(dynsym_function(&libc.info, "strlen", &at), 0);
	return 0;
}

/* The vDSO's dynamic section is not relocated by the loader (its entries
 * are offsets, the other form dynsym.c takes): its clock_gettime is found
 * inside its executable segment. */
TEST_IMPL(dynsym_reads_unrelocated_dynamic_sections)
{
	struct found vdso = {"linux-vdso", {0}, 0};
	dl_iterate_phdr(find_object, &vdso);
	if (!vdso.seen || !getauxval(AT_SYSINFO_EHDR))
		return TEST_SKIP_STATUS;
	uintptr_t at;
	size_t size = dynsym_function(&vdso.info, "__vdso_clock_gettime", &at);
	ASSERT(size > 0);
	int inside = 0;
	for (int i = 0; i < vdso.info.dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &vdso.info.dlpi_phdr[i];
		uintptr_t lo = vdso.info.dlpi_addr + ph->p_vaddr;
		inside |= ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && at >= lo &&
		          at + size <= lo + ph->p_memsz;
	}
	ASSERT(inside);
	/* the same function the C library calls through its own pointer */
	void *handle = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	void *by_loader = handle ? dlsym(handle, "__vdso_clock_gettime") : NULL;
	if (by_loader)
		ASSERT_EQ(at, (uintptr_t)by_loader);
	if (handle)
		dlclose(handle);
	return 0;
}
