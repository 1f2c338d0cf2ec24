// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-top's input: a stream folded piece by piece with fg_fold, and a cache of
 * what the samples seen before folded into.  See include/fg/topfeed.h.
 *
 * Where the stream may be cut.  fg_fold's perf-script reader keeps one state
 * across lines: the sample being read.  A header line ends the sample before
 * it, as the end of an input does; so cutting the text just before a line
 * that fg_fold takes for a header gives the same samples as reading it whole.
 * Looking for such lines only after a blank line (where samples end) keeps
 * the search cheap.  Folded stacks have no state across lines.  A bpftrace
 * map entry starts with '@' after a blank line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/hash.h"
#include "fg/perfscript.h"
#include "fg/topfeed.h"
#include "fg/util.h"

#define READ_SIZE (256 * 1024)
#define DETECT_BYTES (64 * 1024) /* as fg_fold: the bytes that decide the format */
#define DETECT_LINES 32
#define MAX_PENDING (8 << 20) /* a piece with no place to cut: fold it at a line end */
#define CACHE_MAX_BYTES (64 << 20)
#define MAX_LOGGED 10

enum result { RES_STACK, RES_OTHER_EVENT, RES_FILTERED, RES_FOLD };

/* what a sample with these frame lines and these naming fields folded into */
struct centry {
	struct centry *next;
	uint32_t id;  /* the stack's node */
	uint8_t what; /* enum result; RES_FOLD: fold the sample every time */
	uint32_t bad; /* lines fg_fold skipped in it */
	uint32_t hlen;
	char hkey[]; /* comm, event, rest of the header, [pid], [tid], NUL-separated */
};

struct fg_top_feed {
	struct fg_top *t;
	struct fg_fold_opts o;
	const char *name;
	fg_fold_log_fn log;
	void *log_ctx;
	struct fg_top_feed_stats st;
	char *event;

	char *buf;
	size_t cap, start, end; /* unprocessed bytes: [start, end) */
	uint64_t consumed;	/* bytes before buf[0] */
	uint64_t lines_before;	/* newlines before buf[0] */
	bool eof;
	int err; /* sticky */

	struct fg_hmap *cache; /* frame lines -> struct centry list */
	size_t cache_bytes;
	struct fg_buf hkey;

	/* the piece being folded, for messages */
	const char *piece;
	uint64_t logged;
	char *out;
	size_t outlen;
};

/* --- messages --- */

static void FG_PRINTF(2, 3) say(struct fg_top_feed *in, const char *fmt, ...)
{
	struct fg_buf b = FG_BUF_INIT;
	va_list ap;

	if (!in->log)
		return;
	va_start(ap, fmt);
	fg_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	in->log(in->log_ctx, b.data);
	fg_buf_release(&b);
}

static uint64_t count_newlines(const char *p, size_t n)
{
	uint64_t c = 0;
	size_t i = 0;

#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n');

	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));

		c += (uint64_t)__builtin_popcount(
		    (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)));
	}
#endif
	for (; i < n; i++)
		c += p[i] == '\n';
	return c;
}

/*
 * fg_fold's messages name the line within the piece ("NAME:LINE: ..."): make
 * that the line of the input, and keep to MAX_LOGGED bad-line messages.
 */
static void fold_log(void *ctx, const char *msg)
{
	struct fg_top_feed *in = ctx;
	size_t nl = strlen(in->name), d = nl + 1;
	uint64_t line = 0;

	if (strstr(msg, ": binary input, not text"))
		return; /* fold_piece says it */
	if (strncmp(msg, in->name, nl) != 0 || msg[nl] != ':' || msg[d] < '0' || msg[d] > '9') {
		say(in, "%s", msg);
		return;
	}
	while (msg[d] >= '0' && msg[d] <= '9')
		line = line * 10 + (uint64_t)(msg[d++] - '0');
	if (msg[d] != ':') {
		say(in, "%s", msg);
		return;
	}
	if (strstr(msg + d, "more bad lines"))
		return; /* said once, below, for the whole input */
	if (++in->logged > MAX_LOGGED) {
		if (in->logged == MAX_LOGGED + 1)
			say(in, "%s: more bad lines; not showing them", in->name);
		return;
	}
	line += in->lines_before + count_newlines(in->buf, (size_t)(in->piece - in->buf));
	say(in, "%s:%llu%s", in->name, (unsigned long long)line, msg + d);
}

/* --- folding a piece --- */

static void drop_cache(struct fg_top_feed *in)
{
	if (!in->cache)
		return;
	for (size_t i = 0; i < fg_hmap_count(in->cache); i++) {
		struct centry *c = fg_hmap_at(in->cache, i)->val.p;

		while (c) {
			struct centry *next = c->next;

			free(c);
			c = next;
		}
	}
	fg_hmap_free(in->cache);
	in->cache = NULL;
	in->cache_bytes = 0;
}

struct folded_piece {
	uint64_t samples, other_events, filtered, bad_lines;
	size_t stacks;
	uint32_t id;
	uint64_t weight;
};

/*
 * Fold data[0, len) with fg_fold and add its stacks to the model; a NUL byte
 * past the bytes fg_fold looks at for binary input makes the piece bad lines.
 */
static int fold_piece(struct fg_top_feed *in, const char *data, size_t len,
		      const struct fg_ps_header *h, struct folded_piece *res)
{
	struct fg_fold_opts o = in->o;
	struct fg_fold *f;
	const struct fg_fold_stats *st;
	FILE *fp;
	int r;

	memset(res, 0, sizeof(*res));
	/*
	 * The event.  fg_fold folds the first one it sees unless told which: a
	 * piece that starts with a sample of that event gets the same choice
	 * untold.  Told, fg_fold compares names with their modifiers when the
	 * name given looks like it has some, so that is the way only for the
	 * other pieces (where the two ways differ only for names such as
	 * "x:k:u", which stay "x:k:u" once without modifiers).
	 */
	if (in->event && !in->o.event_filter &&
	    !(h && h->event.len &&
	      fg_ps_event_base_len(h->event.p, h->event.len) == strlen(in->event) &&
	      memcmp(h->event.p, in->event, strlen(in->event)) == 0))
		o.event_filter = in->event;
	in->piece = data;
	f = fg_fold_new(&o, fold_log, in);
	r = fg_fold_read_mem(f, data, len, in->name);
	st = fg_fold_stats(f);
	if (!in->event && st->event) {
		in->event = fg_xstrdup(st->event);
		in->st.event = in->event;
	}
	res->samples = st->samples;
	res->other_events = st->other_events;
	res->filtered = st->filtered;
	res->bad_lines = st->bad_lines;
	if (r == -EMEDIUMTYPE) {
		const char *nul = memchr(data, '\0', len);
		uint64_t at = in->consumed + (uint64_t)((nul ? nul : data) - in->buf);
		uint64_t line =
		    in->lines_before + count_newlines(in->buf, (size_t)(data - in->buf)) + 1;

		if (at < DETECT_BYTES) {
			/* where fg_fold looks: the input is not text */
			say(in,
			    "%s: binary input, not text (records from fg-sample?); run it through "
			    "fg-sym first: fg-sym < FILE | fg-top",
			    in->name);
			goto out;
		}
		/* a NUL byte further on, which fg_fold would take for text: skip the lines */
		uint64_t n = count_newlines(data, len) + (len && data[len - 1] != '\n');

		memset(res, 0, sizeof(*res));
		res->bad_lines = n;
		if (++in->logged <= MAX_LOGGED)
			say(in, "%s:%llu: binary data; %llu line%s skipped", in->name,
			    (unsigned long long)line, (unsigned long long)n, n == 1 ? "" : "s");
		r = 0;
		goto out;
	}
	if (r < 0)
		goto out;
	if (st->columns == 2) {
		say(in, "%s: a differential profile (two count columns); fg-top shows one profile",
		    in->name);
		r = -EINVAL;
		goto out;
	}
	/* fg_fold's output, "STACK COUNT" a line */
	fp = open_memstream(&in->out, &in->outlen);
	if (!fp)
		fg_die("open_memstream");
	r = fg_fold_write(f, fp);
	if (fclose(fp) != 0 || r < 0)
		fg_die("cannot write folded stacks to memory");
	r = fg_top_add_folded(in->t, in->out, in->outlen, &res->stacks, &res->id, &res->weight);
	if (r == -E2BIG)
		say(in, "%s: more than 2^31 distinct frames", in->name);
	else if (r == -EOVERFLOW)
		say(in, "%s: the count of a stack overflows 64 bits", in->name);
	else if (r == -EINVAL)
		fg_die("fg_fold wrote a line that is not 'STACK COUNT'");
	free(in->out);
	in->out = NULL;
out:
	in->st.samples += res->samples;
	in->st.other_events += res->other_events;
	in->st.filtered += res->filtered;
	in->st.bad_lines += res->bad_lines;
	in->st.folds++;
	fg_fold_free(f);
	return r;
}

/* --- perf script --- */

/*
 * Whether fg_fold takes the line for a sample's header whatever its state
 * (see perf_line in lib/fold.c): a line that starts with a tab is a frame
 * of the sample before, or a line of a sample skipped, when there is one.
 */
static bool is_header(const char *line, size_t len, struct fg_ps_header *h)
{
	if (len && line[len - 1] == '\r')
		len--;
	if (len == 0 || line[0] == '#' || line[0] == '\t')
		return false;
	return fg_ps_parse_header(line, len, h) == 0;
}

/* the first empty line in p[0, n): the position of its '\n', or NULL */
static const char *find_blank(const char *p, size_t n)
{
	size_t i = 0;

	if (n < 2)
		return NULL;
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n');

	for (; i + 17 <= n; i += 16) {
		__m128i a = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(const void *)(p + i + 1));
		unsigned m = (unsigned)_mm_movemask_epi8(
		    _mm_and_si128(_mm_cmpeq_epi8(a, nl), _mm_cmpeq_epi8(b, nl)));

		if (m)
			return p + i + 1 + __builtin_ctz(m);
	}
#endif
	for (; i + 1 < n; i++)
		if (p[i] == '\n' && p[i + 1] == '\n')
			return p + i + 1;
	return NULL;
}

/* after the last line of blanks ("", spaces, tabs, '\r') in [p, end), else the last line end */
static const char *last_blank(const char *p, const char *end)
{
	const char *e = end, *nl;

	while (e > p && (nl = memrchr(p, '\n', (size_t)(e - p))) != NULL) {
		const char *ls = memrchr(p, '\n', (size_t)(nl - p));
		bool blank = true;

		ls = ls ? ls + 1 : p;
		for (const char *c = ls; c < nl && blank; c++)
			blank = *c == ' ' || *c == '\t' || *c == '\r';
		if (blank)
			return nl + 1;
		e = ls;
	}
	nl = memrchr(p, '\n', (size_t)(end - p));
	return nl ? nl + 1 : end;
}

static uint64_t weight_of(const struct fg_top_feed *in, const struct fg_ps_header *h)
{
	/* fg_fold's rule; a cached result is used only where the fold agreed with it */
	return in->o.count_samples ? 1 : h->has_period ? h->period : 1;
}

static void add_key_field(struct fg_buf *b, struct fg_span s)
{
	fg_buf_add(b, s.p, s.len);
	fg_buf_addch(b, '\0');
}

/* the header fields fg_fold's names can depend on */
static void header_key(struct fg_top_feed *in, const struct fg_ps_header *h)
{
	struct fg_buf *b = &in->hkey;

	fg_buf_reset(b);
	add_key_field(b, h->comm);
	add_key_field(b, h->event);
	add_key_field(b, h->rest);
	if (in->o.include_pid || in->o.include_tid || in->o.n_only_pids)
		add_key_field(b, h->pid);
	if (in->o.include_tid)
		add_key_field(b, h->tid);
}

static int apply(struct fg_top_feed *in, const struct centry *c, uint64_t w)
{
	int r = 0;

	in->st.bad_lines += c->bad;
	switch (c->what) {
	case RES_STACK:
		in->st.samples++;
		in->st.hits++;
		if ((r = fg_top_add(in->t, c->id, w)) == -EOVERFLOW)
			say(in, "%s: the count of a stack overflows 64 bits", in->name);
		break;
	case RES_OTHER_EVENT:
		in->st.other_events++;
		in->st.hits++;
		break;
	case RES_FILTERED:
		in->st.filtered++;
		in->st.hits++;
		break;
	}
	return r;
}

/* one sample: data[0, len) from its header line to the blank line after it */
static int perf_sample(struct fg_top_feed *in, const char *data, size_t len,
		       const struct fg_ps_header *h)
{
	const char *nl = memchr(data, '\n', len);
	const char *fr = nl ? nl + 1 : data + len, *end = data + len;
	struct fg_hent *e;
	struct centry *c;
	struct folded_piece res;
	bool ins;
	int r;

	while (end > fr && end[-1] == '\n')
		end--;
	size_t flen = (size_t)(end - fr);
	header_key(in, h);
	e = in->cache ? fg_hmap_get(in->cache, fr, flen) : NULL;
	for (c = e ? e->val.p : NULL; c; c = c->next) {
		if (c->hlen == in->hkey.len && memcmp(c->hkey, in->hkey.data, c->hlen) == 0) {
			if (c->what != RES_FOLD)
				return apply(in, c, weight_of(in, h));
			break;
		}
	}
	r = fold_piece(in, data, len, h, &res);
	if (r < 0 || c)
		return r;

	/* remember the result when it is one sample's, and its weight is the header's */
	uint8_t what = RES_FOLD;
	if (res.samples + res.other_events + res.filtered == 1) {
		if (res.samples == 1 && res.stacks == 1 && res.weight == weight_of(in, h))
			what = RES_STACK;
		else if (res.other_events == 1)
			what = RES_OTHER_EVENT;
		else if (res.filtered == 1)
			what = RES_FILTERED;
	}
	size_t cost = sizeof(*c) + in->hkey.len + flen + 64;
	if (in->cache_bytes + cost > CACHE_MAX_BYTES) {
		drop_cache(in);
		in->st.cache_resets++;
	}
	if (!in->cache)
		in->cache = fg_hmap_new(4096);
	e = fg_hmap_upsert(in->cache, fr, flen, &ins);
	c = fg_xmalloc(sizeof(*c) + in->hkey.len);
	c->what = what;
	c->id = res.id;
	c->bad = res.bad_lines > UINT32_MAX ? UINT32_MAX : (uint32_t)res.bad_lines;
	c->hlen = (uint32_t)in->hkey.len;
	memcpy(c->hkey, in->hkey.data, in->hkey.len);
	c->next = e->val.p;
	e->val.p = c;
	in->cache_bytes += cost;
	return 0;
}

/* a piece that does not start with a header (what comes before the first sample) */
static int perf_piece(struct fg_top_feed *in, const char *data, size_t len)
{
	struct fg_ps_header h;
	const char *nl = memchr(data, '\n', len);

	if (is_header(data, nl ? (size_t)(nl - data) : len, &h))
		return perf_sample(in, data, len, &h);
	struct folded_piece res;
	return fold_piece(in, data, len, NULL, &res);
}

static int process_perf(struct fg_top_feed *in)
{
	const char *buf = in->buf, *end = in->buf + in->end;
	struct fg_ps_header h, next;
	bool have = false; /* h describes the piece's first line */

	while (in->start < in->end) {
		const char *piece = buf + in->start, *q = piece, *cut = NULL;
		bool at_header = false;
		int r;

		for (;;) {
			const char *b = find_blank(q, (size_t)(end - q)), *nx, *nl;

			if (!b)
				break;
			/* the next line that is not empty or a comment */
			for (nx = b + 1, nl = NULL; nx < end;) {
				if (*nx == '\n') {
					nx++;
					continue;
				}
				nl = memchr(nx, '\n', (size_t)(end - nx));
				if (!nl || *nx != '#')
					break;
				nx = nl + 1;
				nl = NULL;
			}
			if (!nl)
				break; /* the next line is not whole yet */
			if (is_header(nx, (size_t)(nl - nx), &next)) {
				cut = nx;
				at_header = true;
				break;
			}
			q = nx;
		}
		if (!cut) {
			if (in->eof) {
				cut = end;
			} else if ((size_t)(end - piece) > MAX_PENDING) {
				/* no sample is that long: fold up to its last blank line */
				cut = last_blank(piece, end);
			} else {
				return 0;
			}
		}
		if (have)
			r = perf_sample(in, piece, (size_t)(cut - piece), &h);
		else
			r = perf_piece(in, piece, (size_t)(cut - piece));
		if (r < 0)
			return r;
		in->start = (size_t)(cut - buf);
		h = next;
		have = at_header;
	}
	return 0;
}

/* --- folded stacks and bpftrace --- */

/* trailing " DIGITS" of p[0, *n): true, and *n left before the space */
static bool trailing_number(const char *p, size_t *n)
{
	size_t d = *n;

	while (d > 0 && p[d - 1] >= '0' && p[d - 1] <= '9')
		d--;
	if (d == *n || d == 0 || p[d - 1] != ' ')
		return false;
	*n = d - 1;
	return true;
}

/*
 * Whether fg_fold, reading this line first, takes its input for a one-count
 * profile (lib/fold.c folded_line: trailing blanks dropped, a count after a
 * space, and no second one before it).  A piece that starts with such a line
 * is read as the whole input was.
 */
static bool one_count_line(const char *p, size_t n)
{
	while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	if (!trailing_number(p, &n))
		return false;
	while (n && p[n - 1] == ' ')
		n--;
	return !trailing_number(p, &n);
}

static int fold_to(struct fg_top_feed *in, const char *cut)
{
	const char *piece = in->buf + in->start;
	struct folded_piece res;
	int r = fold_piece(in, piece, (size_t)(cut - piece), NULL, &res);

	in->start = (size_t)(cut - in->buf);
	return r;
}

static int process_folded(struct fg_top_feed *in)
{
	const char *piece = in->buf + in->start, *end = in->buf + in->end;
	const char *last = end, *nl;

	if (in->eof)
		return fold_to(in, end);
	/* the start of the last whole line that fg_fold would read as one-count */
	while (last > piece && (nl = memrchr(piece, '\n', (size_t)(last - piece))) != NULL) {
		const char *ls = memrchr(piece, '\n', (size_t)(nl - piece));

		ls = ls ? ls + 1 : piece;
		if (ls > piece && one_count_line(ls, (size_t)(nl - ls)))
			return fold_to(in, ls);
		last = ls;
	}
	if ((size_t)(end - piece) > MAX_PENDING &&
	    (nl = memrchr(piece, '\n', (size_t)(end - piece))))
		return fold_to(in, nl + 1);
	return 0;
}

static int process_bpftrace(struct fg_top_feed *in)
{
	const char *piece = in->buf + in->start, *end = in->buf + in->end, *cut = NULL;
	const char *q = piece;

	if (in->eof)
		return fold_to(in, end);
	/* the last '@' line after a blank line after a line that closes an entry ("]:") */
	for (const char *b; (b = find_blank(q, (size_t)(end - q))) != NULL; q = b + 1) {
		const char *ls;

		if (b + 1 >= end || b[1] != '@')
			continue;
		ls = memrchr(piece, '\n', (size_t)(b - 1 - piece));
		ls = ls ? ls + 1 : piece;
		if (memmem(ls, (size_t)(b - 1 - ls), "]:", 2))
			cut = b + 1;
	}
	if (!cut && (size_t)(end - piece) > MAX_PENDING)
		cut = find_blank(piece, (size_t)(end - piece));
	return cut ? fold_to(in, cut) : 0;
}

/* --- the format --- */

/* a folded line as fg_fold's detection sees one: a count after a space */
static bool looks_folded(const char *p, size_t n)
{
	size_t d = n;

	while (d > 0 && p[d - 1] >= '0' && p[d - 1] <= '9')
		d--;
	return d < n && d > 0 && p[d - 1] == ' ';
}

/*
 * fg_fold's detection, on the lines of the input's first DETECT_BYTES: the
 * format, or FG_FOLD_AUTO while they have not come yet
 */
static enum fg_fold_input detect(const struct fg_top_feed *in)
{
	const char *p = in->buf + in->start, *end = in->buf + in->end;
	bool full = in->end - in->start >= DETECT_BYTES;
	int lines = 0;

	if (full)
		end = p + DETECT_BYTES;
	while (p < end && lines < DETECT_LINES) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n;

		if (!nl && full)
			break; /* a partial line at the end of what decides */
		if (!nl && !in->eof)
			return FG_FOLD_AUTO;
		n = (size_t)((nl ? nl : end) - p);
		while (n && (p[n - 1] == '\r' || p[n - 1] == ' '))
			n--;
		if (n && p[0] != '#') {
			lines++;
			if (lines == 1 &&
			    (p[0] == '@' || (n >= 10 && !memcmp(p, "Attaching ", 10))))
				return FG_FOLD_BPFTRACE;
			if (p[0] == ' ' || p[0] == '\t' || !looks_folded(p, n))
				return FG_FOLD_PERF;
		}
		p = nl ? nl + 1 : end;
	}
	if (lines < DETECT_LINES && !full && !in->eof)
		return FG_FOLD_AUTO;
	return lines ? FG_FOLD_FOLDED : FG_FOLD_PERF;
}

int fg_top_feed_process(struct fg_top_feed *in)
{
	int r;

	if (in->err)
		return in->err;
	if (in->start == in->end)
		return 0;
	if (in->st.input == FG_FOLD_AUTO) {
		in->st.input = in->o.input != FG_FOLD_AUTO ? in->o.input : detect(in);
		if (in->st.input == FG_FOLD_AUTO)
			return 0;
		in->o.input = in->st.input;
	}
	switch (in->st.input) {
	case FG_FOLD_FOLDED:
		r = process_folded(in);
		break;
	case FG_FOLD_BPFTRACE:
		r = process_bpftrace(in);
		break;
	default:
		r = process_perf(in);
		break;
	}
	return in->err = r;
}

int fg_top_feed_finish(struct fg_top_feed *in)
{
	in->eof = true;
	return fg_top_feed_process(in);
}

/* --- the buffer --- */

static void make_room(struct fg_top_feed *in, size_t want)
{
	if (in->start > 0 && in->cap - in->end < want) {
		in->lines_before += count_newlines(in->buf, in->start);
		in->consumed += in->start;
		memmove(in->buf, in->buf + in->start, in->end - in->start);
		in->end -= in->start;
		in->start = 0;
	}
	if (in->cap - in->end < want) {
		size_t cap = in->cap ? in->cap : READ_SIZE;

		while (cap - in->end < want)
			cap *= 2;
		in->buf = fg_xrealloc(in->buf, cap);
		in->cap = cap;
	}
}

ssize_t fg_top_feed_fill(struct fg_top_feed *in, int fd)
{
	ssize_t n;

	make_room(in, READ_SIZE);
	do
		n = read(fd, in->buf + in->end, in->cap - in->end);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	in->end += (size_t)n;
	in->st.bytes += (uint64_t)n;
	return n;
}

void fg_top_feed_append(struct fg_top_feed *in, const char *data, size_t len)
{
	make_room(in, len);
	memcpy(in->buf + in->end, data, len);
	in->end += len;
	in->st.bytes += len;
}

/* --- the object --- */

struct fg_top_feed *fg_top_feed_new(struct fg_top *t, const struct fg_fold_opts *opts,
				    const char *name, fg_fold_log_fn log, void *ctx)
{
	struct fg_top_feed *in = fg_xcalloc(1, sizeof(*in));

	in->t = t;
	in->o = *opts;
	in->name = name;
	in->log = log;
	in->log_ctx = ctx;
	in->st.input = FG_FOLD_AUTO;
	if (opts->event_filter)
		in->st.event = opts->event_filter;
	return in;
}

void fg_top_feed_free(struct fg_top_feed *in)
{
	if (!in)
		return;
	drop_cache(in);
	fg_buf_release(&in->hkey);
	free(in->event);
	free(in->buf);
	free(in);
}

const struct fg_top_feed_stats *fg_top_feed_stats(const struct fg_top_feed *in)
{
	struct fg_top_feed_stats *st = (struct fg_top_feed_stats *)&in->st;

	st->cache_bytes = in->cache_bytes + (in->cache ? fg_hmap_memory(in->cache) : 0);
	return st;
}
