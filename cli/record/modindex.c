/*
 * modindex.c - which module event of an image covers a pc at a module
 * generation, in logarithmic time.
 *
 * The rule (build.c): the latest load event at or before the sample's
 * generation that covers the pc and is not unloaded by then; failing
 * that, the first later load covering it (a library dlopen'ed since the
 * agent's last scan).  Module generations strictly increase along an
 * image's events (agent/modules.c gives each event the next one), so
 * "latest" is the highest index and an unload's generation orders it
 * against the sample's.
 *
 * Looking that up by a walk of every event made each pc cost the whole
 * log, and each candidate another walk for its unload: a program that
 * dlopens and dlcloses a library 20,000 times (a plugin host, a test
 * loading a module per case) cost the record process a third of a CPU
 * second per 10,000 samples after the command ended.  Here each load is
 * paired with its unload once, and loads are kept sorted by address
 * range: equal ranges (the same library at the same address, load after
 * load) form a group sorted by generation, and a pc visits only the
 * groups whose range holds it.
 */
#include "record_int.h"
#include "../model/profile.h"

#include <stdlib.h>
#include <string.h>

#define NEVER UINT32_MAX

struct mod_slot {
	uint64_t start, end;
	uint32_t gen;        /* of the load */
	uint32_t unload_gen; /* of the first unload after it, NEVER if none */
	uint32_t max_unload; /* of the slots of its group up to this one */
	size_t event;        /* index in the image's mods[] */
};

struct mod_group {
	size_t first, n;     /* slots[first .. first + n) */
	uint64_t start, end;
	uint64_t reach;      /* the highest end of this group and all before */
};

struct mod_index {
	struct mod_slot *slots;
	struct mod_group *groups;
	size_t ngroups;
};

static int by_range_then_event(const void *a, const void *b)
{
	const struct mod_slot *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

/* An unload event's key and index, sorted so that a load finds the first
 * unload after it of the same (base, start) by one binary search. */
struct unload {
	uint64_t base, start;
	size_t event;
	uint32_t gen;
};

static int unload_cmp(const void *a, const void *b)
{
	const struct unload *x = a, *y = b;
	if (x->base != y->base)
		return x->base < y->base ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->event < y->event ? -1 : x->event > y->event;
}

static uint32_t first_unload_after(const struct unload *u, size_t nu,
                                   const struct module_event *load, size_t event)
{
	struct unload key = {load->base, load->start, event, 0};
	size_t lo = 0, hi = nu; /* first entry not below key */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (unload_cmp(&u[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < nu && u[lo].base == load->base && u[lo].start == load->start)
		return u[lo].gen;
	return NEVER;
}

static struct mod_slot *sorted_slots(const struct image *im, const uint64_t *ids, size_t *n)
{
	struct unload *u = prof_xcalloc(im->nmods ? im->nmods : 1, sizeof *u);
	size_t nu = 0, ns = 0;
	for (size_t i = 0; i < im->nmods; i++) {
		const struct module_event *e = &im->mods[i];
		if (!e->load)
			u[nu++] = (struct unload){e->base, e->start, i, e->gen};
	}
	qsort(u, nu, sizeof *u, unload_cmp);
	struct mod_slot *s = prof_xcalloc(im->nmods ? im->nmods : 1, sizeof *s);
	for (size_t i = 0; i < im->nmods; i++) {
		const struct module_event *e = &im->mods[i];
		if (e->load && ids[i])
			s[ns++] = (struct mod_slot){e->start, e->end, e->gen,
			                            first_unload_after(u, nu, e, i), 0, i};
	}
	free(u);
	qsort(s, ns, sizeof *s, by_range_then_event);
	*n = ns;
	return s;
}

struct mod_index *mod_index_build(const struct image *im, const uint64_t *ids)
{
	struct mod_index *x = prof_xcalloc(1, sizeof *x);
	size_t n;
	x->slots = sorted_slots(im, ids, &n);
	x->groups = prof_xcalloc(n ? n : 1, sizeof *x->groups);
	for (size_t i = 0; i < n; i++) {
		struct mod_slot *s = &x->slots[i];
		struct mod_group *g = x->ngroups ? &x->groups[x->ngroups - 1] : NULL;
		if (!g || g->start != s->start || g->end != s->end) {
			uint64_t before = g ? g->reach : 0;
			g = &x->groups[x->ngroups++];
			*g = (struct mod_group){i, 0, s->start, s->end, s->end > before ? s->end : before};
		}
		uint32_t prev = g->n ? x->slots[i - 1].max_unload : 0;
		s->max_unload = s->unload_gen > prev ? s->unload_gen : prev;
		g->n++;
	}
	return x;
}

void mod_index_free(struct mod_index *x)
{
	if (!x)
		return;
	free(x->slots);
	free(x->groups);
	free(x);
}

/* The groups before this index start at or below pc. */
static size_t groups_from(const struct mod_index *x, uint64_t pc)
{
	size_t lo = 0, hi = x->ngroups;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->groups[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* In group g: the latest slot loaded at gen and not unloaded by then, and
 * the first loaded after gen; each an event index or *best / *later left
 * as they are. */
static void search_group(const struct mod_index *x, const struct mod_group *g, uint32_t gen,
                         size_t *best, size_t *later)
{
	const struct mod_slot *s = &x->slots[g->first];
	size_t lo = 0, hi = g->n; /* first slot loaded after gen */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid].gen <= gen)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < g->n && (*later == SIZE_MAX || s[lo].event < *later))
		*later = s[lo].event;
	/* back over the slots unloaded by gen, while some before is not */
	for (size_t k = lo; k > 0 && s[k - 1].max_unload > gen; k--)
		if (s[k - 1].unload_gen > gen) {
			if (*best == SIZE_MAX || s[k - 1].event > *best)
				*best = s[k - 1].event;
			return;
		}
}

size_t mod_index_find(const struct mod_index *x, uint64_t pc, uint32_t gen)
{
	size_t best = SIZE_MAX, later = SIZE_MAX;
	for (size_t i = groups_from(x, pc); i > 0 && x->groups[i - 1].reach > pc; i--) {
		const struct mod_group *g = &x->groups[i - 1];
		if (pc < g->end)
			search_group(x, g, gen, &best, &later);
	}
	return best != SIZE_MAX ? best : later;
}
