/*
 * test-maps.c - the executable file mappings base/maps.c lists: asked of
 * the kernel (PROCMAP_QUERY, Linux 6.11) and parsed from the text of
 * /proc/self/maps, the same; and the main program's file.  The runner
 * links its own copy of maps.c (Makefile, TEST_AGENT_SRC).
 */
#include "runner.h"
#include "base/base.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

/* Whether the kernel answers PROCMAP_QUERY (asked with a size too small,
 * which it refuses with EINVAL; an older kernel says ENOTTY). */
static int kernel_has_query(void)
{
	uint64_t q[13] = {8};
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	int rc = ioctl(fd, _IOWR('f', 17, uint64_t[13]), q);
	int e = errno;
	close(fd);
	return rc == 0 || e != ENOTTY;
}

static int same_list(const struct maps_list *a, const struct maps_list *b)
{
	if (a->n != b->n) {
		fprintf(stderr, "  %zu mappings against %zu\n", a->n, b->n);
		return 0;
	}
	for (size_t i = 0; i < a->n; i++) {
		const struct maps_code *x = &a->code[i], *y = &b->code[i];
		if (x->start != y->start || x->end != y->end || x->offset != y->offset ||
		    x->dev != y->dev || x->ino != y->ino || strcmp(x->path, y->path) != 0) {
			fprintf(stderr, "  mapping %zu: %llx-%llx %s against %llx-%llx %s\n", i,
			        (unsigned long long)x->start, (unsigned long long)x->end, x->path,
			        (unsigned long long)y->start, (unsigned long long)y->end, y->path);
			return 0;
		}
	}
	return 1;
}

/* The runner's own code, libc's, and a library loaded for the test:
 * each in the list, the same whichever way it was read. */
TEST_IMPL(maps_query_lists_as_the_text)
{
	void *lib = dlopen("libz.so.1", RTLD_NOW);
	struct maps_list text, query;
	ASSERT(maps_list_code(&text, 0) == 0);
	ASSERT(maps_list_code(&query, 1) == 0);
	ASSERT(text.n >= 3);
	Dl_info self, c;
	ASSERT(dladdr((void *)maps_list_code, &self) && dladdr((void *)strcmp, &c));
	int found_self = 0, found_libc = 0;
	for (size_t i = 0; i < text.n; i++) {
		struct stat st;
		ASSERT(stat(text.code[i].path, &st) == 0 || strstr(text.code[i].path, "(deleted)"));
		found_self |= (uintptr_t)maps_list_code >= text.code[i].start &&
		              (uintptr_t)maps_list_code < text.code[i].end;
		found_libc |= (uintptr_t)strcmp >= text.code[i].start &&
		              (uintptr_t)strcmp < text.code[i].end;
	}
	ASSERT(found_self && found_libc);
	fprintf(stderr, "  %zu executable file mappings; PROCMAP_QUERY %s\n", text.n,
	        kernel_has_query() ? "answered" : "not in this kernel (the text twice)");
	ASSERT(same_list(&text, &query));
	maps_list_free(&text);
	maps_list_free(&query);
	ASSERT(text.code == NULL && text.n == 0);
	if (lib)
		dlclose(lib);
	return 0;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	maps_program_file(info, arg, PATH_MAX);
	return 1;
}

/* Started by the kernel with its interpreter: the program is
 * /proc/self/exe's file. */
TEST_IMPL(maps_program_file_is_the_exe)
{
	char got[PATH_MAX], want[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", want, sizeof want - 1);
	ASSERT(n > 0);
	want[n] = '\0';
	ASSERT(!maps_loader_was_run());
	dl_iterate_phdr(first_object, got);
	ASSERT(strcmp(got, want) == 0);
	return 0;
}
