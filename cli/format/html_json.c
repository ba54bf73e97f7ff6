/*
 * html_json.c - the call tree as JSON for the page's script.  Compact:
 * every string once (S), then numbers only, in flat arrays:
 *   F  frames: name, module, file (string ids), 3 numbers per frame
 *   N  nodes: parent, frame * 2 + inlined, 2 numbers per node (node 0,
 *      the root, is [0, 0] and has no frame)
 *   X  samples: node, thread, count
 *   T  threads: [pid, tid, name, comm]; P processes: [pid, ppid, cmdline]
 *   hot  the frames that have a source view (id "src-FRAME")
 * With a baseline (diff): B is the baseline's samples at or below the
 * same call path per node, BF the baseline's self and cum per frame,
 * BT its total.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "html_int.h"

static void nums(FILE *f, const char *key, const uint64_t *v, size_t n)
{
	fprintf(f, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++)
		fprintf(f, i ? ",%" PRIu64 : "%" PRIu64, v[i]);
	fputc(']', f);
}

/* The baseline's node and frame counts matched by call path and name. */
static void baseline(FILE *f, struct htree *t, const struct profile *base)
{
	struct htree b;
	htree_build(&b, base);
	uint64_t *bf = prof_xcalloc(2 * t->nframes + 1, sizeof *bf);
	size_t *fmap = prof_xrealloc(NULL, t->nframes + 1, sizeof *fmap);
	for (size_t i = 0; i < t->nframes; i++) {
		fmap[i] = htree_find_frame(&b, t->str.s[t->frames[i].name],
		                           t->str.s[t->frames[i].module]);
		if (fmap[i] != (size_t)-1) {
			bf[2 * i] = (uint64_t)b.frames[fmap[i]].self;
			bf[2 * i + 1] = (uint64_t)b.frames[fmap[i]].cum;
		}
	}
	size_t *nmap = prof_xrealloc(NULL, t->nnodes + 1, sizeof *nmap);
	uint64_t *bn = prof_xcalloc(t->nnodes + 1, sizeof *bn);
	nmap[0] = 0, bn[0] = (uint64_t)b.nodes[0].total;
	for (size_t i = 1; i < t->nnodes; i++) { /* parents come before children */
		const struct hnode *n = &t->nodes[i];
		size_t bp = nmap[n->parent], bfr = fmap[n->frame];
		nmap[i] = bp == (size_t)-1 || bfr == (size_t)-1 ? (size_t)-1
		          : htree_find_node(&b, bp, bfr, n->inl);
		bn[i] = nmap[i] == (size_t)-1 ? 0 : (uint64_t)b.nodes[nmap[i]].total;
	}
	nums(f, "B", bn, t->nnodes);
	nums(f, "BF", bf, 2 * t->nframes);
	fprintf(f, ",\"BT\":%" PRId64, b.total);
	free(bf), free(fmap), free(nmap), free(bn);
	htree_free(&b);
}

void html_json(FILE *f, struct htree *t, const struct html_in *in, const size_t *hot,
               size_t nhot)
{
	const struct profile *p = in->p;
	/* interned before S is written: every string the arrays name */
	size_t *cmd = prof_xrealloc(NULL, p->nprocesses + 1, sizeof *cmd);
	for (size_t i = 0; i < p->nprocesses; i++)
		cmd[i] = str_id(&t->str, p->processes[i].cmdline);
	fprintf(f, "{\"v\":1,\"total\":%" PRId64 ",\"diff\":%d,\"S\":[", t->total, in->base != NULL);
	for (size_t i = 0; i < t->str.n; i++) {
		if (i)
			fputc(',', f);
		json_str(f, t->str.s[i]);
	}
	fputs("],\"T\":[", f);
	for (size_t i = 0; i < t->nthreads; i++)
		fprintf(f, "%s[%" PRIu32 ",%" PRIu32 ",%zu,%zu]", i ? "," : "", t->threads[i].pid,
		        t->threads[i].tid, t->threads[i].name, t->threads[i].comm);
	fputs("],\"P\":[", f);
	for (size_t i = 0; i < p->nprocesses; i++)
		fprintf(f, "%s[%" PRIu32 ",%" PRIu32 ",%zu]", i ? "," : "", p->processes[i].pid,
		        p->processes[i].ppid, cmd[i]);
	fputs("],\"F\":[", f);
	for (size_t i = 0; i < t->nframes; i++)
		fprintf(f, "%s%zu,%zu,%zu", i ? "," : "", t->frames[i].name, t->frames[i].module,
		        t->frames[i].file);
	fputs("],\"N\":[", f);
	for (size_t i = 0; i < t->nnodes; i++)
		fprintf(f, "%s%zu,%zu", i ? "," : "", i ? t->nodes[i].parent : 0,
		        i ? 2 * t->nodes[i].frame + (size_t)t->nodes[i].inl : 0);
	fputs("],\"X\":[", f);
	for (size_t i = 0; i < t->nsamples; i++)
		fprintf(f, "%s%zu,%zu,%" PRId64, i ? "," : "", t->samples[i].node,
		        t->samples[i].thread, t->samples[i].count);
	fputs("],\"hot\":[", f);
	for (size_t i = 0; i < nhot; i++)
		fprintf(f, "%s%zu", i ? "," : "", hot[i]);
	fputc(']', f);
	if (in->base)
		baseline(f, t, in->base);
	fputs("}", f);
	free(cmd);
}
