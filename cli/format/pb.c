/*
 * pb.c - protobuf wire format encoding and checked decoding (pb.h).
 */
#include "pb.h"

#include <stdlib.h>
#include <string.h>

#include "../model/profile.h"

void pb_reset(struct pbuf *b)
{
	b->n = 0;
}

void pb_free(struct pbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
}

void pb_make_room(struct pbuf *b, size_t more)
{
	if (b->spill && b->n) {
		b->spill(b, b->ctx);
		if (b->cap - b->n >= more)
			return;
	}
	size_t cap = b->cap ? b->cap : 256;
	while (cap - b->n < more) {
		if (cap > SIZE_MAX / 2)
			prof_oom();
		cap *= 2;
	}
	b->p = prof_xrealloc(b->p, cap, 1);
	b->cap = cap;
}

static inline void room(struct pbuf *b, size_t more)
{
	if (__builtin_expect(b->cap - b->n < more, 0))
		pb_make_room(b, more);
}

void pb_reserve(struct pbuf *b, size_t more)
{
	room(b, more);
}

static void put(struct pbuf *b, const void *data, size_t len)
{
	room(b, len);
	if (len)
		memcpy(b->p + b->n, data, len);
	b->n += len;
}

static void tag(struct pbuf *b, uint32_t field, int type)
{
	pb_varint(b, (uint64_t)field << 3 | (uint64_t)type);
}

void pb_bytes(struct pbuf *b, uint32_t field, const void *data, size_t len)
{
	tag(b, field, PB_LEN);
	pb_varint(b, len);
	put(b, data, len);
}

void pb_str(struct pbuf *b, uint32_t field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

void pb_packed(struct pbuf *b, uint32_t field, const uint64_t *v, size_t n)
{
	if (n == 0)
		return;
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t x = v[i];
		do
			len++;
		while (x >>= 7);
	}
	tag(b, field, PB_LEN);
	pb_varint(b, len);
	for (size_t i = 0; i < n; i++)
		pb_varint(b, v[i]);
}

void pb_message(struct pbuf *b, uint32_t field, const struct pbuf *msg)
{
	pb_bytes(b, field, msg->p, msg->n);
}

int pb_next_varint(struct pbr *r, uint64_t *v)
{
	if (r->p >= r->end)
		return 0;
	uint64_t x = 0;
	for (int shift = 0; shift < 70; shift += 7) {
		if (r->p >= r->end)
			return -1;
		unsigned char c = *r->p++;
		if (shift == 63 && c > 1)
			return -1; /* more than 64 bits */
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 1;
		}
	}
	return -1;
}

int pb_next(struct pbr *r, struct pbfield *f)
{
	uint64_t key, len;
	int rc = pb_next_varint(r, &key);
	if (rc <= 0)
		return rc;
	f->num = (uint32_t)(key >> 3);
	f->type = (int)(key & 7);
	if (f->num == 0 || key >> 3 > 0x1fffffff)
		return -1;
	switch (f->type) {
	case PB_VARINT:
		return pb_next_varint(r, &f->v) == 1 ? 1 : -1;
	case PB_I64:
	case PB_I32: {
		size_t n = f->type == PB_I64 ? 8 : 4;
		if ((size_t)(r->end - r->p) < n)
			return -1;
		f->v = 0;
		memcpy(&f->v, r->p, n);
		r->p += n;
		return 1;
	}
	case PB_LEN:
		if (pb_next_varint(r, &len) != 1 || len > (uint64_t)(r->end - r->p))
			return -1;
		f->sub.p = r->p;
		f->sub.end = r->p + len;
		r->p += len;
		return 1;
	default:
		return -1; /* groups are deprecated and profile.proto has none */
	}
}

int pb_append_varints(const struct pbfield *f, uint64_t **arr, size_t *n, size_t *cap)
{
	struct pbr r = f->sub;
	uint64_t v = f->v;
	int rc = 1;
	if (f->type != PB_VARINT && f->type != PB_LEN)
		return -1;
	while (f->type == PB_LEN ? (rc = pb_next_varint(&r, &v)) == 1 : rc-- == 1) {
		if (*n == *cap) {
			*cap = *cap ? *cap * 2 : 8;
			*arr = prof_xrealloc(*arr, *cap, sizeof **arr);
		}
		(*arr)[(*n)++] = v;
	}
	return rc < 0 && f->type == PB_LEN ? -1 : 0;
}
