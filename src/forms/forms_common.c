/*
 * forms_common.c - the checks and the last step every multi-range form
 * shares (see forms.h for the recipe).
 */
#include "forms/forms.h"

#include <errno.h>
#include <stdlib.h>

_Static_assert(PTABLE_MAX_RANGES == PROFIL_MAX_RANGES, "the documented limit");

int forms_set_buffer(struct prange *r, void *buf, size_t bytes, unsigned width)
{
	/* NULL with a size is a malformed entry, not an unmapped buffer:
	 * EINVAL (docs/contract.md, "Errors"); misaligned counters cannot be
	 * updated atomically (the classic form refuses them too). */
	if (buf == NULL || (uintptr_t)buf % width != 0 || bytes < width) {
		errno = EINVAL;
		return -1;
	}
	r->buf = buf;
	r->nbins = bytes / width;
	r->width = (uint8_t)width;
	return 0;
}

static int covered(const struct probe_map *m, const void *p, size_t len)
{
	return probe_map_prefix(m, p, len) == len;
}

/* Every buffer of t writable, by one snapshot of the address space. */
static int probe_table(const struct ptable *t)
{
	struct probe_map m;
	if (probe_map_load(&m, 'w') != 0)
		return -1;
	int ok = !t->overflow || covered(&m, t->overflow, t->overflow_width);
	for (size_t i = 0; ok && i < t->nranges; i++) {
		const struct prange *r = &t->ranges[i];
		ok = covered(&m, r->buf, r->nbins * r->width);
	}
	probe_map_free(&m);
	if (!ok)
		errno = EFAULT;
	return ok ? 0 : -1;
}

int forms_publish(struct ptable *t)
{
	if (t->nranges == 0 && !t->overflow) {
		ptable_free(t); /* every entry was "off": so is profiling */
		return gmon_publish(NULL);
	}
	if (ptable_sort_check(t) != 0 || probe_table(t) != 0) {
		int e = errno;
		ptable_free(t);
		return forms_fail(e);
	}
	return gmon_publish(t);
}

int forms_build(void *copy, size_t n, size_t cap, enum ptable_form form, forms_fill_fn *fill,
                const void *ctx)
{
	struct ptable *t = ptable_new(cap);
	int rc = t ? fill(t, copy, n, ctx) : -1;
	int e = errno;
	free(copy);
	if (rc != 0) {
		ptable_free(t);
		return forms_fail(e);
	}
	t->mode = PTABLE_HIST;
	t->form = form;
	return forms_publish(t);
}

int forms_fail(int err)
{
	if (err == EFAULT)
		gmon_publish(NULL);
	errno = err;
	return -1;
}

void *forms_copy_array(const void *src, size_t n, size_t size)
{
	size_t bytes;
	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = EINVAL;
		return NULL;
	}
	void *copy = malloc(bytes ? bytes : 1);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	if (copyin_prefix(copy, src, bytes) != bytes) {
		free(copy);
		errno = EFAULT;
		return NULL;
	}
	return copy;
}
