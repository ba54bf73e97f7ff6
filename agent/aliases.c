/*
 * aliases.c - code of a loaded file mapped a second time, elsewhere.
 *
 * The module log learns what is loaded from the dynamic loader
 * (dl_iterate_phdr), which knows each object once.  A program may map
 * part of an object's file again at another address and run it there:
 * V8 (node, Chromium, Electron) copies its builtins next to the code it
 * compiles, by mapping the executable's text a second time into its code
 * range ("short builtin calls", on by default on x86-64), so that calls
 * between them are near.  Samples there were in no module: 28% of a
 * node loop's were "[unknown]" addresses.  So the helper reads
 * /proc/self/maps at a few sweeps (the 1st, 2nd, 4th, 8th, ...: such
 * maps are made at start-up, and a read costs 50-200 us in a large
 * program), and logs each executable mapping of a file the loader has
 * loaded but did not map there as one more load of that object, with the
 * mapping's own range and file offset; the recorder and the symbolizer
 * take it as any other mapping (a pprof mapping with its offset).
 * Samples taken there before the read carry an older generation; the
 * recorder takes the next load that covers their pc (cli/record/build.c).
 * The stack walk has no unwind table there and follows the frame pointer,
 * as at any pc in no module (V8 keeps one).  In the helper thread
 * (tick()), and at exit() in a process that ran long enough to want a
 * helper (LAZY_HELPER_CPU_NS, engine.h) but whose maps no sweep read:
 * one never given a helper (no sample of its main thread proved a safe
 * point, as when it runs such code all along), or given one too late for
 * its first sweep (a sample proved one just before the program's last
 * 100 ms).  Shorter processes skip the read: what a build's many short
 * processes would pay for code they do not have.
 */
#include "agent.h"
#include "../src/engine/engine.h"

#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

/* Whether path, links resolved, is want: the kernel's name for the file
 * opened (as /proc/self/maps names it), not realpath(), which mallocs
 * for long paths (this is the helper thread: src/base/alloc.c). */
static int resolves_to(const char *path, const char *want)
{
	char link[32], real[PATH_MAX];
	int fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return 0;
	base_fmt(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, real, sizeof real - 1);
	close(fd);
	if (n <= 0)
		return 0;
	real[n] = '\0';
	return strcmp(real, want) == 0;
}

/* Whether the object at path is the file a names: the same inode, or
 * the same path once links are resolved (a file of an overlay may show
 * another device in the maps than stat() gives). */
static int same_file(const char *path, const struct maps_code *a)
{
	struct stat st;
	if (path[0] != '/')
		return 0;
	if (stat(path, &st) == 0 && st.st_dev == a->dev && (uint64_t)st.st_ino == a->ino)
		return 1;
	return resolves_to(path, a->path);
}

/* Whether one of info's own executable segments meets a's range: a load
 * the next poll logs (the loader had just mapped it), no alias. */
static int own_segment(const struct dl_phdr_info *info, const struct maps_code *a)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && start < a->end &&
		    a->start < start + ph->p_memsz)
			return 1;
	}
	return 0;
}

int aliases_match(const struct dl_phdr_info *info, const char *path,
                  const struct maps_code *a)
{
	if (own_segment(info, a))
		return -1;
	return same_file(path, a);
}

/* Set once a read of the maps was made; read at exit. */
static atomic_int maps_were_read;

/* The kernel is asked for the code mappings alone (PROCMAP_QUERY) unless
 * a seccomp filter may refuse the ioctl; they are logged once the
 * window of our own calls is left (agent/seccomp.c). */
static void scan(void)
{
	struct maps_list l;
	atomic_store(&maps_were_read, 1);
	int may_query = filter_enter();
	int rc = maps_list_code(&l, may_query);
	if (may_query)
		filter_leave();
	for (size_t i = 0; rc == 0 && i < l.n; i++)
		modules_log_alias(&l.code[i]);
	if (rc == 0)
		maps_list_free(&l);
}

void aliases_poll(void)
{
	static unsigned long sweeps;
	sweeps++;
	if ((sweeps & (sweeps - 1)) == 0) /* a power of two */
		scan();
}

__attribute__((destructor)) static void aliases_at_exit(void)
{
	/* the exiting thread's CPU time, the main thread's as a rule: the
	 * clock the helper's deferral goes by (lazy_helper.c) */
	if (agent_running() && !atomic_load(&maps_were_read) &&
	    account_cpu_now() >= LAZY_HELPER_CPU_NS)
		scan();
}
