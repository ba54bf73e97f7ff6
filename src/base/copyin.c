/*
 * copyin.c - read a caller's argument array without faulting.
 *
 * The multi-range forms receive a pointer to an array and a count (or, in
 * AIX's form, a terminator to search for).  A wrong pointer must give
 * EFAULT, as the kernel's copyin() would on the systems the interface
 * comes from, not a SIGSEGV inside the library.  process_vm_readv() on our
 * own pid is that copyin: the kernel reports an unreadable page instead of
 * delivering a fault.  Where it is unavailable (seccomp filters in some
 * containers deny it), a snapshot of the readable mappings decides how
 * much may be copied with memcpy.
 *
 * Copying also gives the caller's array one fixed value: validation and
 * use read our copy, so another thread rewriting the array meanwhile
 * cannot slip an unchecked entry past us.
 */
#include "base/base.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* Pages per process_vm_readv() call; each iovec stays within one page so
 * a partial transfer ends exactly at the first unreadable page. */
#define COPY_BATCH 64

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? (size_t)p : 4096;
}

/* Builds iovecs for [src, src+len), one per page piece; returns count. */
static int page_iovecs(struct iovec *iov, uintptr_t src, size_t len, size_t page)
{
	int k = 0;
	while (len > 0 && k < COPY_BATCH) {
		size_t piece = page - src % page;
		if (piece > len)
			piece = len;
		iov[k++] = (struct iovec){(void *)src, piece};
		src += piece;
		len -= piece;
	}
	return k;
}

/* process_vm_readv on ourselves; -1 when the syscall itself is refused. */
static ssize_t copy_syscall(void *dst, const void *src, size_t len)
{
	size_t done = 0, page = page_size();
	pid_t self = getpid();
	while (done < len) {
		struct iovec remote[COPY_BATCH];
		int k = page_iovecs(remote, (uintptr_t)src + done, len - done, page);
		size_t want = 0;
		for (int i = 0; i < k; i++)
			want += remote[i].iov_len;
		struct iovec local = {(char *)dst + done, want};
		ssize_t got = process_vm_readv(self, &local, 1, remote, (unsigned long)k, 0);
		if (got < 0 && errno != EFAULT && errno != ENOMEM)
			return done == 0 ? -1 : (ssize_t)done;
		if (got <= 0)
			break;
		done += (size_t)got;
		if ((size_t)got < want)
			break;
	}
	return (ssize_t)done;
}

/* Without the syscall: copy what the maps snapshot says is readable. */
static size_t copy_probed(void *dst, const void *src, size_t len)
{
	struct probe_map m;
	if (probe_map_load(&m, 'r') != 0)
		return 0;
	size_t n = probe_map_prefix(&m, src, len);
	probe_map_free(&m);
	if (n > 0)
		memcpy(dst, src, n);
	return n;
}

size_t copyin_prefix(void *dst, const void *src, size_t len)
{
	if (len == 0 || src == NULL)
		return 0;
	int saved = errno;
	ssize_t n = copy_syscall(dst, src, len);
	errno = saved;
	return n >= 0 ? (size_t)n : copy_probed(dst, src, len);
}
