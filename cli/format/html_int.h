/*
 * html_int.h - the HTML writer's internals: the call tree as the page's
 * script reads it (html_tree.c), escaping (html_esc.c), the source views
 * (html_src.c) and the page (html.c).
 */
#ifndef PROFIL_CLI_HTML_INT_H
#define PROFIL_CLI_HTML_INT_H

#include <stdint.h>
#include <stdio.h>

#include "../model/index.h"
#include "../model/profile.h"
#include "html.h"

/* The key of a frame, a node or a thread, hashed into their indexes
 * (model/index.h), which hold positions only. */
struct hkey {
	uint64_t a, b, c;
};

/* Interned strings: the page names each string once. */
struct strtab {
	char **s;
	size_t n, cap;
	struct prof_index map;
};

/* A frame is a function (or module+0xoffset) in a module: the flame
 * graph's boxes and the table's rows. */
struct hframe {
	size_t name, module, file;  /* strtab ids */
	uint64_t fn_id, mapping_id; /* first seen (source, disassembly) */
	int64_t self, cum;          /* samples, all threads */
	size_t stamp;               /* sample last counted into cum, + 1 */
};

/* A node of the call tree: one call path, root first.  Node 0 is the
 * root; inl: the frame is inlined into its parent. */
struct hnode {
	size_t parent, frame;
	int inl;
	int64_t total;              /* samples at or below it */
};

struct hthread {
	uint32_t pid, tid;
	size_t name, comm;          /* thread name, process command name */
};

/* One sample (merged by node and thread). */
struct hsample {
	size_t node, thread;
	int64_t count;
};

struct htree {
	struct strtab str;
	struct hframe *frames;  size_t nframes, capframes;
	struct hnode *nodes;    size_t nnodes, capnodes;
	struct hthread *threads; size_t nthreads;
	struct hsample *samples; size_t nsamples;
	struct prof_index frame_map, node_map, thread_map;
	int64_t total;
	int64_t truncated;      /* samples whose stack ends in no known module */
	int64_t unsymbolized;   /* samples whose leaf has no function name */
	int64_t cpu_ns;
};

void htree_build(struct htree *t, const struct profile *p);
void htree_free(struct htree *t);
size_t str_id(struct strtab *t, const char *s);
/* The frame with that name and module, or (size_t)-1. */
size_t htree_find_frame(struct htree *t, const char *name, const char *module);
/* The child of node parent with that frame, or (size_t)-1. */
size_t htree_find_node(struct htree *t, size_t parent, size_t frame, int inl);
/* Frame ids sorted by self, then cum, descending (caller frees). */
size_t *htree_by_self(const struct htree *t);

/* Escaping (html_esc.c).  Both replace bytes that are not UTF-8 with
 * U+FFFD.  html_esc: &<>"' as entities.  json_str: a quoted JSON string
 * where <, >, &, U+2028 and U+2029 are \u escapes as well, so no string
 * can end the <script> element that holds the JSON. */
void html_esc(FILE *f, const char *s);
void json_str(FILE *f, const char *s);

/* The source (or disassembly) views of the hottest frames. */
void html_sources(const struct html_in *in, struct htree *t, const size_t *hot, size_t nhot,
                  FILE *f);

/* The tree as JSON (html_json.c); hot[]: frames with a source view. */
void html_json(FILE *f, struct htree *t, const struct html_in *in, const size_t *hot,
               size_t nhot);

/* The generated assets: cli/format/html/NAME as a C string. */
const char *html_asset(const char *name);

#endif
