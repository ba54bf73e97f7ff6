/*
 * unwind_cache.c - module tables shared by processes and recordings.
 *
 * Building a module's rows costs milliseconds (libc: 3 ms, libpython: 5
 * ms; libLLVM, for rustc: about 100 ms), once per process.  A shell
 * script that runs a thousand short programs would pay that a thousand
 * times for the same libc, more than the profiling itself.  So a table,
 * once built, is written to the cache directory under the object's GNU
 * build-id, and the next process that loads the same object reads the
 * file instead of building it: the rows are position independent (pc
 * offsets from the module's lo, itself stored relative to the load
 * bias).  The directory is `profil record`'s cache (kept across
 * recordings, PROFIL_UNWIND_CACHE), else its directory for the ring
 * files (private to the user, gone when the recording ends).
 *
 * A file is trusted no further than the handler needs: its sizes must add
 * up, and the handler bounds every index entry it uses, so a damaged file
 * can give wrong stacks but never a read outside the table.  The rows and
 * the index are mapped, shared between processes (uw_cache_load() says
 * why that is safe).  Files are
 * named by CACHE_MAGIC, which changes whenever the rows unwind_cfi.c
 * makes for the same object would change, so a cache kept across
 * versions never hands one version's rows to another.  Objects without
 * a build-id (rustc's libraries) are keyed by their file's identity
 * instead.  Outside signal context only.
 */
#include "unwind/unwind.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC 0x38574e55u /* "UNW8": bump with any change to the rows */

/* The file: this header, nrows rows, nidx index entries. */
struct cache_hdr {
	uint32_t magic, row_size;
	uint64_t hdr_off;        /* .eh_frame_hdr minus the load bias */
	uint64_t lo_off, hi_off; /* the module's range minus the load bias */
	uint64_t nrows, nidx;
};

/* Set by unwind_start(), "" for no cache: kept (base_keep()), once for
 * each directory in turn (a program of the library's that starts and
 * stops a thousand times keeps it once). */
static const char *cache_dir = "";

void uw_cache_dir(const char *dir)
{
	if (dir && strcmp(dir, cache_dir) == 0)
		return;
	const char *kept = dir && *dir ? base_keep(dir, PATH_MAX) : NULL;
	cache_dir = kept ? kept : "";
}

/* The object's GNU build-id, from its PT_NOTE segments in memory; its
 * length, 0 when it has none or it is longer than cap.  (engine.h: the
 * agent's module log uses it too.) */
size_t object_build_id(const struct dl_phdr_info *info, uint8_t *out, size_t cap)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			size_t name = (n->n_namesz + 3) & ~(size_t)3, desc = (n->n_descsz + 3) & ~(size_t)3;
			const char *d = p + sizeof *n + name;
			if (name > (size_t)(end - p) || desc > (size_t)(end - d))
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(p + sizeof *n, "GNU", 4) == 0 && n->n_descsz <= cap) {
				memcpy(out, d, n->n_descsz);
				return n->n_descsz;
			}
			p = d + desc;
		}
	}
	return 0;
}

int uw_object_path(const struct dl_phdr_info *info, char *buf, size_t size)
{
	const char *name = info->dlpi_name;
	if (name && name[0])
		base_fmt(buf, size, "%s", name);
	else if (!maps_loader_was_run())
		base_fmt(buf, size, "/proc/self/exe"); /* found even once the file is replaced */
	else
		maps_program_file(info, buf, size);
	return buf[0] == '/' ? 0 : -1;
}

/* The key of an object without a build-id: its file's identity,
 * "file-<device>-<inode>-<size>-<mtime ns>" (uw_object_path()'s file).  A
 * file replaced or rewritten gets a new inode or mtime, so a table is
 * never reused for other code.  0, or -1 when the file cannot be
 * stat'ed. */
static int file_key(const struct dl_phdr_info *info, char *out, size_t size)
{
	struct stat st;
	char *path = mem_alloc(PATH_MAX); /* off the stack: this may run on a small thread's */
	if (!path)
		return -1;
	int found = uw_object_path(info, path, PATH_MAX) == 0 && stat(path, &st) == 0 &&
	            S_ISREG(st.st_mode);
	mem_free(path);
	if (!found)
		return -1;
	int n = base_fmt(out, size, "file-%lx-%lx-%lx-%lx.%09ld", (unsigned long)st.st_dev,
	                 (unsigned long)st.st_ino, (unsigned long)st.st_size,
	                 (unsigned long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
	return n > 0 && (size_t)n < size ? 0 : -1;
}

/* "<dir>/uw<magic>-<key>-<hdr offset>", key the object's build-id in hex
 * (or its file_key()); -1 when there is no cache or key. */
static int cache_path(const struct dl_phdr_info *info, uintptr_t hdr, char *path, size_t size)
{
	uint8_t id[64];
	char key[160];
	if (!cache_dir[0])
		return -1;
	size_t n = object_build_id(info, id, sizeof id);
	if (n == 0 && file_key(info, key, sizeof key) != 0)
		return -1;
	/* by hand: snprintf("%02x") a byte was 100 calls a process start */
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		key[2 * i] = hex[id[i] >> 4];
		key[2 * i + 1] = hex[id[i] & 15];
	}
	if (n)
		key[2 * n] = '\0';
	int w = base_fmt(path, size, "%s/uw%08x-%s-%lx", cache_dir, CACHE_MAGIC, key,
	                 (unsigned long)(hdr - info->dlpi_addr));
	return w > 0 && (size_t)w < size ? 0 : -1;
}

/* Whether a file of len bytes with header h is laid out as a table for
 * the object whose .eh_frame_hdr lies hdr_off past its load bias. */
static int valid_header(const struct cache_hdr *h, size_t len, uint64_t hdr_off)
{
	return h->magic == CACHE_MAGIC && h->row_size == sizeof(struct uw_row) &&
	       h->hdr_off == hdr_off && h->hi_off > h->lo_off &&
	       h->hi_off - h->lo_off <= UINT32_MAX &&
	       h->nidx == ((h->hi_off - h->lo_off) >> UW_INDEX_SHIFT) + 2 && h->nrows <= len &&
	       len == sizeof *h + h->nrows * sizeof(struct uw_row) + h->nidx * 4;
}

static int read_at(int fd, void *buf, size_t n, off_t at)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, at + (off_t)got);
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

/*
 * The header is read and checked; the rows and the index are mapped from
 * the file, read-only, and shared with every other process that maps
 * them.  Copying the rows cost each process of a shell script ~0.8 ms for
 * libc, ld.so and the program (/bin/true took 1.7 ms under the agent
 * against 0.5 ms alone); reading and checking the index cost each cc1 of
 * a build 0.2 ms (478,579 rows, a 400 KB index), now neither.  No entry
 * of the index is trusted: find_row() (unwind.c) searches the whole
 * table when a block's entries are out of order or past the rows, so a
 * damaged file gives wrong stacks, never a read outside the table.
 * Nothing outside the signal handler touches the mapping: a file cut
 * short under it can only raise SIGBUS in a stack walk, which sample.c
 * recovers (walk_stack(): that sample's stack ends unknown, sampling goes
 * on).  The files themselves are only ever replaced whole
 * (uw_cache_store's rename), never rewritten in place.
 */
struct uw_module *uw_cache_load(const struct dl_phdr_info *info, uintptr_t hdr)
{
	char path[4200];
	if (cache_path(info, hdr, path, sizeof path) != 0)
		return NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct uw_module *m = NULL;
	struct cache_hdr h;
	struct stat st;
	void *map = MAP_FAILED;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof h || read_at(fd, &h, sizeof h, 0) != 0 ||
	    !valid_header(&h, (size_t)st.st_size, hdr - info->dlpi_addr) ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED ||
	    (m = mem_calloc(1, sizeof *m)) == NULL) {
		if (map != MAP_FAILED)
			munmap(map, (size_t)st.st_size);
		goto out;
	}
	size_t rows_end = sizeof h + h.nrows * sizeof(struct uw_row);
	m->lo = info->dlpi_addr + h.lo_off;
	m->hi = info->dlpi_addr + h.hi_off;
	m->nrows = h.nrows;
	m->rows = (const struct uw_row *)((const char *)map + sizeof h);
	m->index = (const uint32_t *)((const char *)map + rows_end);
	m->map = map;
	m->maplen = (size_t)st.st_size;
out:
	close(fd);
	return m;
}

void uw_cache_store(const struct dl_phdr_info *info, uintptr_t hdr, const struct uw_module *m)
{
	char path[4200], tmp[4300];
	if (cache_path(info, hdr, path, sizeof path) != 0)
		return;
	struct cache_hdr h = {CACHE_MAGIC, sizeof(struct uw_row), hdr - info->dlpi_addr,
	                      m->lo - info->dlpi_addr, m->hi - info->dlpi_addr, m->nrows,
	                      ((m->hi - m->lo) >> UW_INDEX_SHIFT) + 2};
	base_fmt(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0) /* left by a process killed */
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	size_t rows = m->nrows * sizeof(struct uw_row), idx = h.nidx * 4;
	int ok = write(fd, &h, sizeof h) == (ssize_t)sizeof h &&
	         write(fd, m->rows, rows) == (ssize_t)rows &&
	         write(fd, m->index, idx) == (ssize_t)idx;
	ok = close(fd) == 0 && ok;
	/* rename: another process racing on the same object writes the same
	 * bytes; a reader sees a whole file or none */
	if (!ok || rename(tmp, path) != 0)
		unlink(tmp);
}

void uw_module_free(struct uw_module *m)
{
	if (m && m->map)
		munmap(m->map, m->maplen);
	if (m)
		mem_free(m->heap);
	mem_free(m);
}
