/*
 * maps.c - the executable mappings of files, as /proc/self/maps lists
 * them, and the file the main program was loaded from.
 *
 * The agent reads the maps for code mapped a second time (agent/aliases.c)
 * and, like the unwind cache (unwind/unwind_cache.c), needs the main
 * program's file.  /proc/self/exe is the file the kernel exec'd.  That is
 * the program, except where the dynamic loader itself was run with the
 * program as its argument (`/lib64/ld-linux-x86-64.so.2 PROG`, as wrappers
 * that pass --library-path do): then it is the loader, whose build-id and
 * file are not the program's (its samples were named
 * ld-linux-x86-64.so.2+0x1fe5, and a program without a build-id had its
 * unwind table cached under the loader's identity).  The kernel loaded
 * no interpreter then, so the auxiliary vector's AT_BASE is 0; the
 * program is the file its first executable segment is mapped from.
 *
 * Not for signal context: it opens, reads and allocates (base/alloc.c).
 */
#include "base/base.h"

#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/sysmacros.h>

char *maps_read(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t cap = 1 << 16, len = 0;
	char *buf = fd >= 0 ? mem_alloc(cap) : NULL;
	while (buf) {
		if (len + 4096 > cap) {
			char *more = mem_realloc(buf, cap *= 2);
			if (!more) {
				mem_free(buf);
				buf = NULL;
				break;
			}
			buf = more;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (fd >= 0)
		close(fd);
	if (buf)
		buf[len] = '\0';
	return buf;
}

int maps_code_line(char *line, struct maps_code *m)
{
	char *p = line, *end;
	m->start = strtoull(p, &end, 16);
	if (*end != '-')
		return 0;
	m->end = strtoull(end + 1, &p, 16);
	while (*p == ' ')
		p++;
	if (strlen(p) < 4 || p[2] != 'x')
		return 0;
	m->offset = strtoull(p + 4, &end, 16);
	unsigned long major = strtoul(end, &p, 16), minor;
	if (*p != ':')
		return 0;
	minor = strtoul(p + 1, &end, 16);
	unsigned long long ino = strtoull(end, &p, 10);
	while (*p == ' ')
		p++;
	if (ino == 0 || *p != '/' || m->end <= m->start)
		return 0;
	m->dev = makedev(major, minor);
	m->ino = (uint64_t)ino;
	m->path = p;
	return 1;
}

int maps_each_code(int (*fn)(const struct maps_code *m, void *arg), void *arg)
{
	char *maps = maps_read();
	if (!maps)
		return -1;
	int stop = 0;
	for (char *line = maps, *next; *line && !stop; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		struct maps_code m;
		if (maps_code_line(line, &m))
			stop = fn(&m, arg);
	}
	mem_free(maps);
	return 0;
}

struct path_at {
	uintptr_t addr;
	char *buf;
	size_t size;
};

static int copy_path_at(const struct maps_code *m, void *arg)
{
	struct path_at *want = arg;
	if (want->addr < m->start || want->addr >= m->end)
		return 0;
	if (strlen(m->path) < want->size)
		strcpy(want->buf, m->path);
	return 1;
}

int maps_loader_was_run(void)
{
	return getauxval(AT_BASE) == 0;
}

void maps_program_file(const struct dl_phdr_info *main, char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (!maps_loader_was_run())
		return; /* the kernel loaded an interpreter: exe is the program */
	for (unsigned i = 0; i < main->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &main->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			struct path_at want = {main->dlpi_addr + ph->p_vaddr, buf, size};
			maps_each_code(copy_path_at, &want);
			return;
		}
	}
}
