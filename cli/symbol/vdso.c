/*
 * vdso.c - this process's vDSO as a file.  The vDSO is not on disk, but
 * the profile is symbolized by `profil record` on the kernel that ran the
 * program, so our own vDSO is the same image (the build-id check in
 * image.c catches a profile read on another kernel).  libdwfl reads
 * files, so the image is copied into a memfd once.
 */
#include "symint.h"

#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

/* Size of the [vdso] mapping from /proc/self/maps; 0 when there is none. */
static size_t vdso_size(uintptr_t base)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	size_t size = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base) {
			size = hi - lo;
			break;
		}
	}
	fclose(f);
	return size;
}

const char *sym_vdso_path(void)
{
	static char path[64];
	static int tried;
	if (tried)
		return path[0] ? path : NULL;
	tried = 1;
	uintptr_t base = getauxval(AT_SYSINFO_EHDR);
	size_t size = base ? vdso_size(base) : 0;
	if (!size)
		return NULL;
	int fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (write(fd, (const void *)base, size) != (ssize_t)size) {
		close(fd);
		return NULL;
	}
	/* fd stays open for the life of the process: the path names it */
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	return path;
}
