/*
 * pprof_read.h - internals shared by pprof_read.c (the driver, strings,
 * ids, comments) and pprof_read_items.c (mappings, functions, locations,
 * samples).
 */
#ifndef PROFIL_CLI_PPROF_READ_H
#define PROFIL_CLI_PPROF_READ_H

#include "pb.h"
#include "pprof.h"

struct idmap {
	uint64_t file, model;
};

/* Mappings lo..hi (file ids) are process pid's (a profil:mapping comment). */
struct pidrange {
	uint64_t lo, hi, pid;
};

struct rd {
	struct profile *p;
	const unsigned char *base;
	struct pbr top;
	struct pbr *strs; /* string table entries */
	size_t nstrs;
	struct idmap *maps[3]; /* mappings, functions, locations; sorted */
	size_t nmaps[3];
	int dense[3]; /* the file's ids are 1..n in order */
	int vcount, vcpu, nvalues; /* value indices; -1 when absent */
	char *not_cpu; /* what the samples count, when nothing there is time */
	int64_t total, total_ns; /* sums so far: overflow is an error */
	struct pidrange *mpid; /* mapping file ids lo..hi belong to pid (comments) */
	size_t nmpid;
	char *err;
	size_t errlen;
};

enum { ID_MAPPING, ID_FUNCTION, ID_LOCATION };

/* Each returns -1 after writing the message into r->err. */
int rd_bad(struct rd *r, const char *what);
int rd_unknown_id(struct rd *r, int kind, uint64_t id);
/* String i as a NUL-terminated copy (caller frees); NULL if out of range. */
char *rd_str(struct rd *r, uint64_t i);
int rd_str_is(struct rd *r, uint64_t i, const char *want);
void rd_id_add(struct rd *r, int kind, uint64_t file, uint64_t model);
/* The model id for a file id; 0 when the file has no such id. */
uint64_t rd_id_get(struct rd *r, int kind, uint64_t file);

int pprof_mapping(struct rd *r, struct pbr *m);
int pprof_function(struct rd *r, struct pbr *m);
int pprof_location(struct rd *r, struct pbr *m);
int pprof_sample(struct rd *r, struct pbr *m);

#endif
