/*
 * mainexe.c - the path of the program's own file, the name the module log
 * gives the main program (dl_iterate_phdr names it "").
 *
 * /proc/self/exe is the file the kernel exec'd.  That is the program,
 * except where the dynamic loader itself was run with the program as its
 * argument (`/lib64/ld-linux-x86-64.so.2 PROG`, as wrappers that pass
 * --library-path do): then it is the loader, and every sample in the
 * program was named after the loader's file, whose build-id is not the
 * program's (ld-linux-x86-64.so.2+0x1fe5 for main_hot).  The kernel
 * loaded no interpreter then, so the auxiliary vector's AT_BASE is 0;
 * the program is the file mapped where its first executable segment
 * lies, as /proc/self/maps names it.
 */
#include "agent.h"
#include "../src/base/base.h"

#include <link.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>

/* An address in the main program's first executable segment (the
 * first object dl_iterate_phdr lists), 0 if it has none. */
static int first_code(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
			*(uintptr_t *)arg = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			break;
		}
	return 1; /* the main program only */
}

/* The path of the file whose executable mapping holds addr, from the text
 * of /proc/self/maps (cut into lines in place), into buf. */
static void file_at(char *maps, uintptr_t addr, char *buf, size_t size)
{
	for (char *line = maps, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		struct module_alias a;
		if (agent_maps_line(line, &a) && addr >= a.start && addr < a.end) {
			if (strlen(a.path) < size)
				strcpy(buf, a.path);
			return;
		}
	}
}

void agent_main_exe(char *buf, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (getauxval(AT_BASE) != 0)
		return; /* the kernel loaded an interpreter: exe is the program */
	uintptr_t addr = 0;
	dl_iterate_phdr(first_code, &addr);
	char *maps = addr ? agent_read_maps() : NULL;
	if (maps)
		file_at(maps, addr, buf, size);
	mem_free(maps);
}
