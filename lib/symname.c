// SPDX-License-Identifier: BSD-2-Clause
#include <string.h>

#include "fg/symname.h"

static inline bool starts(const char *p, size_t len, const char *lit, size_t litlen)
{
	return len >= litlen && memcmp(p, lit, litlen) == 0;
}

size_t fg_symname_args_start(const char *s, size_t len)
{
	const char *paren = memchr(s, '(', len);
	size_t i;
	int depth = 0;

	/* the common case: no template brackets before the parenthesis */
	if (paren && !memchr(s, '<', (size_t)(paren - s)) && paren > s && paren[-1] != '.' &&
	    !starts(paren, len - (size_t)(paren - s), "(anonymous namespace)", 21))
		return (size_t)(paren - s);
	for (i = 0; i < len; i++) {
		char c = s[i];

		if (c == 'o' && starts(s + i, len - i, "operator", 8)) {
			/* "operator<", "operator<<=", "operator->": no brackets there */
			i += 8;
			while (i < len && s[i] && strchr("<>=-!", s[i]))
				i++;
			i--;
		} else if (c == '<') {
			depth++;
		} else if (c == '>') {
			if (depth > 0)
				depth--;
		} else if (c == '(' && depth == 0) {
			if (starts(s + i, len - i, "(anonymous namespace)", 21)) {
				i += 20;
				continue;
			}
			if (i > 0 && s[i - 1] == '.') {
				/* Go: "net/http.(*Client).Do" */
				int d = 0;

				for (; i < len; i++) {
					if (s[i] == '(')
						d++;
					else if (s[i] == ')' && --d == 0)
						break;
				}
				continue;
			}
			return i;
		}
	}
	return len;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

#define RUST_HASH_LEN 17 /* 'h' and 16 hexadecimal digits */

bool fg_symname_is_rust_legacy(const char *s, size_t len)
{
	if (len < RUST_HASH_LEN + 2)
		return false;
	const char *h = s + len - RUST_HASH_LEN;
	if (h[0] != 'h' || h[-1] != ':' || h[-2] != ':')
		return false;
	for (size_t i = 1; i < RUST_HASH_LEN; i++)
		if (hexval(h[i]) < 0)
			return false;
	return true;
}

/* the escape at s ("$LT$", "$u7b$"): its character and length, or 0 */
static size_t rust_escape(const char *s, size_t len, char *c)
{
	static const struct {
		const char *esc;
		char c;
	} known[] = {
	    {"$SP$", '@'}, {"$BP$", '*'}, {"$RF$", '&'}, {"$LT$", '<'},
	    {"$GT$", '>'}, {"$LP$", '('}, {"$RP$", ')'}, {"$C$", ','},
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		size_t n = strlen(known[i].esc);

		if (starts(s, len, known[i].esc, n)) {
			*c = known[i].c;
			return n;
		}
	}
	/* $uXX$: printable ASCII only, so no control character enters a name */
	if (len >= 5 && s[1] == 'u' && hexval(s[2]) >= 0 && hexval(s[3]) >= 0 && s[4] == '$') {
		int v = hexval(s[2]) << 4 | hexval(s[3]);

		if (v >= 0x20 && v < 0x7f) {
			*c = (char)v;
			return 5;
		}
	}
	return 0;
}

size_t fg_symname_rust_tidy(const char *s, size_t len, char *out)
{
	size_t i = 0, o = 0;

	if (!fg_symname_is_rust_legacy(s, len)) {
		memmove(out, s, len);
		return len;
	}
	len -= RUST_HASH_LEN + 2;
	if (starts(s, len, "_$", 2))
		i = 1;
	while (i < len) {
		char c;
		size_t n;

		if (s[i] == '.' && i + 1 < len && s[i + 1] == '.') {
			out[o++] = ':';
			out[o++] = ':';
			i += 2;
		} else if (s[i] == '$') {
			n = rust_escape(s + i, len - i, &c);
			if (n == 0) {
				/* unknown: the rest as it is */
				memmove(out + o, s + i, len - i);
				return o + len - i;
			}
			out[o++] = c;
			i += n;
		} else {
			out[o++] = s[i++];
		}
	}
	return o;
}
