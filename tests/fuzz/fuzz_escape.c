// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the escaper: whatever the bytes, the text holds no control character
 * and is valid UTF-8, and it reads back to the bytes it came from.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/escape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_buf b = FG_BUF_INIT, back = FG_BUF_INIT;
	unsigned flags = size && (data[0] & 1) ? FG_ESC_COMM : 0;
	char small[24];

	fg_buf_add_escaped(&b, (const char *)data, size, flags);
	if (fg_escape_clean((const char *)data, size, flags) != (b.len == size))
		abort();
	for (size_t i = 0; i < b.len; i++) {
		unsigned char c = (unsigned char)b.data[i];

		if (c < 0x20 || c == 0x7f)
			abort();
		if (c == ' ' && (flags & FG_ESC_COMM) && i + 1 < b.len && b.data[i + 1] >= '0' &&
		    b.data[i + 1] <= '9')
			abort();
		if (c != '\\') {
			fg_buf_addch(&back, (char)c);
			continue;
		}
		if (i + 1 < b.len && b.data[i + 1] == '\\') {
			fg_buf_addch(&back, '\\');
			i++;
		} else if (i + 3 < b.len && b.data[i + 1] == 'x' && hexval(b.data[i + 2]) >= 0 &&
			   hexval(b.data[i + 3]) >= 0) {
			fg_buf_addch(&back,
				     (char)(hexval(b.data[i + 2]) << 4 | hexval(b.data[i + 3])));
			i += 3;
		} else {
			abort(); /* a lone backslash */
		}
	}
	/* the text is valid UTF-8 with no control character: with its backslashes made
	 * letters, escaping it again would change nothing */
	for (size_t i = 0; i < b.len; i++)
		if (b.data[i] == '\\')
			b.data[i] = 'A';
	if (!fg_escape_clean(b.data ? b.data : "", b.len, 0))
		abort();
	/* and it reads back */
	if (back.len != size || (size && memcmp(back.data, data, size) != 0))
		abort();
	/* messages: NUL-terminated, within the buffer */
	char *s = malloc(size + 1);
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	if (strlen(fg_escape(s, small, sizeof(small))) >= sizeof(small))
		abort();
	free(s);
	fg_buf_release(&b);
	fg_buf_release(&back);
	return 0;
}
