/*
 * zcache.c - separate debuginfo kept decompressed, by build-id.
 *
 * Debian's debug packages (libc6-dbg, -dbgsym) compress their DWARF
 * (SHF_COMPRESSED, zlib), and libdw inflates every .debug_* section of a
 * file when it opens it (dwarf_begin_elf), whatever the lookups need:
 * libc6-dbg alone costs about 60 ms of CPU, each time a profile with a
 * sample in libc is symbolized: most of `profil record`'s own CPU on a
 * command of a second.  So the first time such a file is opened, a copy
 * with every section decompressed is written to the cache directory as
 * <build-id>.debug, and from then on libdw is given the copy, which it
 * maps and reads as it is; a file found under a debug root's .build-id
 * directory is copied before libdw is given anything, so the first run
 * reads the copy too.  perf keeps its ~/.debug the same way.
 *
 * The copy is keyed by the build-id the module and the found file share
 * (nothing else is cached), written whole to a temporary name and
 * renamed into place, so a reader sees a complete file or none; one that
 * does not read back as an ELF file with that build-id and no compressed
 * section is rebuilt.  Any failure (no directory, disk full, an odd
 * file) leaves libdwfl's own answer in use: the cache only saves time.
 */
#include "symint.h"

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *cache_dir; /* NULL: no cache (sym_zcache_use) */
static char *const *roots;    /* the debug roots (sym_zcache_use) */
static size_t nroots;

void sym_zcache_use(const char *dir, char *const *dirs, size_t ndirs)
{
	cache_dir = dir && *dir ? dir : NULL;
	roots = dirs;
	nroots = ndirs;
}

static int has_compressed(Elf *elf)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED))
			return 1;
	}
	return 0;
}

/* Whether elf carries the build-id id (hex). */
static int has_build_id(Elf *elf, const char *id)
{
	const void *bits;
	char hex[256];
	ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
	if (n <= 0 || (size_t)n * 2 >= sizeof hex)
		return 0;
	sym_hex(bits, (size_t)n, hex);
	return strcmp(hex, id) == 0;
}

/* in, every section decompressed, as a new ELF file written to fd.
 * Sections keep their order (so every sh_link and index holds); libelf
 * lays out the file anew.  Program headers are copied for their
 * addresses (libdwfl reads p_vaddr); their file offsets mean nothing in
 * a debuginfo file, whose loadable sections hold no bytes. */
static int write_decompressed(Elf *in, int fd)
{
	GElf_Ehdr eh;
	size_t phnum;
	Elf *out = elf_begin(fd, ELF_C_WRITE, NULL);
	int ok = out && gelf_getehdr(in, &eh) && gelf_newehdr(out, gelf_getclass(in)) &&
	         elf_getphdrnum(in, &phnum) == 0 && (phnum == 0 || gelf_newphdr(out, phnum));
	for (size_t i = 0; ok && i < phnum; i++) {
		GElf_Phdr ph;
		ok = gelf_getphdr(in, (int)i, &ph) && gelf_update_phdr(out, (int)i, &ph);
	}
	for (Elf_Scn *scn = NULL; ok && (scn = elf_nextscn(in, scn));) {
		GElf_Shdr sh;
		Elf_Scn *os = elf_newscn(out);
		Elf_Data *id = elf_getdata(scn, NULL), *od = os ? elf_newdata(os) : NULL;
		ok = gelf_getshdr(scn, &sh) && od && id && gelf_update_shdr(os, &sh);
		if (!ok)
			break;
		od->d_buf = id->d_buf;
		od->d_type = id->d_type;
		od->d_size = id->d_size;
		od->d_align = id->d_align;
		od->d_version = id->d_version;
		if (sh.sh_flags & SHF_COMPRESSED)
			ok = elf_compress(os, 0, 0) >= 0;
	}
	ok = ok && gelf_update_ehdr(out, &eh) && elf_update(out, ELF_C_WRITE) >= 0;
	if (out)
		elf_end(out);
	return ok ? 0 : -1;
}

/* The cached copy at path, opened, if it is one for id. */
static int open_cached(const char *path, const char *id)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	int good = elf && elf_kind(elf) == ELF_K_ELF && has_build_id(elf, id) &&
	           !has_compressed(elf);
	if (elf)
		elf_end(elf);
	if (!good) {
		close(fd);
		return -1;
	}
	return fd;
}

static int make_dirs(const char *dir)
{
	char p[4096];
	if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
		return -1;
	for (char *s = p + 1; *s; s++)
		if (*s == '/') {
			*s = '\0';
			if (mkdir(p, 0700) != 0 && errno != EEXIST)
				return -1;
			*s = '/';
		}
	return mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

const char *sym_zcache_dir(void)
{
	return cache_dir;
}

/* One stat() when the directory is there, as it nearly always is: each
 * kept file written asks (a build's recording: 40 times, each a mkdir of
 * every component, 200 system calls). */
int sym_zcache_make_dir(void)
{
	struct stat st;
	if (!cache_dir)
		return -1;
	return stat(cache_dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : make_dirs(cache_dir);
}

FILE *sym_keep_open(const char *path, char *tmp, size_t size)
{
	if (snprintf(tmp, size, "%s.XXXXXX", path) >= (int)size)
		return NULL;
	int fd = mkostemp(tmp, O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
	if (fd >= 0 && !f) {
		close(fd);
		unlink(tmp);
	}
	return f;
}

int sym_keep_close(FILE *f, const char *tmp, const char *path, int ok)
{
	if (fclose(f) != 0 || !ok || rename(tmp, path) != 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

void *sym_keep_map(const char *path, size_t min, size_t *size, int whole)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *m = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= min &&
	    st.st_size > 0) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | (whole ? MAP_POPULATE : 0),
		         fd, 0);
		m = m == MAP_FAILED ? NULL : m;
	}
	close(fd);
	*size = m ? (size_t)st.st_size : 0;
	return m;
}

/* Writes in's decompressed copy to path, through a temporary name. */
static int build(Elf *in, const char *path)
{
	char tmp[4200];
	FILE *f = sym_keep_open(path, tmp, sizeof tmp);
	return f ? sym_keep_close(f, tmp, path, write_decompressed(in, fileno(f)) == 0) : -1;
}

/*
 * The first run: a compressed file under a root's .build-id directory,
 * copied decompressed to path, and the copy opened (the descriptor), so
 * that libdw reads the copy already: handed the original, it inflated
 * every section a second time (libc6-dbg's libc: 2 x 10 MB, about 80 ms
 * here).  -1 when no root has a compressed file for id, or the copy
 * cannot be made (the standard finder then takes over, as before).
 */
static int copy_by_build_id(const char *id, const char *path)
{
	for (size_t i = 0; i < nroots && strlen(id) > 2; i++) {
		char file[4096];
		snprintf(file, sizeof file, "%s/.build-id/%.2s/%s.debug", roots[i], id, id + 2);
		int fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		Elf *in = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		int built = in && elf_kind(in) == ELF_K_ELF && has_build_id(in, id) &&
		            has_compressed(in) && make_dirs(cache_dir) == 0 && build(in, path) == 0;
		if (in)
			elf_end(in);
		close(fd);
		if (built)
			return open_cached(path, id);
		return -1; /* the file for id, not copied: the standard way */
	}
	return -1;
}

/*
 * The cached copy when there is one; else, for a compressed file found
 * by build-id, a copy made now and used at once; else libdwfl's finder,
 * and a copy made of what it found for the next run.  The copy is looked up first
 * because the standard finder, when it finds a file by build-id, also
 * installs that file's Elf as the module's debug file itself
 * (dwfl_build_id_find_debuginfo's "backdoor" into mod->debug.elf), so a
 * descriptor handed back after it would be ignored.
 */
int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                       Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                       GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	char id[256], path[4096];
	int n = cache_dir ? dwfl_module_build_id(mod, &bits, &vaddr) : 0;
	int cached = n > 0 && (size_t)n * 2 < sizeof id;
	if (cached) {
		sym_hex(bits, (size_t)n, id);
		cached = snprintf(path, sizeof path, "%s/%s.debug", cache_dir, id) <
		         (int)sizeof path;
	}
	int fd = cached ? open_cached(path, id) : -1;
	if (fd < 0 && cached)
		fd = copy_by_build_id(id, path);
	if (fd >= 0) {
		*debuginfo_file_name = sym_strdup(path);
		return fd;
	}
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
	                                  debuglink_file, debuglink_crc, debuginfo_file_name);
	if (fd < 0 || !cached)
		return fd;
	Elf *in = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (in && elf_kind(in) == ELF_K_ELF && has_compressed(in) && has_build_id(in, id) &&
	    make_dirs(cache_dir) == 0)
		build(in, path);
	if (in)
		elf_end(in);
	return fd;
}

void sym_libdw_version(char out[16])
{
	memset(out, 0, 16);
	const char *v = dwfl_version(NULL);
	strncpy(out, v ? v : "", 15);
}
