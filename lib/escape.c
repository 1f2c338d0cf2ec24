// SPDX-License-Identifier: BSD-2-Clause
/* Escaping names others chose before they go into line-based text (fg/escape.h). */
#include <stdint.h>
#include <string.h>

#include "fg/escape.h"

/*
 * Bytes of the valid UTF-8 sequence at s[0..len), or 0 when it is not one.
 * C1 controls (U+0080-U+009F, C2 80..C2 9F) count as invalid: they are
 * escaped like the C0 ones.
 */
static size_t utf8_len(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2, lo = c == 0xc2 ? 0xa0 : 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (len < n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* Bytes at s[i] to keep as they are (0: escape one byte, or a space: see FG_ESC_COMM). */
static size_t keep_len(const unsigned char *s, size_t i, size_t len, unsigned flags)
{
	unsigned char c = s[i];

	if (c < 0x20 || c == 0x7f || c == '\\')
		return 0;
	if (c == ' ' && (flags & FG_ESC_COMM) && i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9')
		return 0;
	if (c < 0x80)
		return 1;
	return utf8_len(s + i, len - i);
}

bool fg_escape_clean(const char *s, size_t len, unsigned flags)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; i < len;) {
		size_t k = keep_len(u, i, len, flags);

		if (!k)
			return false;
		i += k;
	}
	return true;
}

void fg_buf_add_escaped(struct fg_buf *b, const char *s, size_t len, unsigned flags)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, run = 0;

	while (i < len) {
		size_t k = keep_len(u, i, len, flags);

		if (k) {
			i += k;
			continue;
		}
		fg_buf_add(b, s + run, i - run);
		if (u[i] == '\\') {
			fg_buf_add(b, "\\\\", 2);
		} else {
			char esc[4] = {'\\', 'x', "0123456789abcdef"[u[i] >> 4],
				       "0123456789abcdef"[u[i] & 15]};

			fg_buf_add(b, esc, 4);
		}
		run = ++i;
	}
	fg_buf_add(b, s + run, len - run);
}

const char *fg_escape(const char *s, char *buf, size_t size)
{
	struct fg_buf b = FG_BUF_INIT;
	size_t len = strlen(s);

	if (fg_escape_clean(s, len, 0)) {
		if (len < size) {
			memcpy(buf, s, len + 1);
			return buf;
		}
		fg_buf_add(&b, s, len);
	} else {
		fg_buf_add_escaped(&b, s, len, 0);
	}
	if (b.len < size) {
		memcpy(buf, b.data, b.len + 1);
	} else {
		/* cut at a character boundary: never in the middle of an escape or a UTF-8 sequence
		 */
		size_t keep = size - 4, i = 0;

		while (i < keep) {
			size_t k = b.data[i] == '\\' ? (b.data[i + 1] == 'x' ? 4 : 2)
				   : (unsigned char)b.data[i] < 0x80
				       ? 1
				       : utf8_len((const unsigned char *)b.data + i, b.len - i);

			if (!k || i + k > keep)
				break;
			i += k;
		}
		memcpy(buf, b.data, i);
		memcpy(buf + i, "...", 4);
	}
	fg_buf_release(&b);
	return buf;
}
