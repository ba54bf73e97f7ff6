/*
 * fuzz-gopcln.c - a Go program's function table (.gopclntab) as the
 * symbolizer reads it (cli/symbol/gopcln.c), from a damaged or hostile
 * file: the input is the table itself.  Every address a lookup could be
 * asked near the table's text start and its functions' entries is asked;
 * an answer must come back whole (a name, a file only with it) or not at
 * all, and nothing may be read outside the input (ASan).
 */
#include "symbol/symint.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void ask(const struct sym_gopcln *g, uint64_t pc)
{
	struct sym_frame f;
	if (sym_gopcln_at(g, pc, &f)) {
		if (!f.name || !f.system_name || !*f.name || (f.line && !f.file))
			abort();
		sym_frames_free(&f, 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact copy, so that a read past the input is one past a block */
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	struct sym_gopcln *g = sym_gopcln_parse(copy, size);
	if (g) {
		uint64_t text = u64_at(copy + 24), functab = u64_at(copy + 64);
		for (uint64_t d = 0; d < 96; d++)
			ask(g, text - 2 + d);
		/* each function's entry and the bytes either side (u32 pairs) */
		for (uint64_t at = functab; at + 4 <= size && at < functab + 8 * 64; at += 8) {
			uint32_t off;
			memcpy(&off, copy + at, sizeof off);
			ask(g, text + off - 1);
			ask(g, text + off);
			ask(g, text + off + 1);
		}
		sym_gopcln_free(g);
	}
	free(copy);
	return 0;
}
