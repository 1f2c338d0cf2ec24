// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "fg/perfscript.h"

/* character classes, by table: these run for every byte of every frame line */
enum { C_SPACE = 1, C_DIGIT = 2, C_HEX = 4 };
static const uint8_t ctype[256] = {
	[' '] = C_SPACE, ['\t'] = C_SPACE, ['\r'] = C_SPACE, ['\f'] = C_SPACE, ['\v'] = C_SPACE,
	['0'] = C_DIGIT | C_HEX, ['1'] = C_DIGIT | C_HEX, ['2'] = C_DIGIT | C_HEX,
	['3'] = C_DIGIT | C_HEX, ['4'] = C_DIGIT | C_HEX, ['5'] = C_DIGIT | C_HEX,
	['6'] = C_DIGIT | C_HEX, ['7'] = C_DIGIT | C_HEX, ['8'] = C_DIGIT | C_HEX,
	['9'] = C_DIGIT | C_HEX, ['a'] = C_HEX, ['b'] = C_HEX, ['c'] = C_HEX, ['d'] = C_HEX,
	['e'] = C_HEX, ['f'] = C_HEX, ['A'] = C_HEX, ['B'] = C_HEX, ['C'] = C_HEX, ['D'] = C_HEX,
	['E'] = C_HEX, ['F'] = C_HEX,
};

static inline bool is_space(char c)
{
	return ctype[(unsigned char)c] & C_SPACE;
}

static inline bool is_digit(char c)
{
	return ctype[(unsigned char)c] & C_DIGIT;
}

static inline bool is_hex(char c)
{
	return ctype[(unsigned char)c] & C_HEX;
}

/* the first index in [i, end) that is not a space or a tab (16 bytes at a time) */
static inline size_t skip_blanks(const char *p, size_t i, size_t end)
{
#ifdef __SSE2__
	const __m128i sp = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t');

	for (; i + 16 <= end; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		unsigned m = (unsigned)_mm_movemask_epi8(
			_mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, tab)));

		if (m != 0xffff)
			return i + (size_t)__builtin_ctz(~m);
	}
#endif
	while (i < end && is_space(p[i]))
		i++;
	return i;
}

/* the first index in [i, end) that is not a hexadecimal digit (16 bytes at a time) */
static inline size_t skip_hex(const char *p, size_t i, size_t end)
{
#ifdef __SSE2__
	const __m128i d0 = _mm_set1_epi8('0' - 1), d9 = _mm_set1_epi8('9' + 1);
	const __m128i a0 = _mm_set1_epi8('a' - 1), f0 = _mm_set1_epi8('f' + 1);
	const __m128i lc = _mm_set1_epi8(0x20);

	for (; i + 16 <= end; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i l = _mm_or_si128(v, lc);
		__m128i dig = _mm_and_si128(_mm_cmpgt_epi8(v, d0), _mm_cmplt_epi8(v, d9));
		__m128i let = _mm_and_si128(_mm_cmpgt_epi8(l, a0), _mm_cmplt_epi8(l, f0));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(dig, let));

		if (m != 0xffff)
			return i + (size_t)__builtin_ctz(~m);
	}
#endif
	while (i < end && is_hex(p[i]))
		i++;
	return i;
}

/* the next whitespace-separated token at or after *pos, or false at the end */
static inline bool next_token(const char *s, size_t len, size_t *pos, struct fg_span *tok)
{
	size_t i = *pos, start;

	while (i < len && is_space(s[i]))
		i++;
	if (i == len)
		return false;
	start = i;
	while (i < len && !is_space(s[i]))
		i++;
	tok->p = s + start;
	tok->len = i - start;
	*pos = i;
	return true;
}

static bool all_digits(const char *p, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_digit(p[i]))
			return false;
	return true;
}

/* "123" or "123/456"; *slash is the offset of the '/' or 0 */
static bool is_pid_token(struct fg_span t, size_t *slash)
{
	const char *sl = memchr(t.p, '/', t.len);

	if (!sl) {
		*slash = 0;
		return all_digits(t.p, t.len);
	}
	*slash = (size_t)(sl - t.p);
	return all_digits(t.p, *slash) && all_digits(sl + 1, t.len - *slash - 1);
}

static bool is_cpu_token(struct fg_span t)
{
	return t.len >= 3 && t.p[0] == '[' && t.p[t.len - 1] == ']' &&
	       all_digits(t.p + 1, t.len - 2);
}

/* "12345.678901:" (perf's time, any number of decimals) or "12345:" */
static bool is_time_token(struct fg_span t)
{
	size_t i = 0;

	if (t.len < 2 || t.p[t.len - 1] != ':')
		return false;
	while (i < t.len - 1 && is_digit(t.p[i]))
		i++;
	if (i == 0)
		return false;
	if (i < t.len - 1 && t.p[i] == '.') {
		i++;
		if (!all_digits(t.p + i, t.len - 1 - i))
			return false;
		return true;
	}
	return i == t.len - 1;
}

static bool is_event_token(struct fg_span t)
{
	return t.len >= 2 && t.p[t.len - 1] == ':';
}

int fg_span_u64(struct fg_span s, uint64_t *out)
{
	uint64_t v = 0;

	if (!all_digits(s.p, s.len))
		return -EINVAL;
	for (size_t i = 0; i < s.len; i++) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s.p[i] - '0'), &v))
			return -ERANGE;
	}
	*out = v;
	return 0;
}

uint64_t fg_span_hex(struct fg_span s)
{
	uint64_t v = 0;

	for (size_t i = 0; i < s.len; i++) {
		char c = s.p[i];

		if (!is_hex(c))
			break;
		v = v << 4 | (uint64_t)(is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

static int parse_u64(const char *p, size_t n, uint64_t *out)
{
	return fg_span_u64((struct fg_span){ p, n }, out);
}

#define MAX_HEADER_TOKENS 64

int fg_ps_parse_header(const char *line, size_t len, struct fg_ps_header *h)
{
	struct fg_span t[MAX_HEADER_TOKENS];
	size_t n = 0, pos = 0, slash = 0, k, pidk = 0;

	/* split once; the fields perf prints come within the first tokens */
	while (n < MAX_HEADER_TOKENS && next_token(line, len, &pos, &t[n]))
		n++;
	/* the comm runs up to the first number (or PID/TID) followed by what perf puts after it */
	for (k = 1; k + 1 < n; k++) {
		struct fg_span nx = t[k + 1];

		if (is_pid_token(t[k], &slash) &&
		    (is_cpu_token(nx) || is_time_token(nx) || is_event_token(nx))) {
			pidk = k;
			break;
		}
	}
	if (!pidk)
		return -EINVAL;

	memset(h, 0, sizeof(*h));
	h->comm.p = t[0].p;
	h->comm.len = (size_t)(t[pidk - 1].p + t[pidk - 1].len - t[0].p);
	if (slash) {
		h->pid.p = t[pidk].p;
		h->pid.len = slash;
		h->tid.p = t[pidk].p + slash + 1;
		h->tid.len = t[pidk].len - slash - 1;
	} else {
		h->tid = t[pidk];
	}
	if (parse_u64(h->tid.p, h->tid.len, &h->tid_num) != 0)
		h->tid_num = UINT64_MAX;
	if (!slash || parse_u64(h->pid.p, h->pid.len, &h->pid_num) != 0)
		h->pid_num = h->tid_num;

	k = pidk + 1;
	if (k < n && is_cpu_token(t[k]))
		k++;
	if (k < n && is_time_token(t[k]))
		k++;
	/* a number is the period only when an event follows it */
	if (k + 1 < n && all_digits(t[k].p, t[k].len) && is_event_token(t[k + 1])) {
		if (parse_u64(t[k].p, t[k].len, &h->period) != 0)
			return -ERANGE;
		h->has_period = true;
		k++;
	}
	if (k < n && is_event_token(t[k])) {
		h->event.p = t[k].p;
		h->event.len = t[k].len - 1;
		k++;
	}
	/* the rest of the line, from the next token on */
	if (k < n) {
		size_t end = len;

		while (end > 0 && is_space(line[end - 1]))
			end--;
		h->rest.p = t[k].p;
		h->rest.len = (size_t)(line + end - t[k].p);
	} else {
		h->rest.p = line + len;
	}
	return 0;
}

/* index of the '(' that opens the group closed by line[end - 1], or 0 (never valid) */
static size_t module_open(const char *line, size_t from, size_t end)
{
	const char *lp = memrchr(line + from, '(', end - 1 - from);
	int depth = 0;

	if (!lp)
		return 0;
	/* the common case: no parenthesis inside the module name */
	if (!memchr(lp + 1, ')', (size_t)(line + end - 1 - (lp + 1))))
		return (size_t)(lp - line);
	/* balance the parentheses from the end */
	for (size_t k = end; k > from; k--) {
		if (line[k - 1] == ')')
			depth++;
		else if (line[k - 1] == '(' && --depth == 0)
			return k - 1;
	}
	return 0;
}

int fg_ps_parse_frame(const char *line, size_t len, struct fg_ps_frame *f)
{
	size_t i = 0, end = len, a0, open;

	while (end > 0 && is_space(line[end - 1]))
		end--;
	i = skip_blanks(line, 0, end);
	a0 = i;
	i = skip_hex(line, i, end);
	if (i == a0 || i == end || !is_space(line[i]))
		return -EINVAL;
	f->addr.p = line + a0;
	f->addr.len = i - a0;
	if (line[end - 1] != ')')
		return -EINVAL;
	/* the module is the parenthesised group at the end, parentheses inside it balanced */
	open = module_open(line, i, end);
	if (open <= i || !is_space(line[open - 1]))
		return -EINVAL;
	f->module.p = line + open + 1;
	f->module.len = end - 1 - (open + 1);

	size_t s0 = i, s1 = open - 1;
	while (s0 < s1 && is_space(line[s0]))
		s0++;
	while (s1 > s0 && is_space(line[s1 - 1]))
		s1--;
	/* strip a final +0xOFFSET */
	size_t k = s1;
	while (k > s0 && is_hex(line[k - 1]))
		k--;
	f->offset = 0;
	if (k < s1 && k >= s0 + 3 && memcmp(line + k - 3, "+0x", 3) == 0) {
		f->offset = fg_span_hex((struct fg_span){ line + k, s1 - k });
		s1 = k - 3;
	}
	f->sym.p = line + s0;
	f->sym.len = s1 - s0;
	return 0;
}

bool fg_ps_is_srcline(const char *line, size_t len, struct fg_span *src)
{
	size_t i = 0, end = len;

	if (len == 0 || !is_space(line[0]))
		return false;
	while (i < len && is_space(line[i]))
		i++;
	while (end > i && is_space(line[end - 1]))
		end--;
	if (i == end)
		return false;
	src->p = line + i;
	src->len = end - i;
	/* "FILE:LINE", perhaps followed by " (discriminator N)" */
	const char *s = src->p;
	size_t n = src->len;
	const char *disc = n > 16 ? memmem(s, n, " (discriminator ", 16) : NULL;
	if (disc)
		src->len = n = (size_t)(disc - s);
	size_t d = n;
	while (d > 0 && is_digit(s[d - 1]))
		d--;
	if (d < n && d > 1 && s[d - 1] == ':')
		return true;
	/* "MODULE[HEXOFFSET]" when perf knows no line */
	if (s[n - 1] == ']') {
		const char *lb = memrchr(s, '[', n);

		if (lb && lb > s) {
			size_t k = (size_t)(lb - s) + 1;

			while (k < n - 1 && (is_hex(s[k]) || s[k] == 'x'))
				k++;
			return k == n - 1 && k > (size_t)(lb - s) + 1;
		}
	}
	return false;
}

size_t fg_ps_event_base_len(const char *event, size_t len)
{
	static const char mods[] = "ukhIGHpPSDWeb";
	const char *colon = memrchr(event, ':', len);

	if (!colon || colon == event || (size_t)(colon - event) == len - 1)
		return len;
	for (const char *c = colon + 1; c < event + len; c++)
		if (!strchr(mods, *c))
			return len;
	return (size_t)(colon - event);
}

static struct fg_span basename_of(const char *p, size_t len)
{
	const char *sl = memrchr(p, '/', len);
	struct fg_span s = { p, len };

	if (sl) {
		s.p = sl + 1;
		s.len = len - (size_t)(sl + 1 - p);
	}
	return s;
}

static bool ends_with(const char *p, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(p + len - n, suffix, n) == 0;
}

bool fg_ps_module_is_kernel(const char *mod, size_t len)
{
	struct fg_span b;

	if (len > 0 && mod[0] == '[')
		return !(len == 9 && memcmp(mod, "[unknown]", 9) == 0);
	b = basename_of(mod, len);
	if (b.len >= 7 && memcmp(b.p, "vmlinux", 7) == 0)
		return true;
	return ends_with(mod, len, ".ko") || ends_with(mod, len, ".ko.xz") ||
	       ends_with(mod, len, ".ko.gz") || ends_with(mod, len, ".ko.zst");
}

bool fg_ps_module_is_jit(const char *mod, size_t len)
{
	struct fg_span b = basename_of(mod, len);

	/* perf-PID.map */
	if (b.len > 9 && memcmp(b.p, "perf-", 5) == 0 && ends_with(b.p, b.len, ".map"))
		return all_digits(b.p + 5, b.len - 9);
	/* jitdump: ~/.debug/jit/.../jitted-PID-N.so */
	return b.len > 10 && memcmp(b.p, "jitted-", 7) == 0 && ends_with(b.p, b.len, ".so");
}
