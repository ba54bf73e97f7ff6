/*
 * pb.h - the protobuf wire format, as much of it as profile.proto needs:
 * varints, fixed64/32 (skipped), length-delimited fields and packed
 * repeated varints.  Hand-written because it is tiny and a library would
 * bring code generation for nine messages.
 */
#ifndef PROFIL_CLI_PB_H
#define PROFIL_CLI_PB_H

#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* Encoder: a growable buffer (allocation failure exits, as the model's).
 * A stream's buffer has a spill: called when bytes would not fit in cap,
 * it consumes the n bytes so far (n = 0 on return), so the buffer is
 * reused rather than grown; nothing written is ever patched later (a
 * nested message is encoded in a buffer of its own, then copied). */
struct pbuf {
	unsigned char *p;
	size_t n, cap;
	void (*spill)(struct pbuf *b, void *ctx);
	void *ctx;
};
void pb_reset(struct pbuf *b);
void pb_reserve(struct pbuf *b, size_t more); /* room for more bytes after n */
void pb_free(struct pbuf *b);
/* Spills or grows b for more bytes (pb_reserve's slow path). */
void pb_make_room(struct pbuf *b, size_t more);

/* The varint and the integer fields are inline: they are most of what
 * a profile is made of (a build's recording: a million varints, whose
 * calls were 9 M instructions of the record process's 120 M). */
static inline void pb_varint(struct pbuf *b, uint64_t v)
{
	if (__builtin_expect(b->cap - b->n < 10, 0))
		pb_make_room(b, 10);
	unsigned char *o = b->p + b->n;
	for (; v > 0x7f; v >>= 7)
		*o++ = (unsigned char)(v | 0x80);
	*o++ = (unsigned char)v;
	b->n = (size_t)(o - b->p);
}

/* Field encoders; pb_uint and pb_int omit zero values (proto3 defaults). */
static inline void pb_uint(struct pbuf *b, uint32_t field, uint64_t v)
{
	if (v) {
		pb_varint(b, (uint64_t)field << 3 | PB_VARINT);
		pb_varint(b, v);
	}
}

static inline void pb_int(struct pbuf *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v); /* int64: two's complement, 10 bytes if negative */
}

void pb_bytes(struct pbuf *b, uint32_t field, const void *data, size_t len);
void pb_str(struct pbuf *b, uint32_t field, const char *s); /* always written */
void pb_packed(struct pbuf *b, uint32_t field, const uint64_t *v, size_t n);
void pb_message(struct pbuf *b, uint32_t field, const struct pbuf *msg);

/* Decoder: a window of bytes.  Every read is bounds-checked. */
struct pbr {
	const unsigned char *p, *end;
};
struct pbfield {
	uint32_t num;
	int type;
	uint64_t v;     /* PB_VARINT, PB_I64, PB_I32 */
	struct pbr sub; /* PB_LEN: the field's bytes */
};
/* 1: *f holds the next field; 0: end of the window; -1: malformed (a
 * truncated varint or length, field number 0, groups, unknown types). */
int pb_next(struct pbr *r, struct pbfield *f);
/* Next varint of a packed field's bytes: 1, 0 at the end, -1 malformed. */
int pb_next_varint(struct pbr *r, uint64_t *v);
/* Values of a repeated varint field that may be packed or not: appends to
 * *arr (growing it) and returns 0, or -1 if malformed. */
int pb_append_varints(const struct pbfield *f, uint64_t **arr, size_t *n, size_t *cap);

#endif
