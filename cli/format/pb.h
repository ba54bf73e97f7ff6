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
void pb_varint(struct pbuf *b, uint64_t v);
/* Field encoders; pb_uint and pb_int omit zero values (proto3 defaults). */
void pb_uint(struct pbuf *b, uint32_t field, uint64_t v);
void pb_int(struct pbuf *b, uint32_t field, int64_t v);
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
