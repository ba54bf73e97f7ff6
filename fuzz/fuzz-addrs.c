/*
 * fuzz-addrs.c - the symbolizer's kept answers per address
 * (cli/symbol/addrkeep.c, addrsave.c), read from a damaged or hostile
 * file in the cache directory.
 *
 * The input is the file after the 72 bytes every file must start with
 * to be read at all (magic, libdw's version, this program's build-id):
 * the harness writes those itself, so the fuzzer spends its time on the
 * counts, the addresses, the frames and the strings.  Then, as a
 * recording would: every address the file names is asked (each answer
 * must come back whole or not at all), two new answers are added (one
 * address, a span of 256) and the file written back over what it holds,
 * and each must be there, the same, when the file is read again, unless
 * a span of the file already held its address (a recording asks the
 * file first, and adds only what it did not answer).
 */
#include "symbol/addrkeep_int.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY "fuzz"
#define NEW_VADDR UINT64_C(0x1000)
#define NEW_SPAN UINT64_C(0x2000) /* [NEW_SPAN, NEW_SPAN + 256) */

static char dir[64], *path; /* the file sym_addrs_load(KEY) reads */

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	snprintf(dir, sizeof dir, "/dev/shm/fuzz-addrs.%d", (int)getpid());
	path = sym_addrs_path(dir, KEY); /* it names this build too */
	if (mkdir(dir, 0700) != 0 && access(dir, W_OK) != 0)
		abort();
	sym_zcache_use(dir, NULL, 0);
	return 0;
}

static void write_file(const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t prefix = offsetof(struct addrs_head, naddrs);
	if (fd < 0 || write(fd, sym_addrs_head(), prefix) != (ssize_t)prefix ||
	    (size && write(fd, data, size) != (ssize_t)size))
		abort();
	close(fd);
}

/* Asks vaddr; an answer given must be whole: names, no more frames. */
static void ask(const struct sym_addrs *a, uint64_t vaddr)
{
	struct sym_frame f[SYM_MAX_FRAMES];
	size_t n = SYM_MAX_FRAMES + 1;
	if (sym_addrs_get(a, vaddr, f, SYM_MAX_FRAMES, &n) != 0)
		return;
	if (n > SYM_MAX_FRAMES)
		abort();
	for (size_t i = 0; i < n; i++)
		if (!f[i].name || !f[i].system_name)
			abort();
	sym_frames_free(f, n);
}

/* Whether the file answers vaddr. */
static int held(const struct sym_addrs *a, uint64_t vaddr)
{
	struct sym_frame got[SYM_MAX_FRAMES];
	size_t n = 0;
	if (sym_addrs_get(a, vaddr, got, SYM_MAX_FRAMES, &n) != 0)
		return 0;
	sym_frames_free(got, n);
	return 1;
}

/* Whether the file answers vaddr with want, the same. */
static int answers(const struct sym_addrs *a, uint64_t vaddr, const struct sym_frame *want)
{
	struct sym_frame got[SYM_MAX_FRAMES];
	size_t n = 0;
	if (sym_addrs_get(a, vaddr, got, SYM_MAX_FRAMES, &n) != 0)
		return 0;
	int same = n == 1 && strcmp(got[0].name, want->name) == 0 && got[0].file &&
	           strcmp(got[0].file, want->file) == 0 && got[0].decl_line == want->decl_line &&
	           got[0].line == want->line;
	sym_frames_free(got, n);
	return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	write_file(data, size);
	struct sym_addrs *a = sym_addrs_load(KEY);
	if (!a)
		abort(); /* a cache directory and a key: always an object */
	for (size_t i = 0; a->head && i < a->head->naddrs && i < 256; i++)
		ask(a, a->addrs[i].vaddr);
	ask(a, 0);
	ask(a, UINT64_MAX);

	char name[] = "fuzzed", file[] = "fuzz.c";
	struct sym_frame f = {name, name, file, 7, 9};
	const uint64_t one[2] = {NEW_VADDR, NEW_VADDR + 1}, span[2] = {NEW_SPAN, NEW_SPAN + 256};
	int put_one = !held(a, NEW_VADDR), put_span = !held(a, NEW_SPAN);
	if (put_one)
		sym_addrs_put(a, one, &f, 1);
	if (put_span)
		sym_addrs_put(a, span, &f, 1);
	sym_addrs_free(a); /* written back, merged with what the file holds */

	a = sym_addrs_load(KEY);
	if (!a || (put_one && !answers(a, NEW_VADDR, &f)) || (put_span && !answers(a, NEW_SPAN, &f)))
		abort();
	sym_addrs_free(a);
	unlink(path);
	return 0;
}
