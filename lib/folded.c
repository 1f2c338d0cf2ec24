// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/folded.h"

/* perl's \s */
static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A count at the end of line[0, *len): digits, then optionally '.' and digits. */
static int take_count(const char *line, size_t *len, double *value, const char **text,
		      size_t *text_len)
{
	size_t end = *len, p = end, q;
	char tmp[64];

	while (p > 0 && is_digit(line[p - 1]))
		p--;
	if (p > 0 && line[p - 1] == '.') {
		q = p - 1;
		while (q > 0 && is_digit(line[q - 1]))
			q--;
		if (q == p - 1)
			return -EINVAL; /* ".5": no digit before the point */
		p = q;
	}
	if (p == end || !is_digit(line[p]))
		return -EINVAL;
	/* the count must follow whitespace, which stands before the stack */
	if (p == 0 || !is_space(line[p - 1]))
		return -EINVAL;
	*text = line + p;
	*text_len = end - p;
	if (*text_len < sizeof(tmp)) {
		memcpy(tmp, line + p, *text_len);
		tmp[*text_len] = '\0';
		*value = strtod(tmp, NULL);
	} else {
		char *s = strndup(line + p, *text_len);

		*value = s ? strtod(s, NULL) : 0;
		free(s);
	}
	*len = p - 1;
	return 0;
}

int fg_folded_parse(const char *line, size_t len, struct fg_folded *out)
{
	size_t n;

	memset(out, 0, sizeof(*out));
	if (len > 0 && line[len - 1] == '\r')
		len--;
	n = len;
	if (take_count(line, &n, &out->count, &out->count_text, &out->count_text_len) < 0)
		return -EINVAL;
	out->stack = line;
	out->stack_len = n;
	if (take_count(line, &n, &out->before, &out->before_text, &out->before_text_len) == 0) {
		out->diff = true;
		out->stack_len = n;
	}
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

bool fg_folded_is_line(const char *p, size_t n)
{
	struct fg_folded fl;
	size_t k;

	while (n && is_blank(p[n - 1]))
		n--;
	if (n == 0 || p[0] == ' ' || p[0] == '\t' || fg_folded_parse(p, n, &fl) != 0)
		return false;
	for (k = fl.stack_len; k && is_blank(p[k - 1]); k--)
		;
	return k > 0;
}

size_t fg_folded_trim(const char *stack, size_t len)
{
	while (len > 0 && stack[len - 1] == ';')
		len--;
	return len;
}

bool fg_folded_next_frame(const char *stack, size_t len, size_t *pos, const char **frame,
			  size_t *frame_len)
{
	const char *semi;
	size_t p = *pos;

	len = fg_folded_trim(stack, len);
	if (p >= len)
		return false;
	semi = memchr(stack + p, ';', len - p);
	*frame = stack + p;
	*frame_len = semi ? (size_t)(semi - (stack + p)) : len - p;
	*pos = p + *frame_len + 1;
	return true;
}

static const uint64_t pow10_[FG_COUNT_MAX_DEC + 1] = {
    1ULL,
    10ULL,
    100ULL,
    1000ULL,
    10000ULL,
    100000ULL,
    1000000ULL,
    10000000ULL,
    100000000ULL,
    1000000000ULL,
    10000000000ULL,
    100000000000ULL,
    1000000000000ULL,
    10000000000000ULL,
    100000000000000ULL,
    1000000000000000ULL,
    10000000000000000ULL,
    100000000000000000ULL,
    1000000000000000000ULL,
};

int fg_count_parse(const char *text, size_t len, struct fg_count *c)
{
	size_t i = 0;

	memset(c, 0, sizeof(*c));
	if (len == 0 || !is_digit(text[0]))
		return -EINVAL;
	for (; i < len && is_digit(text[i]); i++) {
		if (__builtin_mul_overflow(c->whole, 10, &c->whole) ||
		    __builtin_add_overflow(c->whole, (uint64_t)(text[i] - '0'), &c->whole))
			return -ERANGE;
	}
	if (i < len && text[i] == '.') {
		for (i++; i < len && is_digit(text[i]); i++) {
			if (c->dec < FG_COUNT_MAX_DEC) {
				c->frac = c->frac * 10 + (uint64_t)(text[i] - '0');
				c->dec++;
			}
		}
	}
	if (i != len)
		return -EINVAL;
	/* "2.50" is 2.5 */
	while (c->dec > 0 && c->frac % 10 == 0) {
		c->frac /= 10;
		c->dec--;
	}
	return 0;
}

int fg_count_add(struct fg_count *sum, const struct fg_count *c)
{
	struct fg_count r = *sum;
	uint64_t frac = c->frac;

	/* the same scale for both fractions */
	if (c->dec > r.dec) {
		r.frac *= pow10_[c->dec - r.dec];
		r.dec = c->dec;
	} else {
		frac *= pow10_[r.dec - c->dec];
	}
	r.frac += frac; /* < 2 * 10^18: no overflow */
	if (__builtin_add_overflow(r.whole, c->whole, &r.whole))
		return -EOVERFLOW;
	if (r.frac >= pow10_[r.dec]) {
		r.frac -= pow10_[r.dec];
		if (__builtin_add_overflow(r.whole, 1, &r.whole))
			return -EOVERFLOW;
	}
	while (r.dec > 0 && r.frac % 10 == 0) {
		r.frac /= 10;
		r.dec--;
	}
	*sum = r;
	return 0;
}

int fg_count_format(const struct fg_count *c, char *buf, size_t size)
{
	if (c->dec == 0 || c->frac == 0)
		return snprintf(buf, size, "%" PRIu64, c->whole);
	return snprintf(buf, size, "%" PRIu64 ".%0*" PRIu64, c->whole, (int)c->dec, c->frac);
}
