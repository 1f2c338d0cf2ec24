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
#include "fg/folded.h"
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

/*
 * What a sample folded into, packed in a cache's value: the stack's node, the
 * lines fg_fold skipped in it, and what it was (RES_FOLD: fold it every time).
 */
enum result { RES_STACK = 1, RES_OTHER_EVENT, RES_FILTERED, RES_FOLD };
#define PACK(what, bad, id) ((uint64_t)(id) << 32 | (uint64_t)(bad) << 8 | (uint64_t)(what))
#define WHAT(v) ((enum result)((v)&0xff))
#define BAD(v) ((uint32_t)((v) >> 8) & 0xffffff)
#define ID(v) ((uint32_t)((v) >> 32))
/* in the `hot` cache: the stack's node, the sample's frame lines, what it was */
#define HOT_PACK(what, frames, id)                                                                 \
	((uint64_t)(id) << 32 | (uint64_t)(frames) << 8 | (uint64_t)(what))
#define HOT_WHAT(v) WHAT(v)
#define HOT_FRAMES(v) BAD(v)
#define HOT_ID(v) ID(v)

/* a bounded map from keys to packed results, emptied when full */
struct cache {
	struct fg_hmap *map;
	size_t bytes;
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
	uint64_t lineno;	/* newlines before buf[start] */
	bool eof;
	int err; /* sticky */

	/*
	 * What samples seen before folded into.  `lines`: a frame line, as it is,
	 * to its frame's number in `frames` (its symbol and module, all fg_fold
	 * names a frame from when fg-top does not ask for addresses or source
	 * lines).  `stacks`: a sample's naming fields and its frames' numbers to
	 * what it folded into.  `exact`: the same for a sample with lines that are
	 * not frames (bad lines, source lines), by its lines as they are.
	 */
	struct cache lines, frames, stacks;
	struct cache exact; /* samples with other lines: their lines as they are */
	struct cache hot;   /* the first frame's names and the other lines as they are */
	struct fg_buf skey, fkey, hkey2;
	uint32_t *ids; /* the frames of the sample being read */
	size_t nids, aids;

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
	const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();

	while (i + 16 <= n) {
		/* byte counters, summed before any can pass 255 */
		__m128i acc = zero;
		size_t stop = n - i > 16 * 255 ? i + 16 * 255 : n;

		for (; i + 16 <= stop; i += 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));

			acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(v, nl));
		}
		__m128i sum = _mm_sad_epu8(acc, zero);
		c += (uint64_t)_mm_cvtsi128_si64(sum) +
		     (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(sum, sum));
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
	line += in->lineno;
	say(in, "%s:%llu%s", in->name, (unsigned long long)line, msg + d);
}

/* --- folding a piece --- */

static void cache_clear(struct cache *c)
{
	fg_hmap_free(c->map);
	c->map = NULL;
	c->bytes = 0;
}

static uint64_t cache_get(const struct cache *c, const void *key, size_t len)
{
	struct fg_hent *e = c->map ? fg_hmap_get(c->map, key, len) : NULL;

	return e ? e->val.u : 0;
}

static void cache_put(struct cache *c, const void *key, size_t len, uint64_t v)
{
	if (!c->map)
		c->map = fg_hmap_new(4096);
	fg_hmap_upsert(c->map, key, len, NULL)->val.u = v;
	c->bytes += len + 64;
}

struct folded_piece {
	uint64_t samples, other_events, filtered, bad_lines;
	bool clean; /* fg_fold counted nothing else in it (side-band, lines perf adds, ...) */
	size_t stacks;
	uint32_t id;
	double weight;
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
	res->clean = !st->refused && !st->sideband && !st->extra_lines && !st->long_lines &&
		     !st->damaged && !st->not_inlined;
	in->st.refused += st->refused;
	in->st.sideband += st->sideband;
	in->st.extra_lines += st->extra_lines;
	in->st.long_lines += st->long_lines;
	in->st.damaged += st->damaged;
	in->st.lost_records += st->lost_records;
	if (__builtin_add_overflow(in->st.lost, st->lost, &in->st.lost))
		in->st.lost = UINT64_MAX;
	if (r == -EMEDIUMTYPE) {
		const char *nul = memchr(data, '\0', len);
		uint64_t at = in->consumed + (uint64_t)((nul ? nul : data) - in->buf);
		uint64_t line = in->lineno + 1;

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
 * (see perf_line in lib/fold.c): a "strong" header (with a CPU, a time or an
 * event).  A line that starts with a tab is a frame of the sample before, or
 * a line of a sample skipped, when there is one; a weak header is one only
 * when a frame follows, and not after a strong one.
 */
static bool is_header(const char *line, size_t len, struct fg_ps_header *h)
{
	if (len && line[len - 1] == '\r')
		len--;
	if (len == 0 || line[0] == '#' || line[0] == '\t')
		return false;
	return fg_ps_parse_header(line, len, h) == 0 && !h->weak;
}

#ifdef __SSE2__
/* bit i set where p[i] is a newline, for 64 bytes */
static inline uint64_t newlines64(const char *p)
{
	const __m128i nl = _mm_set1_epi8('\n');
	uint64_t m = 0;

	for (int k = 0; k < 4; k++) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * k));

		m |= (uint64_t)(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)) << (16 * k);
	}
	return m;
}
#endif

/* the first empty line in p[0, n): the position of its '\n', or NULL */
static const char *find_blank(const char *p, size_t n)
{
	size_t i = 0;

#ifdef __SSE2__
	uint64_t last = 0; /* the byte before this block is a newline */

	for (; i + 64 <= n; i += 64) {
		uint64_t m = newlines64(p + i), pairs = m & (m >> 1 | (uint64_t)1 << 63);

		if (last && (m & 1))
			return p + i;
		pairs &= m >> 1;
		if (pairs)
			return p + i + __builtin_ctzll(pairs) + 1;
		last = m >> 63;
	}
#endif
	for (i = i ? i : 1; i < n; i++)
		if (p[i] == '\n' && p[i - 1] == '\n')
			return p + i;
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
	uint32_t n = (uint32_t)s.len;

	fg_buf_add(b, &n, sizeof(n));
	fg_buf_add(b, s.p, s.len);
}

/* a sample's key starts with the header fields fg_fold's names can depend on */
static void start_key(struct fg_top_feed *in, const struct fg_ps_header *h)
{
	struct fg_buf *b = &in->skey;

	fg_buf_reset(b);
	add_key_field(b, h->comm);
	add_key_field(b, h->event);
	add_key_field(b, h->rest);
	if (in->o.include_pid || in->o.include_tid || in->o.n_only_pids)
		add_key_field(b, h->pid);
	if (in->o.include_tid)
		add_key_field(b, h->tid);
}

static void clear_caches(struct fg_top_feed *in)
{
	cache_clear(&in->hot);
	cache_clear(&in->exact);
	cache_clear(&in->lines);
	cache_clear(&in->frames);
	cache_clear(&in->stacks);
	in->st.cache_resets++;
}

/*
 * The number of a frame line: from 1, for a frame fg_fold names from its
 * symbol and module alone (the line starts with a tab, and parses); 0 for
 * other lines, and when the caches had to be emptied (which renumbers).
 */
static uint32_t frame_id(struct fg_top_feed *in, const char *line, size_t len)
{
	uint64_t id = cache_get(&in->lines, line, len);

	if (!id) {
		struct fg_ps_frame fr;

		if (len == 0 || line[0] != '\t' || line[len - 1] == '\r' ||
		    fg_ps_parse_frame(line, len, &fr) != 0) {
			id = UINT32_MAX; /* no frame: the sample is folded */
		} else {
			fg_buf_reset(&in->fkey);
			add_key_field(&in->fkey, fr.sym);
			fg_buf_add(&in->fkey, fr.module.p, fr.module.len);
			id = cache_get(&in->frames, in->fkey.data, in->fkey.len);
			if (!id) {
				if (in->frames.bytes + in->fkey.len + 64 > CACHE_MAX_BYTES / 8) {
					clear_caches(in);
					return 0;
				}
				id = in->frames.map ? fg_hmap_count(in->frames.map) + 1 : 1;
				cache_put(&in->frames, in->fkey.data, in->fkey.len, id);
			}
		}
		if (in->lines.bytes + len + 64 > CACHE_MAX_BYTES / 8)
			cache_clear(&in->lines);
		cache_put(&in->lines, line, len, id);
	}
	return id == UINT32_MAX ? 0 : (uint32_t)id;
}

/* Add a line of a sample to its frames: false when it is not a frame (see frame_id). */
static bool add_frame(struct fg_top_feed *in, const char *line, size_t len)
{
	uint32_t id = frame_id(in, line, len);

	if (!id)
		return false;
	FG_ALLOC_GROW(in->ids, in->nids + 1, in->aids);
	in->ids[in->nids++] = id;
	return true;
}

static int apply(struct fg_top_feed *in, uint64_t v, double w)
{
	int r = 0;

	in->st.bad_lines += BAD(v);
	in->st.hits++;
	switch (WHAT(v)) {
	case RES_STACK:
		in->st.samples++;
		r = fg_top_add(in->t, ID(v), w);
		break;
	case RES_OTHER_EVENT:
		in->st.other_events++;
		break;
	default:
		in->st.filtered++;
		break;
	}
	return r;
}

/* one sample, data[0, len), whose key in cache `c` is in->skey */
static int perf_sample(struct fg_top_feed *in, struct cache *c, const char *data, size_t len,
		       const struct fg_ps_header *h)
{
	uint64_t w = weight_of(in, h), v = cache_get(c, in->skey.data, in->skey.len);
	struct folded_piece res;
	int r;

	if (v && WHAT(v) != RES_FOLD)
		return apply(in, v, w);
	r = fold_piece(in, data, len, h, &res);
	if (r < 0 || v)
		return r;

	/* keep the result when it is one sample's, and its weight is the header's */
	enum result what = RES_FOLD;
	if (res.clean && res.samples + res.other_events + res.filtered == 1) {
		if (res.samples == 1 && res.stacks == 1 && res.weight == w)
			what = RES_STACK;
		else if (res.other_events == 1)
			what = RES_OTHER_EVENT;
		else if (res.filtered == 1)
			what = RES_FILTERED;
	}
	v = PACK(what, res.bad_lines > 0xffffff ? 0xffffff : res.bad_lines,
		 what == RES_STACK ? res.id : 0);
	if (c->bytes + in->skey.len + 64 > CACHE_MAX_BYTES / 4)
		clear_caches(in);
	else
		cache_put(c, in->skey.data, in->skey.len, v);
	return 0;
}

/*
 * The common case, fast: a header, frame lines, a blank line, then the next
 * header.  By the `hot` cache first: the naming fields, the first frame's
 * symbol and module and the other frame lines as they are (the first frame's
 * address moves the most, the callers' return addresses least); then by every
 * frame's number (`stacks`); then by fg_fold.  Returns 1 with *cut, *lines
 * and *next set when the sample was read; 0 when it is not such a sample (the
 * slow path reads it); -EAGAIN when it is not all there yet; or an error.
 */
static int fast_sample(struct fg_top_feed *in, const char *piece, const char *end,
		       const struct fg_ps_header *h, struct fg_ps_header *next, const char **cut,
		       uint64_t *lines)
{
	const char *hnl = memchr(piece, '\n', (size_t)(end - piece)), *b, *nx, *nnl = NULL;
	uint64_t extra = 1, gen = in->st.cache_resets, w, v;

	if (!hnl)
		return in->eof ? 0 : -EAGAIN;
	b = find_blank(hnl, (size_t)(end - hnl));
	if (!b)
		return in->eof || (size_t)(end - piece) > MAX_PENDING ? 0 : -EAGAIN;
	/* after the blank line: more blank lines and comments, then a header */
	for (nx = b + 1; nx < end;) {
		if (*nx == '\n') {
			nx++;
			extra++;
			continue;
		}
		nnl = memchr(nx, '\n', (size_t)(end - nx));
		if (!nnl || *nx != '#')
			break;
		nx = nnl + 1;
		extra++;
		nnl = NULL;
	}
	if (!nnl)
		return in->eof || (size_t)(end - piece) > MAX_PENDING ? 0 : -EAGAIN;
	if (!is_header(nx, (size_t)(nnl - nx), next))
		return 0;

	/* the frames: [fr, b), each line ending in '\n'; the first by its symbol and module */
	const char *fr = hnl + 1, *leaf_end = fr < b ? memchr(fr, '\n', (size_t)(b - fr)) : fr;
	struct fg_ps_frame leaf = {{NULL, 0}, {NULL, 0}, 0, {NULL, 0}};

	if (fr < b && (fr[0] != '\t' || leaf_end[-1] == '\r' ||
		       fg_ps_parse_frame(fr, (size_t)(leaf_end - fr), &leaf) != 0))
		return 0;
	w = weight_of(in, h);
	start_key(in, h);
	fg_buf_reset(&in->hkey2);
	fg_buf_add(&in->hkey2, in->skey.data, in->skey.len);
	fg_buf_addch(&in->hkey2, fr < b);
	add_key_field(&in->hkey2, leaf.sym);
	add_key_field(&in->hkey2, leaf.module);
	if (fr < b)
		fg_buf_add(&in->hkey2, leaf_end + 1, (size_t)(b - leaf_end - 1));
	v = cache_get(&in->hot, in->hkey2.data, in->hkey2.len);
	if (v) {
		*cut = nx;
		*lines = 1 + HOT_FRAMES(v) + extra;
		return apply(in, PACK(HOT_WHAT(v), 0, HOT_ID(v)), w) < 0 ? -EINVAL : 1;
	}

	/* every frame's number */
	in->nids = 0;
	for (const char *p = fr, *nl; p < b; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(b - p));
		if (!add_frame(in, p, (size_t)(nl - p)))
			return 0;
	}
	if (in->st.cache_resets != gen)
		return 0; /* renumbered on the way */
	fg_buf_add(&in->skey, in->ids, in->nids * sizeof(*in->ids));
	*cut = nx;
	*lines = 1 + in->nids + extra;
	v = cache_get(&in->stacks, in->skey.data, in->skey.len);
	if (!v || WHAT(v) == RES_FOLD) {
		int r = perf_sample(in, &in->stacks, piece, (size_t)(nx - piece), h);

		if (r < 0)
			return r;
		v = cache_get(&in->stacks, in->skey.data, in->skey.len);
		if (!v || WHAT(v) == RES_FOLD || in->st.cache_resets != gen)
			return 1;
	} else if (apply(in, v, w) < 0) {
		return -EINVAL;
	}
	if (in->nids < (1 << 24)) {
		if (in->hot.bytes + in->hkey2.len + 64 > CACHE_MAX_BYTES / 4)
			cache_clear(&in->hot);
		cache_put(&in->hot, in->hkey2.data, in->hkey2.len,
			  HOT_PACK(WHAT(v), in->nids, ID(v)));
	}
	return 1;
}

/*
 * Cut the text into samples: each goes from its header to the next line
 * that fg_fold takes for a header after a blank line.  A sample of frames
 * only goes by its key; the rest (what comes before the first header, lines
 * that are no frames) to fg_fold as it is.
 */
static int process_perf(struct fg_top_feed *in)
{
	const char *buf = in->buf, *end = in->buf + in->end;
	struct fg_ps_header h, next;
	bool have = false; /* h describes the piece's first line */

	while (in->start < in->end) {
		const char *piece = buf + in->start, *p = piece, *nl, *cut = NULL;
		bool at_header = false, simple = have, blank = false;
		uint64_t lines = 0; /* newlines in [piece, p) */
		int r;

		in->nids = 0;
		if (!have) {
			/* where the last call stopped, or the input's first line */
			nl = memchr(piece, '\n', (size_t)(end - piece));
			if (!nl && !in->eof)
				return 0;
			have = simple = is_header(piece, (size_t)((nl ? nl : end) - piece), &h);
		}
		if (have) {
			r = fast_sample(in, piece, end, &h, &next, &cut, &lines);
			if (r == -EAGAIN)
				return 0;
			if (r < 0)
				return r;
			if (r == 1) {
				in->lineno += lines;
				in->start = (size_t)(cut - buf);
				h = next;
				continue;
			}
			in->nids = 0;
			cut = NULL;
			lines = 0;
		}
		while (p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
			size_t n = (size_t)(nl - p);

			if (lines == 0) {
				/* the header, or what comes before the first one */
			} else if (n == 0) {
				blank = true;
			} else if (blank && p[0] == '#') {
				/* a comment between samples */
			} else if (blank && is_header(p, n, &next)) {
				cut = p;
				at_header = true;
				break;
			} else if (blank) {
				simple =
				    false; /* a line after the sample: fg_fold says what it is */
				blank = false;
			} else if (simple) {
				simple = add_frame(in, p, n);
			}
			p = nl + 1;
			lines++;
		}
		if (!cut) {
			if (in->eof) {
				cut = end;
				simple =
				    simple && p == end; /* a last line without its end: fold it */
			} else if ((size_t)(end - piece) > MAX_PENDING) {
				/* no sample is that long: fold up to its last blank line */
				cut = last_blank(piece, end);
				lines = count_newlines(piece, (size_t)(cut - piece));
				simple = false;
			} else {
				return 0;
			}
		}
		if (simple) {
			start_key(in, &h);
			fg_buf_add(&in->skey, in->ids, in->nids * sizeof(*in->ids));
			r = perf_sample(in, &in->stacks, piece, (size_t)(cut - piece), &h);
		} else if (have && cut - piece <= CACHE_MAX_BYTES / 64) {
			/* the lines after the header as they are, to the last that is not empty */
			const char *fl = memchr(piece, '\n', (size_t)(cut - piece)), *e = cut;

			fl = fl ? fl + 1 : cut;
			while (e > fl && e[-1] == '\n')
				e--;
			start_key(in, &h);
			fg_buf_add(&in->skey, fl, (size_t)(e - fl));
			r = perf_sample(in, &in->exact, piece, (size_t)(cut - piece), &h);
		} else {
			struct folded_piece res;

			r = fold_piece(in, piece, (size_t)(cut - piece), have ? &h : NULL, &res);
		}
		if (r < 0)
			return r;
		in->lineno += lines;
		in->start = (size_t)(cut - buf);
		h = next;
		have = at_header;
	}
	return 0;
}

/* --- folded stacks and bpftrace --- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/*
 * Whether fg_fold, reading this line first, takes its input for a one-count
 * profile (lib/fold.c folded_line: trailing blanks dropped, the line parsed
 * as lib/folded.c parses it, blanks between two counts still making two, and
 * every count within 64 bits).  A piece that starts with such a line is read
 * as the whole input was.
 */
static bool one_count_line(const char *p, size_t n)
{
	struct fg_folded fl, inner;
	struct fg_count c;
	size_t k;

	while (n && is_blank(p[n - 1]))
		n--;
	if (n == 0 || fg_folded_parse(p, n, &fl) != 0 || fl.diff)
		return false;
	for (k = fl.stack_len; k && is_blank(p[k - 1]); k--)
		;
	if (k < fl.stack_len && fg_folded_parse(p, k, &inner) == 0)
		return false;
	return fg_count_parse(fl.count_text, fl.count_text_len, &c) == 0;
}

static int fold_to(struct fg_top_feed *in, const char *cut)
{
	const char *piece = in->buf + in->start;
	struct folded_piece res;
	int r = fold_piece(in, piece, (size_t)(cut - piece), NULL, &res);

	in->lineno += count_newlines(piece, (size_t)(cut - piece));
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
	if ((size_t)(end - piece) > MAX_PENDING) {
		/* a line this long: fg_fold takes what there is as a line */
		nl = memrchr(piece, '\n', (size_t)(end - piece));
		return fold_to(in, nl ? nl + 1 : end);
	}
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
		cut = last_blank(piece, end);
	return cut ? fold_to(in, cut) : 0;
}

/* --- the format --- */

/* a folded line as fg_fold's detection sees one (lib/fold.c is_folded_line) */
static bool looks_folded(const char *p, size_t n)
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

/*
 * fg_fold's detection (lib/fold.c detect), on the first 32 lines that are
 * neither blank nor comments, however long: the format, or FG_FOLD_AUTO
 * while they have not all come
 */
static enum fg_fold_input detect(const struct fg_top_feed *in)
{
	const char *p = in->buf + in->start, *end = in->buf + in->end;
	int folded = 0, lines = 0;

	while (p < end && lines < DETECT_LINES) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		if (p[0] == ' ' || p[0] == '\t')
			return FG_FOLD_PERF; /* an indented line: a frame */
		if (!nl && !in->eof)
			return FG_FOLD_AUTO;
		while (n && is_blank(p[n - 1]))
			n--;
		if (n && p[0] != '#') {
			lines++;
			if (lines == 1 &&
			    (p[0] == '@' || (n >= 10 && !memcmp(p, "Attaching ", 10))))
				return FG_FOLD_BPFTRACE;
			if (!looks_folded(p, n))
				return FG_FOLD_PERF;
			folded++;
		}
		p = nl ? nl + 1 : end;
	}
	if (lines < DETECT_LINES && !in->eof)
		return FG_FOLD_AUTO;
	return folded ? FG_FOLD_FOLDED : FG_FOLD_PERF;
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
	cache_clear(&in->hot);
	cache_clear(&in->exact);
	cache_clear(&in->lines);
	cache_clear(&in->frames);
	cache_clear(&in->stacks);
	fg_buf_release(&in->skey);
	fg_buf_release(&in->hkey2);
	fg_buf_release(&in->fkey);
	free(in->ids);
	free(in->event);
	free(in->buf);
	free(in);
}

const struct fg_top_feed_stats *fg_top_feed_stats(const struct fg_top_feed *in)
{
	struct fg_top_feed_stats *st = (struct fg_top_feed_stats *)&in->st;

	st->cache_bytes =
	    in->lines.bytes + in->frames.bytes + in->stacks.bytes + in->exact.bytes + in->hot.bytes;
	return st;
}
