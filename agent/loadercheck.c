/*
 * loadercheck.c - whether a program being exec'd can load the agent.
 *
 * The agent passes itself on in LD_PRELOAD to every program the process
 * runs (envfix.c).  Two kinds of program cannot take it, and the preload
 * then hurts them: one linked against another C library (musl), whose
 * loader cannot relocate a glibc object and stops the program with
 * status 127 before it runs ("Error relocating libprofil-agent.so:
 * __register_atfork: symbol not found"); and one of another ELF class or
 * machine (a 32-bit i386 program), whose loader prints "cannot be
 * preloaded (wrong ELF class: ELFCLASS64): ignored" on the program's
 * stderr.  envfix.c leaves the agent out of such a program's LD_PRELOAD;
 * it runs unprofiled, as it would have anyway, and record's warning about
 * uncovered CPU time names it.  (Its own children lose the agent with
 * it: a musl program cannot carry it through.)  A static program keeps
 * it: its loader-less image ignores LD_PRELOAD, and the programs it runs
 * want it.
 *
 * Runs in the exec path, vfork children included: system calls and the
 * stack only (open, pread, close, access), nothing allocated.  Our own
 * loader's name is read once, at load, before the exec hook is set.
 */
#include "agent.h"
#include "../src/process/process.h"
#include "../src/base/elfhead.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

/* The base name of the main program's PT_INTERP ("ld-linux-x86-64.so.2");
 * empty: unknown, and nothing is left out.  Written once at load. */
static char our_loader[64];

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size, (void)arg;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type != PT_INTERP)
			continue;
		const char *interp = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		const char *name = elf_base_name(interp);
		if (strlen(name) < sizeof our_loader)
			strcpy(our_loader, name);
	}
	return 1; /* the main program is listed first */
}

void loadercheck_init(void)
{
	dl_iterate_phdr(first_object, NULL);
}

/* name looked up along PATH as execvpe() does (the caller's PATH, else
 * its default), into buf: the first candidate access() calls executable;
 * NULL if none. */
static const char *search(const char *name, char *buf, size_t cap)
{
	const char *path = NULL;
	for (char **e = environ; e && *e && !path; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path = *e + 5;
	if (!path)
		path = "/bin:/usr/bin";
	size_t len = strlen(name);
	for (const char *p = path;;) {
		const char *end = strchr(p, ':');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n + 1 + len < cap) {
			memcpy(buf, n ? p : ".", n ? n : 1);
			size_t at = n ? n : 1;
			buf[at] = '/';
			memcpy(buf + at + 1, name, len + 1);
			if (access(buf, X_OK) == 0)
				return buf;
		}
		if (!end)
			return NULL;
		p = end + 1;
	}
}

/* Whether the ELF file open at fd is one whose loader cannot take the
 * agent: another class or machine, or a PT_INTERP named otherwise.  A
 * static program keeps it: LD_PRELOAD is ignored there, and kept for its
 * children. */
static int refuses(int fd)
{
	struct elf_head h;
	if (!elf_head_read(fd, &h))
		return 0; /* a script, or too short: its interpreter runs */
	if (h.cls != ELFCLASS64 ||
	    (ELFHEAD_OUR_MACHINE != EM_NONE && h.machine != ELFHEAD_OUR_MACHINE))
		return 1;
	return h.has_interp == 1 && strcmp(elf_base_name(h.interp), our_loader) != 0;
}

int loadercheck_refuses(const struct exec_target *t)
{
	char buf[PATH_MAX];
	const char *path = t->path;
	if (!our_loader[0])
		return 0;
	if (!*path) /* the file open at dirfd */
		return t->dirfd >= 0 && refuses(t->dirfd);
	if (t->search && !strchr(path, '/') && (path = search(path, buf, sizeof buf)) == NULL)
		return 0;
	int fd = openat(t->dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* the exec will fail, or it is not ours to read */
	int r = refuses(fd);
	close(fd);
	return r;
}
