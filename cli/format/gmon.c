/*
 * gmon.c - the leaf addresses of one module as a gmon.out histogram.
 *
 * The format is the one the library writes (src/gmon/gmon_file.c, after
 * binutils' gmon_out.h): header "gmon", u32 version 1, 12 zero bytes;
 * then histogram records: u8 tag 0, lowpc, highpc (pointer-sized), u32
 * bins, u32 rate (Hz), char dimen[15] "seconds", char 's', and bins u16
 * counters.  Addresses are the module file's own (what its symbol table
 * says; elfaddr.h), so gprof reads a PIE or a library's histogram with
 * that file.  One record spans the sampled range; a cell over 65535 is
 * carried by repeating the record (gprof adds identical records).
 */
#include "gmon.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "elfaddr.h"

#define COUNT_MAX 0xffffu
#define MAX_BINS (1u << 24)

struct hit {
	uint64_t addr;
	int64_t count;
};

static int same_module(const struct prof_mapping *m, const char *want)
{
	const char *base = strrchr(m->path, '/');
	return strcmp(m->path, want) == 0 || (base && strcmp(base + 1, want) == 0);
}

/* The path whose mappings the histogram covers. */
static const char *target(const struct profile *p, const char *module)
{
	if (module) {
		for (size_t i = 0; i < p->nmappings; i++) {
			if (!same_module(&p->mappings[i], module))
				continue;
			/* gprof reads the histogram with the binary it covers; a
			 * JIT's code has none (the map is text naming it) */
			if (prof_mapping_is_jit_map(&p->mappings[i])) {
				fprintf(stderr, "profil report: %s names code a JIT made at run time: no "
				        "binary holds it for gprof to read a gmon.out with\n", module);
				return NULL;
			}
			return p->mappings[i].path;
		}
		fprintf(stderr, "profil report: no module '%s' in the profile\n", module);
		return NULL;
	}
	uint32_t pid = p->nprocesses ? p->processes[0].pid : 0;
	for (size_t i = 0; i < p->nmappings; i++)
		if ((!pid || p->mappings[i].pid == pid) && *p->mappings[i].path)
			return p->mappings[i].path;
	fprintf(stderr, "profil report: the profile names no executable; use --module\n");
	return NULL;
}

/* Leaf addresses in the module's file, with their counts. */
static struct hit *collect(const struct profile *p, const char *path, size_t *n)
{
	uint64_t *bias = prof_xcalloc(p->nmappings + 1, sizeof *bias);
	char *known = prof_xcalloc(p->nmappings + 1, 1);
	struct hit *h = prof_xrealloc(NULL, p->nsamples, sizeof *h);
	*n = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		if (s->nlocs == 0)
			continue;
		const struct prof_location *l = &p->locations[s->locs[0] - 1];
		if (!l->mapping_id || strcmp(p->mappings[l->mapping_id - 1].path, path) != 0)
			continue;
		const struct prof_mapping *m = &p->mappings[l->mapping_id - 1];
		if (!known[l->mapping_id]) {
			known[l->mapping_id] = 1;
			if (elf_bias(m, &bias[l->mapping_id]) != 0)
				bias[l->mapping_id] = m->start - m->file_offset; /* file unreadable */
		}
		h[(*n)++] = (struct hit){l->address - bias[l->mapping_id], s->count};
	}
	free(bias), free(known);
	return h;
}

static void record(FILE *f, uint64_t lo, uint64_t hi, uint32_t bins, uint32_t rate)
{
	static const char dimen[15] = "seconds";
	unsigned char tag = 0;
	uintptr_t l = (uintptr_t)lo, u = (uintptr_t)hi;
	fwrite(&tag, 1, 1, f);
	fwrite(&l, sizeof l, 1, f);
	fwrite(&u, sizeof u, 1, f);
	fwrite(&bins, 4, 1, f);
	fwrite(&rate, 4, 1, f);
	fwrite(dimen, sizeof dimen, 1, f);
	fputc('s', f);
}

static void histogram(FILE *f, const struct hit *h, size_t n, uint32_t rate)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < n; i++) {
		lo = h[i].addr < lo ? h[i].addr : lo;
		hi = h[i].addr > hi ? h[i].addr : hi;
	}
	uint64_t width = 2; /* bytes per bin: gprof's finest */
	while ((hi - lo) / width + 1 > MAX_BINS)
		width *= 2;
	lo -= lo % width;
	size_t bins = (size_t)((hi - lo) / width + 1);
	uint64_t *cell = prof_xcalloc(bins, sizeof *cell), max = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t *c = &cell[(h[i].addr - lo) / width];
		*c += (uint64_t)h[i].count;
		max = *c > max ? *c : max;
	}
	for (uint64_t layer = 0; layer * COUNT_MAX < max || layer == 0; layer++) {
		record(f, lo, lo + bins * width, (uint32_t)bins, rate);
		for (size_t k = 0; k < bins; k++) {
			uint64_t below = layer * COUNT_MAX, c = cell[k];
			uint16_t v = c <= below ? 0 : c - below > COUNT_MAX ? COUNT_MAX : (uint16_t)(c - below);
			fwrite(&v, 2, 1, f);
		}
	}
	free(cell);
}

int gmon_write(const struct profile *p, const char *module, FILE *f)
{
	const char *path = target(p, module);
	if (!path)
		return -1;
	size_t n;
	struct hit *h = collect(p, path, &n);
	if (n == 0) {
		fprintf(stderr, "profil report: no samples in %s (another one with --module?)\n", path);
		free(h);
		return -1;
	}
	static const char magic[4] = {'g', 'm', 'o', 'n'}, spare[12];
	uint32_t version = 1;
	fwrite(magic, 4, 1, f);
	fwrite(&version, 4, 1, f);
	fwrite(spare, sizeof spare, 1, f);
	double hz = p->period_ns > 0 ? 1e9 / (double)p->period_ns : 100;
	histogram(f, h, n, (uint32_t)(hz + 0.5));
	free(h);
	return 0;
}
