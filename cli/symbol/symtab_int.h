/*
 * symtab_int.h - symtab.c's index of a module's symbol table, shared with
 * symkeep.c, which keeps it on disk between recordings.
 *
 * An index is built by symtab.c (every array malloc'd) or mapped from a
 * kept file by symkeep.c (recs and every sym_reach's arrays point into
 * the read-only mapping `map`).  The names and the slots' answers fill
 * in as the recording asks, a few hundred of a table's hundreds of
 * thousands: maps, not arrays by index (calloc'd arrays for libLLVM's
 * 258,000 symbols and their boundaries were 20 MB zeroed in every
 * recording of rustc, 40% of what symbolizing its new addresses cost).
 */
#ifndef PROFIL_CLI_SYMTAB_INT_H
#define PROFIL_CLI_SYMTAB_INT_H

#include "symint.h"

#include <gelf.h>

/* A symbol as the index sees it; 24 bytes, no padding: kept as it is. */
struct sym_rec {
	uint64_t value, size; /* libdwfl's resolved address; st_size */
	int32_t bind;         /* higher is preferred (libdwfl's binding_value) */
	int32_t candidate;    /* 0: libdwfl never answers with it */
};

/* The index's arrays of spans, in the order a kept file holds them. */
enum { REACH_GSIZED, REACH_LSIZED, REACH_GSIZELESS_AT, REACH_SIZED, REACH_LABELS,
       REACH_SIZELESS, REACH_BOUNDS, REACHES };

struct sym_symtab {
	unsigned direct;      /* lookups libdwfl answered before the index */
	size_t expected;      /* addresses the recording will ask (sym_symtab_expect) */
	int state;            /* 0: not built, 1: built, -1: failed (libdwfl) */
	size_t nsyms;         /* the table's size (libdwfl's symbol indexes) */
	struct sym_rec *recs; /* by table index */
	struct sym_map names; /* table index + 1 -> libdwfl's string */
	int plain;            /* every candidate's address is its st_value */
	int two_passes;       /* a local pass exists (first_global > 1) */
	/* REACH_GSIZED, _LSIZED: sized candidates of each pass;
	 * _GSIZELESS_AT: [v, v+1) of the global sizeless; _SIZED: every
	 * sized candidate, by either value; _LABELS: the global pass's
	 * candidates; _SIZELESS: sizeless candidates, by either value;
	 * _BOUNDS: [b, b) per boundary, sorted, unique. */
	struct sym_reach reach[REACHES];
	struct sym_map slots; /* slot + 1 -> libdwfl's answer, or no_name */
	void *map;                 /* a kept file's mapping, or NULL */
	size_t map_size;
};

/* symtab.c: libdwfl's binding preference and candidate filter. */
int sym_symtab_binding(const GElf_Sym *sym);
int sym_symtab_candidate(const char *name, const GElf_Sym *sym);

/* symkeep.c: maps the module's kept index into t (empty, state 0): 0, or
 * -1 when there is none that checks out against mod's table (t is left
 * empty).  sym_symtab_keep() writes t (built, not mapped) for the next
 * recordings, when there is a cache directory and a build-id. */
int sym_symtab_load(struct sym_symtab *t, Dwfl_Module *mod);
void sym_symtab_keep(const struct sym_symtab *t, Dwfl_Module *mod);

#endif
