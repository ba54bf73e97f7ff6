/*
 * build.c - the recorded images as a profile (cli/model/profile.h).
 *
 * Each image's module events become its mappings (one mapping for a file
 * several processes map at the same place: prof_intern_mapping()); each aggregated sample
 * (thread, module generation, pcs) becomes a model sample whose locations
 * are (mapping, pc) pairs.  A pc is looked up among the modules loaded
 * when it was sampled: the latest load event at or before the sample's
 * generation, not unloaded since.  A library dlopen'ed since the agent's
 * last scan has a later load event (the agent finds loads by polling,
 * agent/modules.c), so failing that, the first later load covering the
 * pc is taken (modindex.c).  A pc in no module is named by the process's
 * /tmp/perf-PID.map when a JIT wrote one (cli/symbol/perfmap.c), as a mapping of its
 * own per function; failing that it keeps mapping 0 and is reported by
 * address.  A stack the agent could not finish ends in a marker
 * (src/base/ring.h), which becomes a frame named [truncated] (the depth limit)
 * or [unknown] (the unwind failed): never a silently short stack.  The
 * callers of each fork a forked child told of (ring.h RING_FORKED) become
 * locations the same way, for reaped.c.
 */
#include "record_int.h"
#include "../model/profile.h"
#include "../symbol/symbolize.h"
#include "../../src/base/ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A process's JIT names, read when its first pc in no module is met. */
struct jit {
	int tried;
	struct sym_perfmap *map;
};

/*
 * The locations of the pcs met lately, by (pc, module generation), for
 * the image whose samples are being added (serial: its index + 1, so a
 * slot left by another image is a miss and nothing is cleared between
 * images).  A stack's outer frames (main, a thread's start, a loop's
 * callers) recur in nearly every sample of a process, and each took a
 * search of the module index and an intern: on a recording of 27
 * compiles, 79,000 frames for 17 M of the record process's 163 M
 * instructions.  Direct-mapped: a collision only costs the lookup it
 * would have cost anyway.  An entry's answer is a function of the
 * image, the pc and the generation alone (entry_location()).
 */
#define MEMO_SLOTS 4096

struct memo_slot {
	uint64_t pc, loc;
	uint32_t gen, serial;
};

/* What turns an image's pcs into locations: the mapping id of each of its
 * module events (add_mappings()), those events indexed by address
 * (modindex.c), its JIT names, the locations met lately. */
struct places {
	const struct image *im;
	uint64_t *ids;
	struct mod_index *mods;
	struct jit jit;
	struct memo_slot *memo; /* MEMO_SLOTS */
	uint32_t serial;
};

/* The mapping id of each load event of im, 0 for unload events: one
 * another process added already when the file is mapped at the same
 * place (prof_intern_mapping()). */
static uint64_t *add_mappings(struct profile *p, const struct image *im)
{
	uint64_t *ids = prof_xcalloc(im->nmods ? im->nmods : 1, sizeof *ids);
	for (size_t i = 0; i < im->nmods; i++) {
		const struct module_event *e = &im->mods[i];
		if (!e->load || e->end <= e->start)
			continue;
		struct prof_mapping m;
		memset(&m, 0, sizeof m);
		m.start = e->start;
		m.limit = e->end;
		m.file_offset = e->file_offset;
		m.path = e->path;
		m.build_id = (char *)e->build_id;
		m.pid = im->pid;
		ids[i] = prof_intern_mapping(p, &m);
	}
	return ids;
}

/* The location of a stack end marker: a function of that name, mapping 0,
 * the marker itself as its address. */
uint64_t record_marker_location(struct profile *p, uint64_t marker)
{
	const char *name = marker == RING_PC_TRUNCATED ? "[truncated]"
	                 : marker == RING_PC_STARTUP   ? "[start-up]"
	                 : marker == RING_PC_UNSAMPLED ? "[unsampled]"
	                 : marker == RING_PC_AGENT     ? "[profil agent start]"
	                 : marker == RING_PC_EXIT      ? "[process exit]"
	                 : marker == RING_PC_IO_WORKER ? "[io_uring worker]"
	                                               : "[unknown]";
	uint64_t id = prof_intern_location(p, 0, marker);
	struct prof_line line = {prof_intern_function(p, name, name, "", 0), 0};
	prof_set_lines(p, id, &line, 1);
	return id;
}

/* A pc in no module of im: the location of the JIT function the process's
 * perf map names, in a mapping of that function's range ("perf-PID.map"
 * is its module), named at once; 0 if the map names nothing there. */
static uint64_t jit_location(struct profile *p, const struct image *im, struct jit *j,
                             uint64_t pc)
{
	if (!j->tried) {
		char why[128], path[128];
		j->tried = 1;
		j->map = sym_perfmap_load(im->pid, im->ns_pid, im->start_ns, path, sizeof path, why,
		                          sizeof why);
		if (!j->map && why[0])
			fprintf(stderr, "profil record: ignoring %s: %s; the code it names is reported "
			        "by address\n", path, why);
	}
	struct sym_perfmap_entry *e = sym_perfmap_find(j->map, pc);
	if (!e)
		return 0;
	if (!e->mapping_id) {
		struct prof_mapping m;
		memset(&m, 0, sizeof m);
		m.start = e->start;
		m.limit = e->end;
		m.path = (char *)sym_perfmap_path(j->map);
		m.build_id = (char *)"";
		m.pid = im->pid;
		e->mapping_id = prof_add_mapping(p, &m);
		p->mappings[e->mapping_id - 1].has_functions = 1;
	}
	uint64_t id = prof_intern_location(p, e->mapping_id, pc);
	if (p->locations[id - 1].nlines == 0) {
		struct prof_line line = {prof_intern_function(p, e->name, e->name, "", 0), 0};
		prof_set_lines(p, id, &line, 1);
	}
	return id;
}

/* The location of an entry of a stack of im at module generation gen:
 * a marker's, or a pc's (entries after the first, return addresses, as
 * the instruction before: pprof's rule, address - 1). */
static uint64_t entry_location(struct profile *p, struct places *pl, uint64_t entry, int caller,
                               uint32_t gen)
{
	if (RING_PC_IS_MARKER(entry))
		return record_marker_location(p, entry);
	uint64_t pc = entry - (caller != 0);
	uint64_t h = (pc ^ (pc >> 12) ^ (uint64_t)gen * 0x9e3779b97f4a7c15ull) * 0xff51afd7ed558ccdull;
	struct memo_slot *m = &pl->memo[(h >> 32) & (MEMO_SLOTS - 1)];
	if (m->serial == pl->serial && m->pc == pc && m->gen == gen)
		return m->loc;
	size_t event = mod_index_find(pl->mods, pc, gen);
	uint64_t mid = event == SIZE_MAX ? 0 : pl->ids[event];
	uint64_t loc = mid ? 0 : jit_location(p, pl->im, &pl->jit, pc);
	loc = loc ? loc : prof_intern_location(p, mid, pc);
	*m = (struct memo_slot){pc, loc, gen, pl->serial};
	return loc;
}

/* The locations of the callers of each fork that told its own (ring.h
 * RING_FORKED), for reaped.c: where a child no sample reached came from. */
static void add_fork_paths(struct profile *p, struct image *im, struct places *pl)
{
	for (size_t i = 0; i < im->nforked; i++) {
		struct forked_word *w = &im->forked[i];
		if (!w->npcs || w->locs)
			continue;
		w->locs = prof_xcalloc(w->npcs, sizeof *w->locs);
		for (uint32_t k = 0; k < w->npcs; k++)
			w->locs[k] = entry_location(p, pl, w->pcs[k], 1, w->modgen);
	}
}

static void add_samples(struct profile *p, struct image *im, struct places *pl)
{
	size_t pos = 0;
	const struct agg_entry *e;
	uint64_t *locs = NULL;
	size_t cap = 0;
	while ((e = agg_next(&im->samples, &pos)) != NULL) {
		uint32_t tid = (uint32_t)e->words[0], gen = (uint32_t)e->words[1];
		size_t n = e->nwords - 2;
		if (n > cap) {
			cap = n;
			locs = prof_xrealloc(locs, cap, sizeof *locs);
		}
		for (size_t k = 0; k < n; k++)
			locs[k] = entry_location(p, pl, e->words[2 + k], k > 0, gen);
		/* in another PID namespace, the main thread's id is the pid
		 * there: shown as the one here (nspid.c) */
		uint32_t shown = im->ns_pid && tid == im->ns_pid ? im->pid : tid;
		prof_add_sample(p, locs, n, (int64_t)e->count, im->pid, shown,
		                image_thread_name(im, tid), im->comm);
	}
	add_fork_paths(p, im, pl);
	free(locs);
}

void record_build(struct profile *p, struct images *set)
{
	struct memo_slot *memo = prof_xcalloc(MEMO_SLOTS, sizeof *memo);
	for (size_t i = 0; i < set->n; i++) {
		struct image *im = &set->v[i];
		if (!image_valid(im))
			continue;
		prof_add_process(p, im->pid, im->ppid, im->cmdline);
		struct places pl = {im, add_mappings(p, im), NULL, {0, NULL}, memo, (uint32_t)i + 1};
		pl.mods = mod_index_build(im, pl.ids);
		add_samples(p, im, &pl);
		mod_index_free(pl.mods);
		sym_perfmap_free(pl.jit.map);
		free(pl.ids);
		p->lost += im->lost;
	}
	free(memo);
}

/*
 * Where a tenth or more of the samples fell in code no file holds and no
 * perf map names (each address then its own row of `report`), one line
 * says what would name it: that is nearly always a JIT's code (node,
 * java, python 3.12 without their perf-map options).  Not when a map
 * named some code: the program was run with its option already (V8
 * leaves some of its own code out of the map it writes).
 */
/* The samples of p whose leaf is a location for which leaf_is() holds,
 * and all of them in *all. */
static int64_t leaf_count(const struct profile *p, int (*leaf_is)(const struct prof_location *),
                          int64_t *all)
{
	int64_t n = 0;
	*all = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct prof_sample *s = &p->samples[i];
		const struct prof_location *leaf = s->nlocs ? &p->locations[s->locs[0] - 1] : NULL;
		*all += s->count;
		if (leaf && leaf_is(leaf))
			n += s->count;
	}
	return n;
}

static int unnamed(const struct prof_location *l)
{
	return l->mapping_id == 0 && !RING_PC_IS_MARKER(l->address);
}

static int at_unsampled(const struct prof_location *l)
{
	return l->mapping_id == 0 && l->address == RING_PC_UNSAMPLED;
}

#define UNNAMED_HINT_SHARE 0.10
void record_unnamed_code_hint(const struct profile *p)
{
	for (size_t i = 0; i < p->nmappings; i++)
		if (prof_mapping_is_jit_map(&p->mappings[i]))
			return;
	int64_t all, n = leaf_count(p, unnamed, &all);
	if (all == 0 || (double)n < UNNAMED_HINT_SHARE * (double)all)
		return;
	fprintf(stderr, "profil record: %.0f%% of the samples are in code no file holds, reported "
	        "by address: a JIT's? node --perf-basic-prof, java -XX:+UnlockDiagnosticVMOptions "
	        "-XX:+DumpPerfMapAtExit and python3.12 -X perf name theirs in /tmp/perf-PID.map, "
	        "which profil record reads\n", 100.0 * (double)n / (double)all);
}

/*
 * Where a tenth or more of the CPU time (and 50 samples or more) is at
 * [unsampled], one line says what that is, so that a user does not take
 * it for a function: mostly short processes (a shell's subshells, which
 * fork and exit without an exec within a sample period) whose whole time
 * their parent's reap told, threads that ended within a sample period of
 * their start (a thread made per request), and threads that blocked the
 * sampling signal in a way the agent cannot see (a system call
 * instruction), and threads on an alternate signal stack too small for
 * a sample (src/engine/dispatch.c drops those).
 */
#define UNSAMPLED_HINT_SHARE 0.10
#define UNSAMPLED_HINT_MIN 50
void record_unsampled_hint(const struct profile *p, unsigned int hz, int on_perf_events)
{
	int64_t all, unsampled = leaf_count(p, at_unsampled, &all);
	if (unsampled < UNSAMPLED_HINT_MIN || (double)unsampled < UNSAMPLED_HINT_SHARE * (double)all)
		return;
	/* An event's first sample comes a period into its thread's CPU
	 * time, so a higher rate reaches shorter threads and processes;
	 * the timers' expiries wait for a tick whatever the rate. */
	const char *faster = on_perf_events && hz < 4000
	                         ? "; at -F 4000 those that run 0.25 ms or more are sampled" : "";
	fprintf(stderr, "profil record: note: %.0f%% of the CPU time is at [unsampled], where no "
	        "sample reached: processes and threads that ended within a sample period of "
	        "their start (a shell's subshells, which fork and exit without an exec), or that "
	        "blocked the sampling signal by a system call instruction, or whose alternate "
	        "signal stack had too little room for a sample; a forked child's is "
	        "under the call that forked it, a thread's under its start routine, and `profil "
	        "report --by command` shows whose%s\n", 100.0 * (double)unsampled / (double)all,
	        faster);
}
