// SPDX-License-Identifier: BSD-2-Clause
/* Protocol buffers on the wire: varints and length-delimited fields. */
#include <errno.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/proto.h"

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static void put_varint(char *d, uint64_t v)
{
	while (v >= 0x80) {
		*d++ = (char)(v | 0x80);
		v >>= 7;
	}
	*d = (char)v;
}

void fg_proto_varint(struct fg_buf *b, uint64_t v)
{
	size_t n = varint_len(v);

	fg_buf_grow(b, n);
	put_varint(b->data + b->len, v);
	b->len += n;
	b->data[b->len] = '\0';
}

static void tag(struct fg_buf *b, unsigned field, unsigned wire)
{
	fg_proto_varint(b, (uint64_t)field << 3 | wire);
}

void fg_proto_uint(struct fg_buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	tag(b, field, FG_PROTO_VARINT);
	fg_proto_varint(b, v);
}

void fg_proto_bytes(struct fg_buf *b, unsigned field, const void *data, size_t len)
{
	tag(b, field, FG_PROTO_LEN);
	fg_proto_varint(b, len);
	fg_buf_add(b, data, len);
}

void fg_proto_packed(struct fg_buf *b, unsigned field, const uint64_t *v, size_t n)
{
	size_t len = 0;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		len += varint_len(v[i]);
	tag(b, field, FG_PROTO_LEN);
	fg_proto_varint(b, len);
	fg_buf_grow(b, len);
	for (size_t i = 0; i < n; i++) {
		put_varint(b->data + b->len, v[i]);
		b->len += varint_len(v[i]);
	}
	b->data[b->len] = '\0';
}

size_t fg_proto_begin(struct fg_buf *b, unsigned field)
{
	tag(b, field, FG_PROTO_LEN);
	return b->len;
}

void fg_proto_end(struct fg_buf *b, size_t mark)
{
	size_t body = b->len - mark, n = varint_len(body);

	/* the length goes in front of the body: move the body up to make room */
	fg_buf_grow(b, n);
	memmove(b->data + mark + n, b->data + mark, body);
	put_varint(b->data + mark, body);
	b->len += n;
	b->data[b->len] = '\0';
}

static int get_varint(struct fg_proto_reader *r, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (r->p >= r->end)
			return -EINVAL;
		uint8_t c = *r->p++;

		if (shift == 63 && c > 1)
			return -EINVAL;
		x |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -EINVAL;
}

int fg_proto_next(struct fg_proto_reader *r, struct fg_proto_field *f)
{
	const uint8_t *start = r->p;
	uint64_t key, v;

	if (r->p >= r->end)
		return 0;
	memset(f, 0, sizeof(*f));
	if (get_varint(r, &key) < 0 || key >> 3 == 0 || key >> 3 > 0x1fffffff)
		goto bad;
	f->num = (unsigned)(key >> 3);
	f->wire = (unsigned)(key & 7);
	switch (f->wire) {
	case FG_PROTO_VARINT:
		if (get_varint(r, &f->v) < 0)
			goto bad;
		return 1;
	case FG_PROTO_I64:
	case FG_PROTO_I32: {
		size_t n = f->wire == FG_PROTO_I64 ? 8 : 4;

		if ((size_t)(r->end - r->p) < n)
			goto bad;
		for (size_t i = n; i-- > 0;)
			f->v = f->v << 8 | r->p[i];
		r->p += n;
		return 1;
	}
	case FG_PROTO_LEN:
		if (get_varint(r, &v) < 0 || v > (uint64_t)(r->end - r->p))
			goto bad;
		f->data = r->p;
		f->len = (size_t)v;
		r->p += v;
		return 1;
	default:
		goto bad;
	}
bad:
	r->p = start;
	return -EINVAL;
}

int fg_proto_unpack(const struct fg_proto_field *f, uint64_t **v, size_t *n, size_t *alloc)
{
	if (f->wire == FG_PROTO_VARINT) {
		FG_ALLOC_GROW(*v, *n + 1, *alloc);
		(*v)[(*n)++] = f->v;
		return 0;
	}
	if (f->wire != FG_PROTO_LEN)
		return -EINVAL;
	struct fg_proto_reader r = {f->data, f->data + f->len};
	while (r.p < r.end) {
		uint64_t x;

		if (get_varint(&r, &x) < 0)
			return -EINVAL;
		FG_ALLOC_GROW(*v, *n + 1, *alloc);
		(*v)[(*n)++] = x;
	}
	return 0;
}
