/*
 * addrkeep.c - an image's answers per address (lookup.c's inline chains)
 * kept across recordings.
 *
 * Why: the caches below it (cuindex.c, linecache.c, kidcache.c) spare
 * libdw's decoding, but every recording still walks the DIEs of every
 * address it sampled, maps a line and a DIE file per unit it touches and
 * reads the PLT's relocations for a stub: 9-12 ms of `profil record`'s
 * own CPU on a second's Python recording, 60% of it, for answers that
 * are the same as the last run's.  A program profiled again samples
 * mostly the addresses it sampled before, so the first recording that
 * names an address keeps the answer, and later ones take it from here
 * without opening a unit.
 *
 * The key: the image's DWARF key (keptset.c's dwarf_key(): build-id and
 * .debug_info size, so installing its debuginfo changes it), and, in
 * the file's name (sym_addrs_path()) and header, this program's own
 * build-id, with libdw's version in the header: the answers are
 * lookup.c's, so a profil built from other sources keeps its own.  An
 * image without DWARF keeps its symbol table's answers under
 * "<build-id>-none"; one without a build-id under its file's identity
 * (keptset.c's answers_key()).
 *
 * A file is trusted only as far as it is used: its counts must match
 * its size and its strings end in a NUL; an answer read from it must
 * have its frames and string offsets inside the file, else it is taken
 * for a miss.  At the end, new answers are merged with the old (the
 * old ones checked whole, in order; a file that does not check out is
 * replaced by this run's answers) and written whole by rename.
 *
 * An answer holds for a span of addresses: one, those of one line in
 * the same unit and DIEs, or, in a module only its symbol table names,
 * the stretch symtab.c answers alike (lookup.c says when): a compile
 * samples some 5,000 addresses of cc1 that no recording asked before,
 * mostly in functions others were sampled in, and each cost 6,000
 * instructions of symbol table and demangling; a Python run, new
 * addresses in lines sampled before.  Spans found in this run answer its
 * later lookups too (a tree of them).
 *
 * File (host order): "PRFADR02", libdw's version (16 bytes), the
 * program's build-id in hex (48 bytes, NUL padded), 8-byte counts of
 * spans, frames and string bytes; spans (24 bytes: first address, end,
 * first frame, frame count) sorted and apart; frames (32 bytes: name,
 * linkage name, file as string offset + 1, 0 for none, a pad word,
 * declared line, line); the strings.
 */
#include "addrkeep_int.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* This program's build-id in hex into out (NUL padded), read by libdwelf
 * from /proc/self/exe, as zcache.c reads debuginfo's; "" when it has
 * none. */
static void own_build_id(char *out, size_t size)
{
	const void *bits;
	int fd = elf_version(EV_CURRENT) != EV_NONE ? open("/proc/self/exe", O_RDONLY | O_CLOEXEC)
	                                             : -1;
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
	if (n > 0 && (size_t)n * 2 < size)
		sym_hex(bits, (size_t)n, out);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

const struct addrs_head *sym_addrs_head(void)
{
	static struct addrs_head h;
	if (!h.magic[0]) {
		memcpy(h.magic, ADDRS_MAGIC, 8);
		sym_libdw_version(h.libdw);
		own_build_id(h.self, sizeof h.self);
	}
	return &h;
}

/* The file at a->path mapped (in place of one mapped before), when its
 * header is ours and its counts fill it exactly (the rest is checked
 * where it is used). */
void sym_addrs_map(struct sym_addrs *a)
{
	const struct addrs_head *want = sym_addrs_head();
	if (a->map)
		munmap(a->map, a->map_size);
	a->head = NULL;
	a->map = sym_keep_map(a->path, sizeof *want, &a->map_size, 0);
	const struct addrs_head *h = a->map;
	if (!h)
		return;
	uint64_t size = sizeof *h + h->naddrs * sizeof *a->addrs +
	                h->nframes * sizeof *a->frames + h->nbytes;
	if (memcmp(h, want, offsetof(struct addrs_head, naddrs)) != 0 || h->naddrs > ADDRS_MAX ||
	    h->nframes > ADDRS_MAX * (uint64_t)SYM_MAX_FRAMES || h->nbytes > ADDRS_MAX_BYTES ||
	    size != a->map_size || (h->nbytes && ((const char *)h)[size - 1] != '\0')) {
		munmap(a->map, a->map_size);
		a->map = NULL;
		return;
	}
	a->head = h;
	a->addrs = (const struct addrs_entry *)(h + 1);
	a->frames = (const struct addrs_frame *)(a->addrs + h->naddrs);
	a->strings = (const char *)(a->frames + h->nframes);
}

/* Tests of the caches below this one turn it off; hits count answers
 * given from a file. */
static int enabled = 1;
static unsigned long hits;

void sym_addrs_enable(int on)
{
	enabled = on;
}

unsigned long sym_addrs_hits(void)
{
	return hits;
}

/*
 * The file's name carries this program's build-id as well as the
 * image's key: two profil builds that share a cache (an installed one
 * and a checkout's, or two versions compared) each keep their own
 * answers.  With the build-id in the header only, each replaced the
 * other's file at every recording, and every address was fresh again
 * (4.7 M instructions of libdw's unit scan for a
 * `sleep`).  A build's files that are no longer used go with the cache's
 * least recently used (cachetrim.c).
 */
char *sym_addrs_path(const char *dir, const char *key)
{
	const struct addrs_head *h = sym_addrs_head();
	int len = (int)strnlen(h->self, sizeof h->self);
	size_t n = strlen(dir) + strlen(key) + (size_t)len + sizeof "/-.addrs";
	char *path = prof_xrealloc(NULL, n, 1);
	snprintf(path, n, "%s/%s-%.*s.addrs", dir, key, len, h->self);
	return path;
}

struct sym_addrs *sym_addrs_load(const char *key)
{
	const char *dir = sym_zcache_dir();
	if (!enabled || !dir || !key || !*key || !sym_addrs_head()->self[0])
		return NULL;
	struct sym_addrs *a = prof_xcalloc(1, sizeof *a);
	a->path = sym_addrs_path(dir, key);
	sym_addrs_map(a);
	return a;
}

/* A string offset + 1 of the file: usable (0 is "none"). */
static int string_ok(const struct sym_addrs *a, uint32_t off)
{
	return off == 0 || off - 1 < a->head->nbytes;
}

static char *string_at(const struct sym_addrs *a, uint32_t off)
{
	return off ? sym_strdup(a->strings + off - 1) : NULL;
}

int sym_addrs_entry_ok(const struct sym_addrs *a, const struct addrs_entry *e)
{
	if (e->n > SYM_MAX_FRAMES || e->first > a->head->nframes ||
	    e->n > a->head->nframes - e->first)
		return 0;
	for (uint32_t i = 0; i < e->n; i++) {
		const struct addrs_frame *f = &a->frames[e->first + i];
		if (!f->name || !string_ok(a, f->name) || !f->system_name ||
		    !string_ok(a, f->system_name) || !string_ok(a, f->file))
			return 0;
	}
	return 1;
}

/* The kept entry whose span holds vaddr when it checks out; NULL. */
static const struct addrs_entry *entry_of(const struct sym_addrs *a, uint64_t vaddr)
{
	size_t lo = 0, hi = a && a->head ? a->head->naddrs : 0;
	while (lo < hi) { /* the first span starting above vaddr */
		size_t mid = lo + (hi - lo) / 2;
		if (a->addrs[mid].vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || vaddr >= a->addrs[lo - 1].end)
		return NULL;
	return sym_addrs_entry_ok(a, &a->addrs[lo - 1]) ? &a->addrs[lo - 1] : NULL;
}

/* Spans in the tree compare equal when they overlap. */
static int span_cmp(const void *x, const void *y)
{
	const struct addrs_entry *p = x, *q = y;
	return p->end <= q->vaddr ? -1 : q->end <= p->vaddr ? 1 : 0;
}

/* This run's answer whose span holds vaddr; NULL. */
static const struct addrs_entry *fresh_span_of(const struct sym_addrs *a, uint64_t vaddr)
{
	const struct addrs_entry key = {vaddr, vaddr + 1, 0, 0};
	void *const *node = a->spans ? tfind(&key, &a->spans, span_cmp) : NULL;
	return node ? *node : NULL;
}

int sym_addrs_get(const struct sym_addrs *a, uint64_t vaddr, struct sym_frame *out, size_t max,
                  size_t *n)
{
	const struct addrs_entry *e = entry_of(a, vaddr);
	if (e && e->n <= max) {
		for (uint32_t i = 0; i < e->n; i++) {
			const struct addrs_frame *f = &a->frames[e->first + i];
			out[i] = (struct sym_frame){string_at(a, f->name),
			                            string_at(a, f->system_name),
			                            string_at(a, f->file), f->decl_line, f->line};
		}
		*n = e->n;
		hits++;
		return 0;
	}
	if (!a || !(e = fresh_span_of(a, vaddr)) || e->n > max)
		return -1;
	for (uint32_t i = 0; i < e->n; i++) {
		const struct sym_frame *f = &a->fresh_frames[e->first + i];
		out[i] = (struct sym_frame){sym_strdup(f->name), sym_strdup(f->system_name),
		                            f->file ? sym_strdup(f->file) : NULL, f->decl_line,
		                            f->line};
	}
	*n = e->n;
	return 0;
}

/* A span of more than one address into the tree, for this run's later
 * lookups; without memory, only the file will have it. */
static void remember_span(struct sym_addrs *a, const struct addrs_entry *e)
{
	struct addrs_entry *copy = malloc(sizeof *copy);
	if (!copy)
		return;
	*copy = *e;
	void **node = tsearch(copy, &a->spans, span_cmp);
	if (!node || *node != copy)
		free(copy); /* no memory, or overlapping one there (not asked, then) */
}

void sym_addrs_put(struct sym_addrs *a, const uint64_t span[2], const struct sym_frame *f,
                   size_t n)
{
	if (!a || n > SYM_MAX_FRAMES || a->nff + n > ADDRS_MAX * (size_t)SYM_MAX_FRAMES ||
	    span[1] <= span[0])
		return;
	a->fresh = prof_xgrow(a->fresh, a->nfresh, &a->capfresh, 256, sizeof *a->fresh);
	a->fresh[a->nfresh++] = (struct addrs_entry){span[0], span[1], (uint32_t)a->nff,
	                                             (uint32_t)n};
	if (span[1] - span[0] > 1)
		remember_span(a, &a->fresh[a->nfresh - 1]);
	for (size_t i = 0; i < n; i++) {
		a->fresh_frames = prof_xgrow(a->fresh_frames, a->nff, &a->capff, 256,
		                             sizeof *a->fresh_frames);
		a->fresh_frames[a->nff++] = (struct sym_frame){
			sym_strdup(f[i].name ? f[i].name : "??"),
			sym_strdup(f[i].system_name ? f[i].system_name : "??"),
			f[i].file ? sym_strdup(f[i].file) : NULL, f[i].decl_line, f[i].line};
	}
}
