/*
 * gmon.c - profil_write_gmon(): the current or last histograms as gmon.out
 * files for GNU gprof.
 *
 * gprof analyses one object (executable or shared library) per run and
 * takes the addresses in the file as the object's own (link-time)
 * addresses.  So the histograms are split by loaded object, addresses are
 * made relative to each object's load bias (dlpi_addr: the PIE or
 * library base, 0 for a non-PIE executable), and each object gets a file:
 *
 *   path               the main program (always written)
 *   path.BASENAME      every other object with samples, e.g.
 *                      gmon.out.libc.so.6; a second object with the same
 *                      base name gets path.BASENAME.N (N = 2, 3, ...)
 *
 * Every file is finished (written and fsynced under a temporary name)
 * before any is renamed into place, so a failure leaves every old file
 * as it was.
 */
#include "gmon/gmon.h"
#include "engine/engine.h"

#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct objs {
	struct gobj *v;
	size_t n, cap;
	int nomem;
};

static int collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct objs *os = arg;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	(void)size;
	/* Entries after the first without a path (the vDSO) have no file
	 * gprof could read. */
	if (os->n > 0 && !strchr(name, '/'))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
		lo = a < lo ? a : lo;
		hi = b > hi ? b : hi;
	}
	if (os->n == os->cap) {
		size_t cap = os->cap ? 2 * os->cap : 16;
		struct gobj *v = realloc(os->v, cap * sizeof *v);
		if (!v) {
			os->nomem = 1;
			return 1;
		}
		os->v = v, os->cap = cap;
	}
	/* The main program is listed first (dl_iterate_phdr(3)). */
	int is_main = os->n == 0;
	os->v[os->n] = (struct gobj){lo < hi ? lo : 0, lo < hi ? hi : 0, info->dlpi_addr,
	                             is_main ? "" : name};
	os->n++;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* path, or path.BASENAME[.N] for object i (see the top of this file). */
static char *file_name(const char *path, const struct objs *os, size_t i)
{
	if (i == 0)
		return strdup(path);
	const char *b = base_name(os->v[i].name);
	unsigned int dup = 1;
	for (size_t j = 1; j < i; j++)
		dup += strcmp(base_name(os->v[j].name), b) == 0;
	size_t size = strlen(path) + strlen(b) + 16;
	char *s = malloc(size);
	if (s && dup == 1)
		snprintf(s, size, "%s.%s", path, b);
	else if (s)
		snprintf(s, size, "%s.%s.%u", path, b, dup);
	return s;
}

/* Object i's file, opened and fully written (not yet renamed); NULL with
 * errno on failure, and through *skip when the object has no samples. */
static struct gout *write_object(const char *path, const struct objs *os, size_t i,
                                 const struct ptable *t, int *skip)
{
	uint64_t zero = 0;
	const struct gobj *o = &os->v[i];
	struct ghist h;
	*skip = 0;
	if (ghist_build(&h, t, o) != 0)
		return NULL;
	if (i > 0 && h.total == 0) {
		ghist_free(&h);
		*skip = 1;
		return NULL;
	}
	/* No range in the main program: one empty bin at its start. */
	struct ghist none = {(o->lo - o->base) / 2, 1, 1, &zero, 0};
	char *name = file_name(path, os, i);
	struct gout *g = name ? gout_open(name) : NULL;
	if (g) {
		gout_put_hist(g, h.n ? &h : &none, hz_current());
		if (gout_finish(g) != 0) {
			gout_abort(g);
			g = NULL;
		}
	}
	int e = errno;
	free(name);
	ghist_free(&h);
	errno = e;
	return g;
}

/* Writes every object's file, then renames them all into place. */
static int write_all(const char *path, const struct objs *os, const struct ptable *t)
{
	struct gout **out = calloc(os->n, sizeof *out);
	int rc = out ? 0 : -1;
	for (size_t i = 0; i < os->n && rc == 0; i++) {
		int skip;
		out[i] = write_object(path, os, i, t, &skip);
		rc = out[i] || skip ? 0 : -1;
	}
	for (size_t i = 0; out && i < os->n; i++) {
		if (!out[i])
			continue;
		if (rc == 0)
			rc = gout_commit(out[i]);
		else
			gout_abort(out[i]);
	}
	int e = errno;
	free(out);
	errno = e;
	return rc;
}

static const char *default_path(void)
{
	const char *p = profil_getenv("PROFIL_GMON");
	return p && *p ? p : "gmon.out";
}

static int write_table(const struct ptable *t, void *path)
{
	struct objs os = {0};
	int rc = -1;
	if (dl_iterate_phdr(collect, &os), os.nomem || os.n == 0)
		errno = ENOMEM;
	else
		rc = write_all(path, &os, t);
	int e = errno;
	free(os.v);
	errno = e;
	return rc;
}

int profil_write_gmon(const char *path)
{
	return gmon_with_table(write_table, (void *)(path ? path : default_path()));
}
