/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Protocol buffers on the wire, by hand: enough to write pprof's profile.proto
 * (varints and length-delimited fields) and to read it back in the tests.
 *
 * Writing appends to a struct fg_buf.  A nested message is opened with
 * fg_proto_begin() and closed with fg_proto_end(), which puts its length in front of
 * it; fields at their default value (0, false) are left out, as proto3 does.
 *
 *	size_t m = fg_proto_begin(&b, 4);	// Location, field 4 of Profile
 *	fg_proto_uint(&b, 1, id);
 *	fg_proto_end(&b, m);
 *
 * Reading walks the fields of one message:
 *
 *	struct fg_proto_reader r = { data, data + len };
 *	struct fg_proto_field f;
 *	while ((err = fg_proto_next(&r, &f)) > 0) use(f.num, f.wire, f.v, f.data, f.len);
 */
#ifndef FG_PROTO_H
#define FG_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/buf.h"

enum { FG_PROTO_VARINT = 0, FG_PROTO_I64 = 1, FG_PROTO_LEN = 2, FG_PROTO_I32 = 5 };

void fg_proto_varint(struct fg_buf *b, uint64_t v);
/* A varint field (uint64, int64 as two's complement, bool); nothing when v is 0. */
void fg_proto_uint(struct fg_buf *b, unsigned field, uint64_t v);
/* A length-delimited field (string, bytes), always written (repeated strings may be empty). */
void fg_proto_bytes(struct fg_buf *b, unsigned field, const void *data, size_t len);
/* A packed repeated varint field; nothing when n is 0. */
void fg_proto_packed(struct fg_buf *b, unsigned field, const uint64_t *v, size_t n);
/* Open a nested message; returns the mark fg_proto_end() takes. */
size_t fg_proto_begin(struct fg_buf *b, unsigned field);
void fg_proto_end(struct fg_buf *b, size_t mark);

struct fg_proto_reader {
	const uint8_t *p, *end;
};

struct fg_proto_field {
	unsigned num;	     /* field number */
	unsigned wire;	     /* FG_PROTO_* */
	uint64_t v;	     /* FG_PROTO_VARINT, FG_PROTO_I64, FG_PROTO_I32: the value */
	const uint8_t *data; /* FG_PROTO_LEN: the bytes */
	size_t len;
};

/*
 * The next field of a message: 1 with *f set, 0 at its end, -EINVAL when the
 * bytes are not protobuf (a truncated field, a varint over 10 bytes, a group,
 * field number 0); r->p then points where the bad field starts.
 */
int fg_proto_next(struct fg_proto_reader *r, struct fg_proto_field *f);

/* Read a packed repeated varint field (or one unpacked value) into *v[0..*n). */
int fg_proto_unpack(const struct fg_proto_field *f, uint64_t **v, size_t *n, size_t *alloc);

#endif
