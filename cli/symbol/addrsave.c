/*
 * addrsave.c - addrkeep.c's answers written back, the file written whole
 * under a temporary name and renamed (zcache.c's sym_keep_open), so that
 * a reader sees the old file or the new, never a part.
 *
 * The kept file's frames and strings are written again as they are, this
 * run's new ones after them (their strings once each, or the kept answers'
 * beside them: a new address is mostly in a function answered before),
 * and the addresses merged: a run that adds a few answers to a file of
 * 40,000 costs a copy, not the 11 ms that interning every string again
 * took.  A kept answer
 * that does not check out is dropped (its frames stay, unreferenced);
 * kept answers out of order, or too many with the new ones, are all
 * dropped, and the file starts again with this run's.  Spans stay
 * apart: one inside a span written before it is left out (an answer of
 * one address kept before symtab.c's index gave its stretch), one that
 * reaches into it starts where it ends.
 */
#include "addrkeep_int.h"

#include <search.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The file being written: the merged addresses, and the new frames and
 * strings, which follow the kept file's (base_frames, base_bytes). */
struct writer {
	struct addrs_entry *addrs;
	size_t naddrs, capaddrs;
	struct addrs_frame *frames;
	size_t nframes, capframes;
	char *bytes;
	size_t nbytes, capbytes;
	uint32_t *slots; /* offset + 1 in bytes by hash; 0 empty */
	size_t cap, nstrings;
	uint64_t base_frames, base_bytes;
	int failed;      /* past ADDRS_MAX_BYTES */
};

static size_t string_hash(const char *s, size_t cap)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return (size_t)(h ^ (h >> 32)) & (cap - 1);
}

static size_t slot_of(const struct writer *w, const char *s)
{
	size_t i = string_hash(s, w->cap);
	while (w->slots[i] && strcmp(w->bytes + w->slots[i] - 1, s) != 0)
		i = (i + 1) & (w->cap - 1);
	return i;
}

static void grow_slots(struct writer *w)
{
	uint32_t *old = w->slots;
	size_t oldcap = w->cap;
	w->cap = oldcap ? 2 * oldcap : 1024;
	w->slots = prof_xcalloc(w->cap, sizeof *w->slots);
	for (size_t i = 0; i < oldcap; i++)
		if (old[i])
			w->slots[slot_of(w, w->bytes + old[i] - 1)] = old[i];
	free(old);
}

/* s's offset + 1 in the file's strings, added once; 0 for NULL. */
static uint32_t intern(struct writer *w, const char *s)
{
	if (!s)
		return 0;
	if (2 * (w->nstrings + 1) > w->cap)
		grow_slots(w);
	size_t i = slot_of(w, s), len = strlen(s) + 1;
	if (w->slots[i])
		return (uint32_t)(w->base_bytes + w->slots[i]);
	if (w->base_bytes + w->nbytes + len > ADDRS_MAX_BYTES) {
		w->failed = 1;
		return 0;
	}
	if (w->nbytes + len > w->capbytes) {
		w->capbytes = 2 * (w->nbytes + len) + 4096;
		w->bytes = prof_xrealloc(w->bytes, w->capbytes, 1);
	}
	memcpy(w->bytes + w->nbytes, s, len);
	w->nbytes += len;
	w->nstrings++;
	w->slots[i] = (uint32_t)(w->nbytes - len + 1);
	return (uint32_t)(w->base_bytes + w->slots[i]);
}

/* The kept answers beside a new one (the last below it, the first
 * above), which are mostly in the same function and file: their strings
 * are the new one's without a copy.  NULL where there is none. */
struct near {
	const struct sym_addrs *a;
	const struct addrs_entry *e[2];
};

/* s's offset + 1 among the strings of the answers near, else added. */
static uint32_t string_for(struct writer *w, const struct near *near, const char *s)
{
	for (int k = 0; s && k < 2; k++)
		for (uint32_t i = 0; near->e[k] && i < near->e[k]->n; i++) {
			const struct addrs_frame *f = &near->a->frames[near->e[k]->first + i];
			const uint32_t offs[] = {f->name, f->system_name, f->file};
			for (int j = 0; j < 3; j++)
				if (offs[j] && strcmp(near->a->strings + offs[j] - 1, s) == 0)
					return offs[j];
		}
	return intern(w, s);
}

static void add_frame(struct writer *w, const struct near *near, const struct sym_frame *f)
{
	w->frames = prof_xgrow(w->frames, w->nframes, &w->capframes, 1024, sizeof *w->frames);
	w->frames[w->nframes++] = (struct addrs_frame){
		string_for(w, near, f->name), string_for(w, near, f->system_name),
		string_for(w, near, f->file), 0, f->decl_line, f->line};
}

/* Whether span e, coming in address order, is written, and where it
 * starts: not when the last one written holds it; in place of that one
 * when it starts there too and reaches further; else after its end. */
static int admit(struct writer *w, struct addrs_entry *e)
{
	const struct addrs_entry *last = w->naddrs ? &w->addrs[w->naddrs - 1] : NULL;
	if (!last || e->vaddr >= last->end)
		return 1;
	if (e->end <= last->end)
		return 0;
	if (e->vaddr == last->vaddr)
		w->naddrs--;
	else
		e->vaddr = last->end;
	return 1;
}

static void push(struct writer *w, const struct addrs_entry *e)
{
	w->addrs = prof_xgrow(w->addrs, w->naddrs, &w->capaddrs, 1024, sizeof *w->addrs);
	w->addrs[w->naddrs++] = *e;
}

static void add_addr(struct writer *w, const struct addrs_entry *e)
{
	struct addrs_entry span = *e;
	if (admit(w, &span))
		push(w, &span);
}

static void add_fresh(struct writer *w, const struct sym_addrs *a, const struct addrs_entry *e,
                      const struct near *near)
{
	struct addrs_entry span = *e;
	if (!admit(w, &span))
		return;
	span.first = (uint32_t)(w->base_frames + w->nframes);
	push(w, &span);
	for (uint32_t i = 0; i < e->n; i++)
		add_frame(w, near, &a->fresh_frames[e->first + i]);
}

/* Kept answer k of the nkept merged, if it checks out; NULL. */
static const struct addrs_entry *kept_at(const struct sym_addrs *a, size_t k, size_t nkept)
{
	return k < nkept && sym_addrs_entry_ok(a, &a->addrs[k]) ? &a->addrs[k] : NULL;
}

/* Whether the kept file's answers can be merged with the new: in order
 * (binary searches found them), and room for both. */
static int kept_usable(const struct sym_addrs *a)
{
	if (!a->head || a->head->naddrs + a->nfresh > ADDRS_MAX ||
	    a->head->nframes + a->nff > ADDRS_MAX * (uint64_t)SYM_MAX_FRAMES)
		return 0;
	for (size_t i = 0; i < a->head->naddrs; i++)
		if (a->addrs[i].end <= a->addrs[i].vaddr ||
		    (i && a->addrs[i].vaddr < a->addrs[i - 1].end))
			return 0;
	return 1;
}

/* By address, the longer span first where two start together. */
static int by_vaddr(const void *x, const void *y)
{
	const struct addrs_entry *a = x, *b = y;
	if (a->vaddr != b->vaddr)
		return a->vaddr < b->vaddr ? -1 : 1;
	return a->end > b->end ? -1 : a->end < b->end;
}

/* The kept answers and the new ones (sorted) merged by address, a new
 * one in place of a kept one at the same address; the kept ones dropped
 * when they are out of order or too many. */
static void merge(struct writer *w, const struct sym_addrs *a)
{
	size_t nkept = kept_usable(a) ? a->head->naddrs : 0, k = 0;
	w->base_frames = nkept ? a->head->nframes : 0;
	w->base_bytes = nkept ? a->head->nbytes : 0;
	for (size_t f = 0; f < a->nfresh; f++) {
		uint64_t v = a->fresh[f].vaddr;
		if (f && v == a->fresh[f - 1].vaddr)
			continue;
		for (; k < nkept && a->addrs[k].vaddr < v; k++)
			if (sym_addrs_entry_ok(a, &a->addrs[k]))
				add_addr(w, &a->addrs[k]);
		k += k < nkept && a->addrs[k].vaddr == v;
		struct near near = {a, {k ? kept_at(a, k - 1, nkept) : NULL, kept_at(a, k, nkept)}};
		add_fresh(w, a, &a->fresh[f], &near);
	}
	for (; k < nkept; k++)
		if (sym_addrs_entry_ok(a, &a->addrs[k]))
			add_addr(w, &a->addrs[k]);
}

void sym_addrs_save(struct sym_addrs *a)
{
	if (!a || !a->nfresh || sym_zcache_make_dir() != 0)
		return;
	/* what is there now: another image of the same file (libc by its
	 * /usr/lib and its /lib path) or another recording may have
	 * replaced the file since it was mapped, and its answers are kept */
	sym_addrs_map(a);
	qsort(a->fresh, a->nfresh, sizeof *a->fresh, by_vaddr);
	struct writer w = {0};
	merge(&w, a);
	struct addrs_head h = *sym_addrs_head();
	h.naddrs = w.naddrs;
	h.nframes = w.base_frames + w.nframes;
	h.nbytes = w.base_bytes + w.nbytes;
	char tmp[4200];
	FILE *f = w.failed ? NULL : sym_keep_open(a->path, tmp, sizeof tmp);
	if (f)
		sym_keep_close(f, tmp, a->path,
		               fwrite(&h, sizeof h, 1, f) == 1 &&
		               fwrite(w.addrs, sizeof *w.addrs, w.naddrs, f) == w.naddrs &&
		               fwrite(a->frames, sizeof *a->frames, w.base_frames, f) == w.base_frames &&
		               fwrite(w.frames, sizeof *w.frames, w.nframes, f) == w.nframes &&
		               fwrite(a->strings, 1, w.base_bytes, f) == w.base_bytes &&
		               fwrite(w.bytes, 1, w.nbytes, f) == w.nbytes);
	free(w.addrs);
	free(w.frames);
	free(w.bytes);
	free(w.slots);
	sym_frames_free(a->fresh_frames, a->nff);
	a->nfresh = a->nff = 0; /* written: a second save writes nothing */
	tdestroy(a->spans, free); /* their frames were this run's */
	a->spans = NULL;
}

void sym_addrs_free(struct sym_addrs *a)
{
	if (!a)
		return;
	sym_addrs_save(a);
	sym_frames_free(a->fresh_frames, a->nff); /* not written: no directory */
	if (a->spans)
		tdestroy(a->spans, free);
	if (a->map)
		munmap(a->map, a->map_size);
	free(a->fresh);
	free(a->fresh_frames);
	free(a->path);
	free(a);
}
