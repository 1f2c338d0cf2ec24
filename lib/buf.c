// SPDX-License-Identifier: BSD-2-Clause
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/buf.h"

void fg_buf_init(struct fg_buf *b, size_t hint)
{
	*b = (struct fg_buf)FG_BUF_INIT;
	if (hint)
		fg_buf_grow(b, hint);
}

void fg_buf_grow(struct fg_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;

	if (need < b->len)
		need = (size_t)-1; /* overflow: let the allocator fail loudly */
	if (need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap * 2 > cap ? cap * 2 : need;
	b->data = fg_xrealloc(b->data, cap);
	b->cap = cap;
	b->data[b->len] = '\0';
}

void fg_buf_reserve(struct fg_buf *b, size_t len)
{
	if (len < b->len || len + 1 <= b->cap)
		return;
	b->data = fg_xrealloc(b->data, len + 1);
	b->cap = len + 1;
	b->data[b->len] = '\0';
}

void fg_buf_vaddf(struct fg_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	fg_buf_grow(b, 64);
	va_copy(cp, ap);
	n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, cp);
	va_end(cp);
	if (n < 0) {
		b->data[b->len] = '\0';
		return;
	}
	if ((size_t)n >= b->cap - b->len) {
		fg_buf_grow(b, (size_t)n);
		vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
	}
	b->len += (size_t)n;
}

void fg_buf_addf(struct fg_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fg_buf_vaddf(b, fmt, ap);
	va_end(ap);
}

void fg_buf_reset(struct fg_buf *b)
{
	fg_buf_truncate(b, 0);
}

void fg_buf_truncate(struct fg_buf *b, size_t len)
{
	if (len > b->len)
		len = b->len;
	b->len = len;
	if (b->data)
		b->data[len] = '\0';
}

void fg_buf_release(struct fg_buf *b)
{
	if (!b)
		return;
	free(b->data);
	*b = (struct fg_buf)FG_BUF_INIT;
}

char *fg_buf_detach(struct fg_buf *b, size_t *len)
{
	char *s;

	if (!b->data)
		fg_buf_grow(b, 0);
	s = b->data;
	if (len)
		*len = b->len;
	*b = (struct fg_buf)FG_BUF_INIT;
	return s;
}
