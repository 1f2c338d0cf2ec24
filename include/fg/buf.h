/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A growable byte buffer.  Lives on the stack:
 *
 *	struct fg_buf b = FG_BUF_INIT;
 *	fg_buf_addf(&b, "%d", 42);
 *	use(b.data, b.len);
 *	fg_buf_release(&b);
 *
 * Once anything was added, data[len] is always '\0', so data is a C string
 * whenever the contents hold no NUL.
 */
#ifndef FG_BUF_H
#define FG_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include "fg/diag.h"

struct fg_buf {
	char *data;
	size_t len;
	size_t cap; /* allocated bytes, including room for the final NUL */
};

#define FG_BUF_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

void fg_buf_init(struct fg_buf *b, size_t hint);
/* Make room for `extra` more bytes (plus the terminating NUL). */
void fg_buf_grow(struct fg_buf *b, size_t extra);
/* Make room for `len` bytes in all (plus the NUL), exactly: no doubling past a known bound. */
void fg_buf_reserve(struct fg_buf *b, size_t len);
void fg_buf_addf(struct fg_buf *b, const char *fmt, ...) FG_PRINTF(2, 3);
void fg_buf_vaddf(struct fg_buf *b, const char *fmt, va_list ap);
/* Empty the buffer, keeping its memory. */
void fg_buf_reset(struct fg_buf *b);
/* Shorten to `len` bytes (len <= b->len). */
void fg_buf_truncate(struct fg_buf *b, size_t len);
/* Free the memory; the buffer is FG_BUF_INIT again.  NULL-safe. */
void fg_buf_release(struct fg_buf *b);
/* Hand the string over to the caller (never NULL); the buffer is emptied. */
char *fg_buf_detach(struct fg_buf *b, size_t *len);

/* Append len bytes; inline, as the hot loops that write text call it for each piece. */
static inline void fg_buf_add(struct fg_buf *b, const void *data, size_t len)
{
	if (b->cap - b->len <= len)
		fg_buf_grow(b, len);
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
}

static inline void fg_buf_addch(struct fg_buf *b, char c)
{
	if (b->len + 2 > b->cap)
		fg_buf_grow(b, 1);
	b->data[b->len++] = c;
	b->data[b->len] = '\0';
}

static inline void fg_buf_addstr(struct fg_buf *b, const char *s)
{
	fg_buf_add(b, s, strlen(s));
}

#endif
