/*
 * addrkeep_int.h - the file addrkeep.c reads and addrsave.c writes, and
 * what both hold of it (addrkeep.c's header says why and how).
 */
#ifndef PROFIL_CLI_ADDRKEEP_INT_H
#define PROFIL_CLI_ADDRKEEP_INT_H

#include "symint.h"

#define ADDRS_MAGIC "PRFADR02"
#define ADDRS_MAX (1u << 18)  /* answers; past it a file restarts with one run's */
#define ADDRS_MAX_BYTES (1u << 30)  /* string offsets stay below 2^32 */

struct addrs_head {
	char magic[8];
	char libdw[16];
	char self[48];
	uint64_t naddrs, nframes, nbytes;
};

/* The answer of the addresses [vaddr, end): one, or a stretch of a
 * module only its symbol table names (lookup.c).  A file's are sorted
 * and do not overlap. */
struct addrs_entry {
	uint64_t vaddr, end;
	uint32_t first, n;
};

struct addrs_frame {
	uint32_t name, system_name, file, pad; /* string offset + 1; 0 none */
	int64_t decl_line, line;
};

_Static_assert(sizeof(struct addrs_head) == 96 && sizeof(struct addrs_entry) == 24 &&
                   sizeof(struct addrs_frame) == 32,
               "the arrays are written and mapped as they are");

/* One image's: the kept file's answers and this run's new ones. */
struct sym_addrs {
	char *path;
	/* the kept file, mapped (NULL: none, or its header did not check out) */
	void *map;
	size_t map_size;
	const struct addrs_head *head;
	const struct addrs_entry *addrs;
	const struct addrs_frame *frames;
	const char *strings;
	/* this run's new answers, owning their strings */
	struct addrs_entry *fresh;
	size_t nfresh, capfresh;
	struct sym_frame *fresh_frames;
	size_t nff, capff;
	/* those of more than one address, for this run's later lookups: a
	 * tsearch() tree of malloc'd copies, ordered by address, one
	 * overlapping another comparing equal */
	void *spans;
};

/* The header a kept file must start with (counts aside); its self[0]
 * is 0 when this program has no build-id, and then nothing is kept. */
const struct addrs_head *sym_addrs_head(void);
/* addrkeep.c: the kept file (again), into a->map and the pointers. */
void sym_addrs_map(struct sym_addrs *a);
/* Whether a kept entry's frames and their strings lie inside the file. */
int sym_addrs_entry_ok(const struct sym_addrs *a, const struct addrs_entry *e);

#endif
