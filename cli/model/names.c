/*
 * names.c - how frames and modules are named in every report, so that
 * text, csv, folded and gmon output agree: a symbolized frame by its
 * function, an unknown one as module+0xoffset (never dropped).
 */
#include "profile.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

const char *prof_module_name(const struct profile *p, uint64_t mapping_id)
{
	if (mapping_id == 0 || mapping_id > p->nmappings)
		return "[unknown]";
	const char *path = p->mappings[mapping_id - 1].path;
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : *path ? path : "[unknown]";
}

/* A location in no mapping named by a function "[...]" is a marker (CPU
 * time without a pc: [start-up], [unsampled], [profil agent start], or a
 * stack's [truncated]/[unknown] end): its module is the marker, so that
 * --by module does not add start-up time to unsymbolized code. */
const char *prof_location_module(const struct profile *p, const struct prof_location *l)
{
	if (l->mapping_id == 0 && l->nlines && l->lines[0].function_id &&
	    l->lines[0].function_id <= p->nfunctions) {
		const char *name = p->functions[l->lines[0].function_id - 1].name;
		size_t n = strlen(name);
		if (n > 2 && name[0] == '[' && name[n - 1] == ']')
			return name;
	}
	return prof_module_name(p, l->mapping_id);
}

int prof_mapping_is_jit_map(const struct prof_mapping *m)
{
	const char *base = strrchr(m->path, '/');
	base = base ? base + 1 : m->path;
	size_t n = strlen(base);
	return strncmp(base, "perf-", 5) == 0 && n > 9 && strcmp(base + n - 4, ".map") == 0 &&
	       strspn(base + 5, "0123456789") == n - 9;
}

uint64_t prof_module_offset(const struct profile *p, const struct prof_location *l)
{
	if (l->mapping_id == 0 || l->mapping_id > p->nmappings)
		return l->address;
	const struct prof_mapping *m = &p->mappings[l->mapping_id - 1];
	return l->address - m->start + m->file_offset;
}

const char *prof_frame_name(const struct profile *p, const struct prof_location *l, size_t k,
                            char buf[PROF_NAME_BUF])
{
	if (k < l->nlines && l->lines[k].function_id && l->lines[k].function_id <= p->nfunctions)
		return p->functions[l->lines[k].function_id - 1].name;
	if (l->mapping_id == 0)
		snprintf(buf, PROF_NAME_BUF, "[unknown]+0x%" PRIx64, l->address);
	else
		snprintf(buf, PROF_NAME_BUF, "%.200s+0x%" PRIx64, prof_module_name(p, l->mapping_id),
		         prof_module_offset(p, l));
	return buf;
}

void prof_keep_samples(struct profile *p, int (*keep)(const struct prof_sample *, void *),
                       void *ctx)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		struct prof_sample *s = &p->samples[i];
		if (keep(s, ctx))
			p->samples[n++] = *s;
		else
			prof_free_sample(s);
	}
	p->nsamples = n;
	prof_rehash_samples(p);
}
