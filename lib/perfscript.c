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
    [' '] = C_SPACE,	     ['\t'] = C_SPACE,	      ['\r'] = C_SPACE,
    ['\f'] = C_SPACE,	     ['\v'] = C_SPACE,	      ['0'] = C_DIGIT | C_HEX,
    ['1'] = C_DIGIT | C_HEX, ['2'] = C_DIGIT | C_HEX, ['3'] = C_DIGIT | C_HEX,
    ['4'] = C_DIGIT | C_HEX, ['5'] = C_DIGIT | C_HEX, ['6'] = C_DIGIT | C_HEX,
    ['7'] = C_DIGIT | C_HEX, ['8'] = C_DIGIT | C_HEX, ['9'] = C_DIGIT | C_HEX,
    ['a'] = C_HEX,	     ['b'] = C_HEX,	      ['c'] = C_HEX,
    ['d'] = C_HEX,	     ['e'] = C_HEX,	      ['f'] = C_HEX,
    ['A'] = C_HEX,	     ['B'] = C_HEX,	      ['C'] = C_HEX,
    ['D'] = C_HEX,	     ['E'] = C_HEX,	      ['F'] = C_HEX,
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

#ifdef __SSE2__
/* a bit for each of the 16 bytes at p that is_space holds for */
static inline unsigned space_mask16(const char *p)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
	/* ' ', or '\t' (9) to '\r' (13) but for '\n' (10) */
	__m128i ctl = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(8)),
				    _mm_cmplt_epi8(v, _mm_set1_epi8(14)));
	__m128i sp = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
				  _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')), ctl));

	return (unsigned)_mm_movemask_epi8(sp);
}
#endif

/* the tokens' state between the pieces of a line split_tokens looks at */
struct splitter {
	const char *s;
	struct fg_span *t;
	size_t n, max, start;
	bool in; /* in a token, from s[start] */
};

/*
 * The tokens of the w bytes from s[i] (w <= 32), sp holding a bit for each of
 * them that is a space; false when max tokens are there
 */
static inline bool split_piece(struct splitter *st, size_t i, uint32_t sp, unsigned w)
{
	uint32_t all = w == 32 ? UINT32_MAX : (UINT32_C(1) << w) - 1, m;
	unsigned pos = 0;

	for (;;) {
		if (!st->in) {
			if (!(m = ~sp & all & (UINT32_MAX << pos)))
				return true;
			pos = (unsigned)__builtin_ctz(m);
			st->start = i + pos;
			st->in = true;
		}
		if (!(m = sp & all & (UINT32_MAX << pos)))
			return true;
		pos = (unsigned)__builtin_ctz(m);
		st->t[st->n++] = (struct fg_span){st->s + st->start, i + pos - st->start};
		st->in = false;
		if (st->n == st->max)
			return false;
	}
}

/*
 * The whitespace-separated tokens of s, at most max of them: their number.
 * The spaces are found 16 bytes at a time, then each token by a bit scan.
 */
static size_t split_tokens(const char *s, size_t len, struct fg_span *t, size_t max)
{
	struct splitter st = {.s = s, .t = t, .max = max};
	size_t i = 0;

#ifdef __SSE2__
	for (; i + 32 <= len; i += 32)
		if (!split_piece(&st, i, space_mask16(s + i) | space_mask16(s + i + 16) << 16, 32))
			return st.n;
	if (i < len && len >= 32) {
		/* the rest: the last 32 bytes, those already seen shifted out */
		unsigned seen = (unsigned)(i - (len - 32));
		uint32_t m = space_mask16(s + len - 32) | space_mask16(s + len - 16) << 16;

		if (!split_piece(&st, i, m >> seen, 32 - seen))
			return st.n;
		i = len;
	}
#endif
	for (; i < len; i += 32) {
		unsigned w = len - i < 32 ? (unsigned)(len - i) : 32;
		uint32_t m = 0;

		for (unsigned j = 0; j < w; j++)
			m |= (uint32_t)is_space(s[i + j]) << j;
		if (!split_piece(&st, i, m, w))
			return st.n;
	}
	if (st.in)
		t[st.n++] = (struct fg_span){s + st.start, len - st.start};
	return st.n;
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

	if (s.len - 1 < 19) {
		/* 19 digits at most: no overflow (10^19 - 1 < 2^64), checked as read */
		for (size_t i = 0; i < s.len; i++) {
			unsigned d = (unsigned)(unsigned char)s.p[i] - '0';

			if (d > 9)
				return -EINVAL;
			v = v * 10 + d;
		}
		*out = v;
		return 0;
	}
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

/* the value of the hexadecimal digits at p, up to the first other byte */
static inline uint64_t hex_value(const char *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (!is_hex(c))
			break;
		v = v << 4 | (uint64_t)(is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

uint64_t fg_span_hex(struct fg_span s)
{
	return hex_value(s.p, s.len);
}

static int parse_u64(const char *p, size_t n, uint64_t *out)
{
	return fg_span_u64((struct fg_span){p, n}, out);
}

#define MAX_HEADER_TOKENS 64

/* -F +misc: a few flag letters ("U", "K", "Um") between the thread id and the time */
static bool is_misc_token(struct fg_span t)
{
	if (t.len == 0 || t.len > 4)
		return false;
	for (size_t i = 0; i < t.len; i++)
		if (!((t.p[i] >= 'A' && t.p[i] <= 'Z') || (t.p[i] >= 'a' && t.p[i] <= 'z')))
			return false;
	return true;
}

/* -F +tod: "2026-11-30 14:39:14.288240", the wall-clock time, before perf's own */
static bool is_tod(const struct fg_span *t, size_t k, size_t n)
{
	return k + 1 < n && t[k].len == 10 && t[k].p[4] == '-' && t[k].p[7] == '-' &&
	       is_digit(t[k].p[0]) && t[k + 1].len >= 8 && t[k + 1].p[2] == ':' &&
	       t[k + 1].p[5] == ':' && is_digit(t[k + 1].p[0]);
}

static bool is_record_token(struct fg_span t)
{
	return t.len > 12 && memcmp(t.p, "PERF_RECORD_", 12) == 0;
}

/* the text from token t to the end of the line, trailing blanks dropped */
static struct fg_span rest_from(const char *line, size_t len, const struct fg_span *t)
{
	size_t end = len;

	while (end > 0 && is_space(line[end - 1]))
		end--;
	return (struct fg_span){t->p, (size_t)(line + end - t->p)};
}

/* whether t[k] ends the header: the line ends there, or a frame follows it */
static bool period_ends(const char *line, size_t len, const struct fg_span *t, size_t n, size_t k)
{
	struct fg_ps_frame fr;

	if (k + 1 == n)
		return true;
	struct fg_span r = rest_from(line, len, &t[k + 1]);
	return fg_ps_find_frame(r.p, r.len, &fr) == 0 && fr.addr.p == r.p;
}

/*
 * The fields after the thread id at t[k]: 0 (a header), FG_PS_SIDEBAND, -EINVAL
 * (not a header with its thread id there), -ERANGE.
 */
static int after_tid(const char *line, size_t len, const struct fg_span *t, size_t n, size_t k,
		     struct fg_ps_header *h)
{
	bool strong = false;

	k++;
	/* -F +misc prints its letters before the CPU or the time */
	if (k + 1 < n && is_misc_token(t[k]) && (is_cpu_token(t[k + 1]) || is_time_token(t[k + 1])))
		k++;
	if (k < n && is_cpu_token(t[k])) {
		k++;
		strong = true;
		if (k + 1 < n && is_misc_token(t[k]) && is_time_token(t[k + 1]))
			k++;
	}
	if (is_tod(t, k, n))
		k += 2;
	if (k < n && is_time_token(t[k])) {
		h->time.p = t[k].p;
		h->time.len = t[k].len - 1;
		k++;
		strong = true;
	}
	if (k < n && is_record_token(t[k])) {
		/* "PERF_RECORD_COMM:", "PERF_RECORD_EXIT(5874:5874):(58:58)": the name */
		size_t m = 12;

		while (m < t[k].len && ((t[k].p[m] >= 'A' && t[k].p[m] <= 'Z') ||
					is_digit(t[k].p[m]) || t[k].p[m] == '_'))
			m++;
		h->record.p = t[k].p;
		h->record.len = m;
		k++;
		if (k < n)
			h->rest = rest_from(line, len, &t[k]);
		else
			h->rest.p = line + len;
		return FG_PS_SIDEBAND;
	}
	/*
	 * A number is the period when an event follows it, or (-F -event) when
	 * it ends the line or a frame does.
	 */
	if (k < n && all_digits(t[k].p, t[k].len) &&
	    ((k + 1 < n && is_event_token(t[k + 1])) ||
	     (strong && period_ends(line, len, t, n, k)))) {
		if (parse_u64(t[k].p, t[k].len, &h->period) != 0)
			return -ERANGE;
		h->has_period = true;
		k++;
	}
	if (k < n && is_event_token(t[k])) {
		h->event.p = t[k].p;
		h->event.len = t[k].len - 1;
		k++;
		strong = true;
	}
	if (k < n)
		h->rest = rest_from(line, len, &t[k]);
	else
		h->rest.p = line + len;
	if (strong)
		return 0;

	/* weak: "[PERIOD]", or "[PERIOD] ADDR SYM (MODULE)" (-G); nothing else */
	h->weak = true;
	if (h->rest.len == 0)
		return 0;
	struct fg_ps_frame fr;
	struct fg_span num = t[k];
	if (fg_ps_find_frame(h->rest.p, h->rest.len, &fr) == 0) {
		if (fr.addr.p == h->rest.p)
			return 0;
		if (k + 1 < n && t[k + 1].p == fr.addr.p && all_digits(num.p, num.len)) {
			if (parse_u64(num.p, num.len, &h->period) != 0)
				return -ERANGE;
			h->has_period = true;
			h->rest = rest_from(line, len, &t[k + 1]);
			return 0;
		}
		return -EINVAL;
	}
	if (k + 1 == n && all_digits(num.p, num.len)) {
		if (parse_u64(num.p, num.len, &h->period) != 0)
			return -ERANGE;
		h->has_period = true;
		h->rest.p = line + len;
		h->rest.len = 0;
		return 0;
	}
	return -EINVAL;
}

enum { RUN_DIGITS, RUN_BLANKS, RUN_WORD };

/*
 * Where the run of digits (RUN_DIGITS), of spaces (RUN_BLANKS) or of other
 * bytes (RUN_WORD) that ends at line[j] (exclusive) starts: j when there is
 * none.  16 bytes at a time.
 */
static inline __attribute__((always_inline)) size_t run_back(const char *line, size_t j, int run)
{
#ifdef __SSE2__
	for (; j >= 16; j -= 16) {
		unsigned in, out;

		if (run == RUN_DIGITS) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(line + j - 16));

			in = (unsigned)_mm_movemask_epi8(
			    _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
					  _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1))));
		} else {
			in = space_mask16(line + j - 16);
			if (run == RUN_WORD)
				in = ~in;
		}
		if ((out = ~in & 0xffff))
			return j + 16 - (size_t)__builtin_clz(out);
	}
#endif
	while (j > 0 && (run == RUN_DIGITS   ? is_digit(line[j - 1])
			 : run == RUN_BLANKS ? is_space(line[j - 1])
					     : !is_space(line[j - 1])))
		j--;
	return j;
}

static inline __attribute__((always_inline)) size_t digits_back(const char *line, size_t j)
{
	return run_back(line, j, RUN_DIGITS);
}

static inline __attribute__((always_inline)) size_t blanks_back(const char *line, size_t j)
{
	return run_back(line, j, RUN_BLANKS);
}

/* the value of the n digits at line[i] (n from 1 to 19: no overflow) */
static inline uint64_t digits_value(const char *line, size_t i, size_t n)
{
	uint64_t v = 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (n <= 8 && i + n >= 8) {
		/* the 8 bytes that end with the digits, those before them masked as '0's */
		uint64_t keep = UINT64_MAX << (8 * (8 - n));

		memcpy(&v, line + i + n - 8, sizeof(v));
		v = (v & keep) - (UINT64_C(0x3030303030303030) & keep);
		/* pairs, then fours, then the eight, by multiplications */
		v = v * 10 + (v >> 8);
		return ((v & UINT64_C(0xff000000ff)) * (100 + (UINT64_C(1000000) << 32)) +
			((v >> 16) & UINT64_C(0xff000000ff)) * (1 + (UINT64_C(10000) << 32))) >>
		       32;
	}
#endif
	for (size_t k = 0; k < n; k++)
		v = v * 10 + (uint64_t)(line[i + k] - '0');
	return v;
}

/*
 * perf script's default header, "COMM PID/TID [CPU] SECS.FRAC: PERIOD EVENT:"
 * (or "COMM TID ...", or no comm; the CPU or the period may be missing), read
 * from its end: true with where its
 * fields lie, or false when the line is not in that form (then parse_general
 * decides).  What it gives is what parse_general gives for such a line: no
 * token of the comm starts with a digit, so the first token that can be a
 * thread id is the one before the CPU, and what follows it reads as this;
 * every number has 19 digits at most (none overflows); the comm is short
 * enough for all the tokens to be split.  Its every decision depends on which
 * bytes are digits, never on their values: a line whose other bytes are the
 * same has the same shape (fg_ps_parse_header_memo).
 */
static bool common_shape(const char *line, size_t len, struct fg_ps_shape *s)
{
	size_t end = blanks_back(line, len), j, ev, per, per_end, tm, tm_end, tid, tid_end;
	size_t cpu, slash = 0, c0, c1;

	/* EVENT: */
	j = run_back(line, end, RUN_WORD);
	if (end - j < 2 || line[end - 1] != ':')
		return false;
	ev = j;
	if (end - ev > 12 && memcmp(line + ev, "PERF_RECORD_", 12) == 0)
		return false; /* a side-band record's name */
	/* PERIOD, when printed */
	j = per = per_end = blanks_back(line, ev);
	if (j > 0 && is_digit(line[j - 1])) {
		per = digits_back(line, per_end);
		if (per_end - per > 19 || per == 0 || !is_space(line[per - 1]))
			return false;
		j = blanks_back(line, per);
	}
	/* SECS.FRAC: or SECS: */
	if (j == 0 || line[j - 1] != ':')
		return false;
	tm_end = j - 1;
	tm = digits_back(line, tm_end);
	if (tm == tm_end)
		return false;
	if (tm > 0 && line[tm - 1] == '.') {
		size_t secs = digits_back(line, tm - 1);

		if (secs == tm - 1)
			return false;
		tm = secs;
	}
	if (tm == 0 || !is_space(line[tm - 1]))
		return false;
	/* [CPU], when printed */
	tid_end = blanks_back(line, tm);
	if (tid_end > 0 && line[tid_end - 1] == ']') {
		cpu = digits_back(line, tid_end - 1);
		if (cpu == tid_end - 1 || cpu < 2 || line[cpu - 1] != '[' ||
		    !is_space(line[cpu - 2]))
			return false;
		tid_end = blanks_back(line, cpu - 1);
	}
	/* PID/TID or TID */
	tid = digits_back(line, tid_end);
	if (tid == tid_end || tid_end - tid > 19)
		return false;
	j = tid;
	if (j > 0 && line[j - 1] == '/') {
		slash = j - 1;
		j = digits_back(line, slash);
		if (j == slash || slash - j > 19)
			return false;
	}
	if (j > 0 && !is_space(line[j - 1]))
		return false;
	/* the comm: no token of it starts with a digit, and few enough tokens */
	c1 = blanks_back(line, j);
	for (c0 = 0; c0 < c1 && is_space(line[c0]);)
		c0++;
	if (c1 - c0 > 64)
		return false;
	for (size_t i = c0; i < c1; i++)
		if (is_digit(line[i]) && (i == c0 || is_space(line[i - 1])))
			return false;
	*s = (struct fg_ps_shape){.len = (uint32_t)len,
				  .comm = (uint32_t)(c0 < c1 ? c0 : j),
				  .comm_len = (uint32_t)(c1 - c0),
				  .pid = (uint32_t)j,
				  .slash = (uint32_t)slash,
				  .tid = (uint32_t)tid,
				  .tid_end = (uint32_t)tid_end,
				  .time = (uint32_t)tm,
				  .time_end = (uint32_t)tm_end,
				  .period = (uint32_t)per,
				  .period_end = (uint32_t)per_end,
				  .event = (uint32_t)ev,
				  .end = (uint32_t)end};
	return true;
}

/* the header whose fields lie where s says */
static void shaped_header(const char *line, const struct fg_ps_shape *s, struct fg_ps_header *h)
{
	memset(h, 0, sizeof(*h));
	h->comm.p = line + s->comm;
	h->comm.len = s->comm_len;
	h->tid.p = line + s->tid;
	h->tid.len = s->tid_end - s->tid;
	h->tid_num = h->pid_num = digits_value(line, s->tid, h->tid.len);
	if (s->slash) {
		h->pid.p = line + s->pid;
		h->pid.len = s->slash - s->pid;
		h->pid_num = digits_value(line, s->pid, h->pid.len);
	}
	h->time.p = line + s->time;
	h->time.len = s->time_end - s->time;
	if (s->period_end > s->period) {
		h->has_period = true;
		h->period = digits_value(line, s->period, s->period_end - s->period);
	}
	h->event.p = line + s->event;
	h->event.len = s->end - s->event - 1;
	h->rest.p = line + s->len;
}

/*
 * Whether the number at t[k] (k > 0) has before it the spaces perf pads a
 * thread id with ("%5d", "%5d/%-5d"): a header that names neither CPU, time
 * nor event can be told from a comm that holds numbers ("cxx 12 34", -F
 * comm,ip,sym) by them alone.
 */
static bool tid_padded(const struct fg_span *t, size_t k)
{
	size_t gap = (size_t)(t[k].p - (t[k - 1].p + t[k - 1].len)), d = 0;

	while (d < t[k].len && is_digit(t[k].p[d]))
		d++;
	return d >= 5 || gap >= 6 - d;
}

/*
 * A header without a thread id (t: its n tokens, n > 0): "COMM EVENT:" or
 * "EVENT:" (-F comm,event,ip,sym), or only the comm (-F comm,ip,sym,dso),
 * each perhaps followed by the sample's frame (no call chain).  Weak: fold.c
 * believes it when a frame follows.  0 or -EINVAL.
 */
static int no_tid(const char *line, size_t len, const struct fg_span *t, size_t n,
		  struct fg_ps_header *h)
{
	struct fg_ps_frame fr;
	size_t k, c;

	memset(h, 0, sizeof(*h));
	h->rest.p = line + len;
	if (line[0] == '|')
		return -EINVAL; /* -F +srccode's line */
	/*
	 * The frame on the line, when there is one (no call chain): the comm and
	 * the event come before it.  perf prints the comm then "%16s", the address
	 * " %16lx": the line starts with a space (or the event), and two or more
	 * come before the address.  A comm followed by a call chain ("%s ")
	 * starts the line.
	 */
	for (c = 0; c < n; c++) {
		if (c > 0 && t[c].p - (t[c - 1].p + t[c - 1].len) < 2)
			continue;
		struct fg_span r = rest_from(line, len, &t[c]);

		if (fg_ps_find_frame(r.p, r.len, &fr) == 0 && fr.addr.p == t[c].p) {
			h->rest = r;
			break;
		}
	}
	for (k = 0; k < c && !is_event_token(t[k]); k++)
		;
	if (h->rest.len == 0 || (k == c && !is_space(line[0]))) {
		/* no frame; or a comm that starts the line, and a call chain follows */
		h->rest.len = 0;
		h->rest.p = line + len;
		c = n;
		for (k = 0; k < c && !is_event_token(t[k]); k++)
			;
	}
	/* an indented line without a frame could be any line */
	if (c == 0 || (is_space(line[0]) && h->rest.len == 0))
		return -EINVAL;
	/*
	 * the comm alone, a call chain after it: perf ends the line with the
	 * space after "%16s"; a line of text without it is no header
	 */
	if (k == c && h->rest.len == 0 && !is_space(line[len - 1]))
		return -EINVAL;
	if (k < c) {
		/* an event ends the header: nothing else may follow it */
		if (k + 1 != c || is_record_token(t[k]))
			return -EINVAL;
		h->event.p = t[k].p;
		h->event.len = t[k].len - 1;
	}
	/*
	 * Weak, even with an event: a comm may end with ':' ("x:"), and a strong
	 * header would then stop the comm-only headers of every other process
	 * from being believed (fold.c)
	 */
	h->weak = true;
	h->comm.p = line; /* no comm printed: empty, within the line as every span is */
	if (k > 0) {
		h->comm.p = t[0].p;
		h->comm.len = (size_t)(t[k - 1].p + t[k - 1].len - t[0].p);
	}
	h->tid_num = h->pid_num = UINT64_MAX;
	return 0;
}

static int parse_general(const char *line, size_t len, struct fg_ps_header *h)
{
	struct fg_span t[MAX_HEADER_TOKENS];
	size_t n, slash = 0;
	int r = -EINVAL;

	/* split once; the fields perf prints come within the first tokens */
	n = split_tokens(line, len, t, MAX_HEADER_TOKENS);
	/*
	 * The comm runs up to the first number (or PID/TID) followed by what perf
	 * puts after it; with -F tid,... there is no comm at all.
	 */
	for (size_t k = 0; k < n; k++) {
		if (!is_pid_token(t[k], &slash))
			continue;
		memset(h, 0, sizeof(*h));
		r = after_tid(line, len, t, n, k, h);
		if (r == -EINVAL || (r == 0 && h->weak && k > 0 && !tid_padded(t, k)))
			continue;
		if (r < 0)
			return r;
		h->comm.p = t[0].p;
		h->comm.len = k ? (size_t)(t[k - 1].p + t[k - 1].len - t[0].p) : 0;
		if (slash) {
			h->pid.p = t[k].p;
			h->pid.len = slash;
			h->tid.p = t[k].p + slash + 1;
			h->tid.len = t[k].len - slash - 1;
		} else {
			h->tid = t[k];
		}
		if (parse_u64(h->tid.p, h->tid.len, &h->tid_num) != 0)
			h->tid_num = UINT64_MAX;
		if (!slash || parse_u64(h->pid.p, h->pid.len, &h->pid_num) != 0)
			h->pid_num = h->tid_num;
		return r;
	}
	return n > 0 ? no_tid(line, len, t, n, h) : -EINVAL;
}

int fg_ps_parse_header(const char *line, size_t len, struct fg_ps_header *h)
{
	struct fg_ps_shape s;

	if (len >= UINT32_MAX || !common_shape(line, len, &s))
		return parse_general(line, len, h);
	shaped_header(line, &s, h);
	return 0;
}

/*
 * Whether a and b (len bytes each, 16 or more) are the same but for digits:
 * where they differ, both have a digit
 */
static bool same_but_digits(const char *a, const char *b, size_t len)
{
#ifdef __SSE2__
	const __m128i d0 = _mm_set1_epi8('0' - 1), d9 = _mm_set1_epi8('9' + 1);

	for (size_t i = 0;; i += 16) {
		if (i + 16 > len)
			i = len - 16; /* the last bytes, some seen again */
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
		__m128i dx = _mm_and_si128(_mm_cmpgt_epi8(x, d0), _mm_cmplt_epi8(x, d9));
		__m128i dy = _mm_and_si128(_mm_cmpgt_epi8(y, d0), _mm_cmplt_epi8(y, d9));
		__m128i ok = _mm_or_si128(_mm_cmpeq_epi8(x, y), _mm_and_si128(dx, dy));

		if (_mm_movemask_epi8(ok) != 0xffff)
			return false;
		if (i + 16 == len)
			return true;
	}
#else
	for (size_t i = 0; i < len; i++)
		if (a[i] != b[i] && !(is_digit(a[i]) && is_digit(b[i])))
			return false;
	return true;
#endif
}

/* the slot of the memo for line: by its length and its first 16 bytes, digits as '0' */
static size_t memo_slot(const char *line, size_t len)
{
	uint64_t w[2];

#ifdef __SSE2__
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)line);
	__m128i d = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
				  _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));

	_mm_storeu_si128((__m128i *)(void *)w, _mm_or_si128(_mm_andnot_si128(d, v),
							    _mm_and_si128(d, _mm_set1_epi8('0'))));
#else
	char b[16];

	for (size_t i = 0; i < 16; i++)
		b[i] = is_digit(line[i]) ? '0' : line[i];
	memcpy(w, b, sizeof(w));
#endif
	uint64_t k =
	    (w[0] * UINT64_C(0x9e3779b97f4a7c15) ^ w[1] ^ len) * UINT64_C(0xff51afd7ed558ccd);

	return (size_t)(k >> 40) % FG_PS_MEMO_SLOTS;
}

int fg_ps_parse_header_memo(struct fg_ps_memo *m, const char *line, size_t len,
			    struct fg_ps_header *h)
{
	struct fg_ps_shape s;

	if (len < 16 || len > FG_PS_MEMO_LINE)
		return fg_ps_parse_header(line, len, h);
	struct fg_ps_memo_ent *e = &m->ents[memo_slot(line, len)];

	if (e->shape.len == len && same_but_digits(e->line, line, len)) {
		m->hits++;
		shaped_header(line, &e->shape, h);
		return 0;
	}
	if (!common_shape(line, len, &s))
		return parse_general(line, len, h);
	e->shape = s;
	memcpy(e->line, line, len);
	shaped_header(line, &s, h);
	return 0;
}

int fg_ps_parse_header_general(const char *line, size_t len, struct fg_ps_header *h)
{
	return parse_general(line, len, h);
}

/* index of the '(' that opens the group closed by line[end - 1], balanced, or 0 */
static size_t balanced_open(const char *line, size_t from, size_t end)
{
	size_t j = end - 1;
	int depth = 0;

	/*
	 * The common case: no parenthesis inside the module name, the last '('
	 * before the end then comes after the last ')'; looked for 16 bytes at a
	 * time from the end
	 */
#ifdef __SSE2__
	for (; j >= from + 16; j -= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(line + j - 16));
		unsigned o = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('(')));
		unsigned c = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(')')));

		if (o > c) /* the last of them is a '(' */
			return j - 16 + 31 - (size_t)__builtin_clz(o);
		if (c)
			goto balance;
	}
#endif
	for (; j > from; j--) {
		if (line[j - 1] == '(')
			return j - 1;
		if (line[j - 1] == ')')
			goto balance;
	}
	return 0;
balance:
	/* balance the parentheses from the end */
	for (size_t k = end; k > from; k--) {
		if (line[k - 1] == ')')
			depth++;
		else if (line[k - 1] == '(' && --depth == 0)
			return k - 1;
	}
	return 0;
}

/* whether a module may open at line[o]: a '(' after a space, within (from, end) */
static inline bool module_at(const char *line, size_t from, size_t o)
{
	return o > from && line[o] == '(' && is_space(line[o - 1]);
}

/* whether the module that opens at line[o] is a path or a "[name]", as perf prints most */
static inline bool module_pathlike(const char *line, size_t o, size_t end)
{
	return o + 2 < end && (line[o + 1] == '/' || line[o + 1] == '[');
}

size_t fg_ps_module_open(const char *line, size_t from, size_t end)
{
	size_t b, o;

	if (end <= from + 1 || line[end - 1] != ')')
		return 0;
	/*
	 * The group closed by the last ')', parentheses inside balanced: right
	 * whenever the module's own parentheses pair ("/opt/App (x86)/lib.so",
	 * "/bin/x (deleted)"), whatever the symbol holds ("foo(int) const",
	 * "std::function<void (int)>::operator()").
	 */
	b = balanced_open(line, from, end);
	if (!module_at(line, from, b))
		b = 0;
	if (b && module_pathlike(line, b, end))
		return b;
	/*
	 * A path may hold a lone ')' or '(' ("/tmp/x)y/burn", "/tmp/a(b/burn",
	 * "/tmp/a (b/burn"): then the module is the first group after a space
	 * that starts as a path does.  A symbol holds " (/" or " ([" rarely if
	 * ever, a user's directory name easily.
	 */
	for (o = from + 1; o + 2 < end; o++) {
		const char *p = memchr(line + o, '(', end - 2 - o);

		if (!p)
			break;
		o = (size_t)(p - line);
		if (module_at(line, from, o) && module_pathlike(line, o, end))
			return o;
	}
	return b;
}

/* the symbol between s0 and s1, its +0xOFFSET taken off */
static void set_sym(const char *line, size_t s0, size_t s1, struct fg_ps_frame *f)
{
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
		f->offset = hex_value(line + k, s1 - k);
		s1 = k - 3;
	}
	f->sym.p = line + s0;
	f->sym.len = s1 - s0;
}

/* "ADDR SYM (MODULE)" from line[i]; with no_module, also "ADDR [SYM]" */
static int parse_frame_at(const char *line, size_t i, size_t end, bool no_module,
			  struct fg_ps_frame *f)
{
	size_t a0 = i, open;

	i = skip_hex(line, i, end);
	if (i == a0 || (i < end && !is_space(line[i])))
		return -EINVAL;
	f->addr.p = line + a0;
	f->addr.len = i - a0;
	if (i < end && line[end - 1] == ')') {
		open = fg_ps_module_open(line, i, end);
		if (open) {
			f->module.p = line + open + 1;
			f->module.len = end - 1 - (open + 1);
			set_sym(line, i, open - 1, f);
			return 0;
		}
	}
	if (!no_module)
		return -EINVAL;
	f->module.p = line + end;
	f->module.len = 0;
	set_sym(line, i, end, f);
	return 0;
}

int fg_ps_parse_frame(const char *line, size_t len, struct fg_ps_frame *f)
{
	size_t end = len;

	while (end > 0 && is_space(line[end - 1]))
		end--;
	return parse_frame_at(line, skip_blanks(line, 0, end), end, len > 0 && line[0] == '\t', f);
}

static bool starts_with(const char *p, size_t len, const char *lit)
{
	size_t n = strlen(lit);

	return len >= n && memcmp(p, lit, n) == 0;
}

/* a field perf prints after a single-line sample's frame, from s[i] (a word's start) */
static bool is_trailer(const char *s, size_t i, size_t len)
{
	size_t j = i;

	if (starts_with(s + i, len - i, "insn:") || starts_with(s + i, len - i, "ilen:") ||
	    starts_with(s + i, len - i, "IPC:"))
		return true;
	/* a number alone at the end (-F +phys_addr), or a branch record "0x1/0x2/..." */
	while (j < len && is_hex(s[j]))
		j++;
	if (j > i && j == len)
		return true;
	return starts_with(s + i, len - i, "0x") && memchr(s + i, '/', len - i);
}

int fg_ps_find_frame(const char *s, size_t len, struct fg_ps_frame *f)
{
	size_t end = len;

	while (end > 0 && is_space(s[end - 1]))
		end--;
	/* drop what perf prints after the frame: from the first trailer after a ')' */
	for (size_t i = 1; i < end; i++) {
		if (s[i - 1] == ' ' && s[i] != ' ' && is_trailer(s, i, end)) {
			size_t e = i;

			while (e > 0 && is_space(s[e - 1]))
				e--;
			if (e > 0 && s[e - 1] == ')') {
				end = e;
				break;
			}
		}
	}
	/* the first hexadecimal word that makes a frame whose symbol is not another field */
	for (size_t i = 0; i < end; i++) {
		if (i > 0 && !is_space(s[i - 1]))
			continue;
		if (!is_hex(s[i]) || parse_frame_at(s, i, end, true, f) != 0)
			continue;
		const char *sym = f->sym.p;
		size_t n = f->sym.len, h = 0;

		while (h < n && is_hex(sym[h]))
			h++;
		if (h > 0 && (h == n || is_space(sym[h])))
			continue; /* another number follows this one: payload */
		if (starts_with(sym, n, "|OP "))
			continue; /* -F +data_src's decoding */
		if (n == 0 && f->module.len == 0)
			continue; /* a lone number is no frame here */
		return 0;
	}
	return -EINVAL;
}

bool fg_ps_is_extra_line(const char *line, size_t len)
{
	size_t i = skip_blanks(line, 0, len), end = len;

	while (end > i && is_space(line[end - 1]))
		end--;
	if (i == end)
		return false;
	if (line[i] == '|')
		return true; /* -F +srccode: "|16    source" */
	if (i == 0)
		return false;
	return is_trailer(line, i, end) &&
	       (!is_hex(line[i]) || line[0] != '\t'); /* not "\tADDR": a frame of -F ip */
}

bool fg_ps_is_srcline(const char *line, size_t len, struct fg_span *src)
{
	size_t i = 0, end = len, k;

	if (len == 0 || !is_space(line[0]))
		return false;
	while (i < len && is_space(line[i]))
		i++;
	while (end > i && is_space(line[end - 1]))
		end--;
	if (i == end)
		return false;
	/* -G -F +srcline,+phys_addr: "file.c:17       0" */
	for (k = end; k > i && is_hex(line[k - 1]); k--)
		;
	if (k < end && k > i && is_space(line[k - 1])) {
		while (k > i && is_space(line[k - 1]))
			k--;
		if (fg_ps_is_srcline(line, k, src))
			return true;
	}
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
			size_t j = (size_t)(lb - s) + 1;

			while (j < n - 1 && (is_hex(s[j]) || s[j] == 'x'))
				j++;
			return j == n - 1 && j > (size_t)(lb - s) + 1;
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
	struct fg_span s = {p, len};

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
