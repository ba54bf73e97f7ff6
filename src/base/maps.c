/*
 * maps.c - the executable mappings of files, as /proc/self/maps lists
 * them, and the file the main program was loaded from.
 *
 * The agent reads the maps for code mapped a second time (agent/aliases.c;
 * where the kernel can, it is asked for the code mappings alone: see
 * PROCMAP_QUERY below) and, like the unwind cache (unwind/unwind_cache.c),
 * needs the main program's file.  /proc/self/exe is the file the kernel exec'd.  That is
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

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>

/* /proc/self/maps, NUL-terminated, in a buffer of alloc.c (mem_free()
 * it); NULL if unread. */
static char *maps_read(void)
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

/* One line of it ("start-end perms offset major:minor inode path",
 * NUL-terminated): 1 if it is an executable mapping of a file, its
 * fields in *m (m->path points into line). */
static int maps_code_line(char *line, struct maps_code *m)
{
	char *p = line, *end;
	m->start = base_strtoull(p, &end, 16);
	if (*end != '-')
		return 0;
	m->end = base_strtoull(end + 1, &p, 16);
	while (*p == ' ')
		p++;
	if (strlen(p) < 4 || p[2] != 'x')
		return 0;
	m->offset = base_strtoull(p + 4, &end, 16);
	unsigned long major = base_strtoull(end, &p, 16), minor;
	if (*p != ':')
		return 0;
	minor = base_strtoull(p + 1, &end, 16);
	unsigned long long ino = base_strtoull(end, &p, 10);
	while (*p == ' ')
		p++;
	if (ino == 0 || *p != '/' || m->end <= m->start)
		return 0;
	m->dev = makedev(major, minor);
	m->ino = (uint64_t)ino;
	m->path = p;
	return 1;
}

static int push(struct maps_list *l, size_t *cap, const struct maps_code *m)
{
	if (l->n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct maps_code *v = mem_realloc(l->code, c * sizeof *v);
		if (!v)
			return -1;
		l->code = v;
		*cap = c;
	}
	l->code[l->n++] = *m;
	return 0;
}

static int list_from_text(struct maps_list *l)
{
	size_t cap = 0;
	if (!(l->text = maps_read()))
		return -1;
	for (char *line = l->text, *next; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		struct maps_code m;
		if (maps_code_line(line, &m) && push(l, &cap, &m) != 0)
			return -1;
	}
	return 0;
}

/*
 * PROCMAP_QUERY (Linux 6.11; <linux/fs.h>, which Debian 12's headers
 * predate, hence the layout written out): an ioctl on the maps file that
 * returns the first mapping at or after an address with the permissions
 * and backing asked, the kernel skipping the others itself.  A process
 * of 1,000 threads has 2,000 mappings of stacks and guard pages and a few
 * dozen of code: formatting and parsing them all cost the helper 2-3 ms
 * a read on this VM, 0.4% of a CPU while such a program idled.
 */
struct maps_query {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};
#define MAPS_QUERY _IOWR('f', 17, struct maps_query)
#define QUERY_EXECUTABLE 0x04
#define QUERY_COVERING_OR_NEXT 0x10
#define QUERY_FILE_BACKED 0x20
#define NAME_ROOM 4096 /* a path's room in the arena, NUL included */

/* Room for the next name at l->text + used, the arena (*room bytes)
 * grown as needed; NULL if it cannot grow. */
static char *name_room(struct maps_list *l, size_t used, size_t *room)
{
	if (*room - used < NAME_ROOM) {
		size_t r = *room ? 2 * *room : 4 * NAME_ROOM;
		char *t = mem_realloc(l->text, r);
		if (!t)
			return NULL;
		l->text = t;
		*room = r;
	}
	return l->text + used;
}

/* 0, or -1 with errno (ENOTTY: a kernel before 6.11). */
static int list_from_query(struct maps_list *l)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t cap = 0, used = 0, room = 0;
	uint64_t addr = 0;
	int rc = 0;
	for (;;) {
		char *name = name_room(l, used, &room);
		if (!name) {
			rc = -1;
			break;
		}
		struct maps_query q = {
			.size = sizeof q,
			.query_flags = QUERY_EXECUTABLE | QUERY_COVERING_OR_NEXT | QUERY_FILE_BACKED,
			.query_addr = addr,
			.vma_name_addr = (uintptr_t)name,
			.vma_name_size = NAME_ROOM,
		};
		if (ioctl(fd, MAPS_QUERY, &q) != 0) {
			rc = errno == ENOENT ? 0 : -1; /* ENOENT: no mapping after addr */
			break;
		}
		/* the path's offset in the arena, which may still move */
		struct maps_code m = {q.vma_start, q.vma_end, q.vma_offset,
		                      makedev(q.dev_major, q.dev_minor), q.inode,
		                      (const char *)(uintptr_t)used};
		if (q.inode != 0 && name[0] == '/' && q.vma_end > q.vma_start &&
		    push(l, &cap, &m) != 0) {
			rc = -1;
			break;
		}
		used += strnlen(name, NAME_ROOM - 1) + 1;
		if (q.vma_end <= addr)
			break; /* never loop on a kernel that does not move on */
		addr = q.vma_end;
	}
	close(fd);
	for (size_t i = 0; rc == 0 && i < l->n; i++)
		l->code[i].path = l->text + (uintptr_t)l->code[i].path;
	return rc;
}

void maps_list_free(struct maps_list *l)
{
	mem_free(l->code);
	mem_free(l->text);
	*l = (struct maps_list){0};
}

int maps_list_code(struct maps_list *l, int may_query)
{
	*l = (struct maps_list){0};
	if (may_query && list_from_query(l) == 0)
		return 0;
	maps_list_free(l);
	if (list_from_text(l) == 0)
		return 0;
	maps_list_free(l);
	return -1;
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
	uintptr_t code = 0;
	for (unsigned i = 0; i < main->dlpi_phnum && !code; i++)
		if (main->dlpi_phdr[i].p_type == PT_LOAD && (main->dlpi_phdr[i].p_flags & PF_X))
			code = main->dlpi_addr + main->dlpi_phdr[i].p_vaddr;
	struct maps_list l;
	/* the text only: a seccomp filter may be in force (agent/seccomp.c) */
	if (!code || maps_list_code(&l, 0) != 0)
		return;
	for (size_t i = 0; i < l.n; i++)
		if (code >= l.code[i].start && code < l.code[i].end) {
			if (strlen(l.code[i].path) < size)
				strcpy(buf, l.code[i].path);
			break;
		}
	maps_list_free(&l);
}
