// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <string.h>

#include "fg/perfscript.h"

static inline bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline bool is_hex(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* the next whitespace-separated token at or after *pos, or false at the end */
static bool next_token(const char *s, size_t len, size_t *pos, struct fg_span *tok)
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
	return t.len >= 3 && t.p[0] == '[' && t.p[t.len - 1] == ']' && all_digits(t.p + 1, t.len - 2);
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

static int parse_u64(const char *p, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(p[i] - '0'), &v))
			return -ERANGE;
	}
	*out = v;
	return 0;
}

int fg_ps_parse_header(const char *line, size_t len, struct fg_ps_header *h)
{
	struct fg_span tok, next;
	size_t pos = 0, after_pid = 0, comm_end = 0, slash = 0;
	bool found = false;
	int ntok = 0;

	/* the comm runs up to the first number (or PID/TID) followed by what perf puts after it */
	while (next_token(line, len, &pos, &tok)) {
		size_t sl;

		if (ntok++ == 0 || !is_pid_token(tok, &sl))
			continue;
		size_t peek = pos;
		if (next_token(line, len, &peek, &next) &&
		    (is_cpu_token(next) || is_time_token(next) || is_event_token(next))) {
			found = true;
			slash = sl;
			after_pid = pos;
			comm_end = (size_t)(tok.p - line);
			break;
		}
	}
	if (!found)
		return -EINVAL;

	memset(h, 0, sizeof(*h));
	size_t cs = 0;
	while (cs < comm_end && is_space(line[cs]))
		cs++;
	while (comm_end > cs && is_space(line[comm_end - 1]))
		comm_end--;
	h->comm.p = line + cs;
	h->comm.len = comm_end - cs;

	if (slash) {
		h->pid.p = tok.p;
		h->pid.len = slash;
		h->tid.p = tok.p + slash + 1;
		h->tid.len = tok.len - slash - 1;
	} else {
		h->tid = tok;
	}
	if (parse_u64(h->tid.p, h->tid.len, &h->tid_num) != 0)
		h->tid_num = UINT64_MAX;
	if (!slash || parse_u64(h->pid.p, h->pid.len, &h->pid_num) != 0)
		h->pid_num = h->tid_num;

	pos = after_pid;
	size_t before = pos;
	if (next_token(line, len, &pos, &tok) && is_cpu_token(tok))
		before = pos;
	pos = before;
	if (next_token(line, len, &pos, &tok) && is_time_token(tok))
		before = pos;
	pos = before;
	if (next_token(line, len, &pos, &tok) && all_digits(tok.p, tok.len)) {
		size_t peek = pos;

		/* a number is the period only when an event follows it */
		if (next_token(line, len, &peek, &next) && is_event_token(next)) {
			if (parse_u64(tok.p, tok.len, &h->period) != 0)
				return -ERANGE;
			h->has_period = true;
			before = pos;
		}
	}
	pos = before;
	if (next_token(line, len, &pos, &tok) && is_event_token(tok)) {
		h->event.p = tok.p;
		h->event.len = tok.len - 1;
		before = pos;
	}
	pos = before;
	while (pos < len && is_space(line[pos]))
		pos++;
	size_t end = len;
	while (end > pos && is_space(line[end - 1]))
		end--;
	h->rest.p = line + pos;
	h->rest.len = end - pos;
	return 0;
}

int fg_ps_parse_frame(const char *line, size_t len, struct fg_ps_frame *f)
{
	size_t i = 0, end = len, a0, open;
	int depth = 0;

	while (end > 0 && is_space(line[end - 1]))
		end--;
	while (i < end && is_space(line[i]))
		i++;
	a0 = i;
	while (i < end && is_hex(line[i]))
		i++;
	if (i == a0 || i == end || !is_space(line[i]))
		return -EINVAL;
	f->addr.p = line + a0;
	f->addr.len = i - a0;
	if (line[end - 1] != ')')
		return -EINVAL;
	/* the module is the parenthesised group at the end, parentheses inside it balanced */
	for (open = end; open > i; open--) {
		char c = line[open - 1];

		if (c == ')') {
			depth++;
		} else if (c == '(') {
			if (--depth == 0)
				break;
		}
	}
	if (depth != 0 || open <= i)
		return -EINVAL;
	open--; /* index of '(' */
	if (!is_space(line[open - 1]))
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
	if (k < s1 && k >= s0 + 3 && line[k - 1] == 'x' && line[k - 2] == '0' && line[k - 3] == '+')
		s1 = k - 3;
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
