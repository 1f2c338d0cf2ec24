// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-top's input: the stream fed to fg_fold as it comes (fg_fold_feed), each
 * sample fg_fold folds added to fg-top's model.  See include/fg/topfeed.h.
 *
 * fg_fold reads the stream in whatever pieces the pipe gives, names every
 * sample as fg-fold names it, and numbers the distinct stacks of its table:
 * the number of a stack seen before gives its node in the model without the
 * stack's text being looked up again.  Most samples do not even get named
 * again: fg_fold's sample cache counts a sample it has seen by its header
 * and frame lines (include/fg/fold.h, lib/fold.c sample_cached).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/badline.h"
#include "fg/diag.h"
#include "fg/fold.h"
#include "fg/topfeed.h"
#include "fg/util.h"

/* a read: what half of a 1 MiB pipe holds (fg-top naps until about that much came) */
#define READ_SIZE (512 * 1024)

struct fg_top_feed {
	struct fg_top *t;
	struct fg_fold *f;
	const char *name;
	fg_log_fn log;
	void *log_ctx;
	struct fg_top_feed_stats st;
	bool begun;
	atomic_bool stop; /* fg_top_feed_stop: fold no more samples */

	char *buf;
	size_t cap, len; /* read, not fed yet */

	/*
	 * By fg_fold's stack number: its node in the model, and the weight of its
	 * samples since the model's last tick or view, added to the model before
	 * the next (fg_top_set_flush): a small array, where the model's nodes are
	 * far apart in memory
	 */
	struct stk *stk;
	size_t astk;
	uint32_t *pending; /* the stack numbers with a weight to add */
	size_t npending, apending;
};

struct stk {
	double w;
	uint32_t node; /* + 1; 0: not known yet */
	bool pending;
};

#define say(in, ...) fg_logf((in)->log, (in)->log_ctx, __VA_ARGS__)

/* a count as fg_top_add_folded reads fg_fold_write's text of it */
static double weight_of(const struct fg_count *c)
{
	char num[48];

	if (c->dec == 0 || c->frac == 0)
		return (double)c->whole;
	fg_count_format(c, num, sizeof(num));
	return strtod(num, NULL);
}

/* each sample fg_fold folds: into the model, or its weight kept for the piece's end */
static int on_sample(void *ctx, const struct fg_fold_sample *s)
{
	struct fg_top_feed *in = ctx;
	struct stk *k;
	double w;
	uint32_t id;
	int r;

	if (atomic_load_explicit(&in->stop, memory_order_relaxed))
		return -ECANCELED;
	if (s->columns == 2) {
		say(in, "%s: a differential profile (two count columns); fg-top shows one profile",
		    in->name);
		return -EINVAL;
	}
	w = weight_of(&s->count);
	if (!(w >= 0) || w > 1e300) /* as fg_top_add takes them */
		return -EINVAL;
	if (s->stack_id < in->astk && in->stk[s->stack_id].node) {
		k = &in->stk[s->stack_id];
		if (!k->pending) {
			FG_ALLOC_GROW(in->pending, in->npending + 1, in->apending);
			in->pending[in->npending++] = s->stack_id;
			k->pending = true;
		}
		k->w += w;
		return 0;
	}
	r = fg_top_stack(in->t, s->stack, s->stack_len, &id);
	if (r == -E2BIG)
		say(in, "%s: more than 2^31 distinct frames", in->name);
	if (r)
		return r;
	if (s->stack_id != FG_FOLD_NO_ID) {
		size_t old = in->astk;

		FG_ALLOC_GROW(in->stk, (size_t)s->stack_id + 1, in->astk);
		memset(in->stk + old, 0, (in->astk - old) * sizeof(*in->stk));
		in->stk[s->stack_id].node = id + 1;
	}
	return fg_top_add(in->t, id, w);
}

/* the weights kept, into the model */
static int add_pending(struct fg_top_feed *in)
{
	int r = 0;

	for (size_t i = 0; i < in->npending; i++) {
		struct stk *k = &in->stk[in->pending[i]];
		int e = fg_top_add(in->t, k->node - 1, k->w);

		r = r ? r : e;
		k->w = 0;
		k->pending = false;
	}
	in->npending = 0;
	return r;
}

/* before the model's tick or view */
static void flush(void *ctx)
{
	add_pending(ctx);
}

/*
 * How much of b[0, n) to fold now.  Its end, when the lines there are a
 * sample being written (a header line, then frame lines, each starting with a
 * tab, after an empty line or at b), stays for the next read: fg_fold could
 * not end that sample before more came anyway, and folded whole, in one
 * piece, its sample cache finds it rather than naming it frame by frame.
 * Anything else is folded to its last newline (a line cut there fg_fold
 * holds itself).  A line without its newline yet is held too.  At most
 * WHOLE_BYTES are held, and WHOLE_LINES lines looked at.
 */
#define WHOLE_LINES 256
#define WHOLE_BYTES (64 * 1024)

/* cut at `cut`, unless that holds more than WHOLE_BYTES: then after the line ending at last */
static size_t held_cut(const char *b, size_t n, size_t cut, const char *last)
{
	return n - cut <= WHOLE_BYTES ? cut : (size_t)(last - b) + 1;
}

static size_t whole_part(const char *b, size_t n)
{
	const char *last = memrchr(b, '\n', n), *p = last;
	bool header = false;

	if (!last) /* a line begun: fg_fold would hold it; a long one it is given, to skip */
		return n < WHOLE_BYTES ? 0 : n;
	for (int i = 0; i < WHOLE_LINES; i++) {
		/* the line [start, p) */
		const char *q = p > b ? memrchr(b, '\n', (size_t)(p - b)) : NULL;
		const char *start = q ? q + 1 : b;

		if (start == p) /* an empty line: the sample after it is held */
			return held_cut(b, n, (size_t)(p - b) + 1, last);
		if (*start != '\t') {
			if (header)
				break; /* two lines that are not frames */
			header = true;
		} else if (header) {
			break; /* a frame line before the header: no empty line between */
		}
		if (!q)
			return header ? held_cut(b, n, 0, last) : (size_t)(last - b) + 1;
		p = q;
	}
	return (size_t)(last - b) + 1;
}

/* fold the first n bytes of the buffer; the rest moves to its start */
static int feed(struct fg_top_feed *in, size_t n)
{
	if (!in->begun) {
		fg_fold_begin(in->f, in->name);
		in->begun = true;
	}
	int r = fg_fold_feed(in->f, in->buf ? in->buf : "", n);

	if (in->len > n)
		memmove(in->buf, in->buf + n, in->len - n);
	in->len -= n;
	return r;
}

int fg_top_feed_process(struct fg_top_feed *in)
{
	return feed(in, in->len ? whole_part(in->buf, in->len) : 0);
}

int fg_top_feed_finish(struct fg_top_feed *in)
{
	int r = feed(in, in->len);

	if (r == 0)
		r = fg_fold_end(in->f);
	int e = add_pending(in);

	return r ? r : e;
}

/* --- the buffer --- */

static void make_room(struct fg_top_feed *in, size_t want)
{
	if (in->cap - in->len < want) {
		size_t cap = in->cap ? in->cap : READ_SIZE;

		while (cap - in->len < want)
			cap *= 2;
		in->buf = fg_xrealloc(in->buf, cap);
		in->cap = cap;
	}
}

ssize_t fg_top_feed_fill(struct fg_top_feed *in, int fd, bool *drained)
{
	ssize_t n;
	size_t want;

	/* at least a quarter of a read: what stays of a sample is moved back to the start */
	make_room(in, READ_SIZE / 4);
	want = in->cap - in->len;
	do
		n = read(fd, in->buf + in->len, want);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	in->len += (size_t)n;
	in->st.bytes += (uint64_t)n;
	if (drained)
		*drained = (size_t)n < want;
	return n;
}

void fg_top_feed_append(struct fg_top_feed *in, const char *data, size_t len)
{
	make_room(in, len);
	memcpy(in->buf + in->len, data, len);
	in->len += len;
	in->st.bytes += len;
}

/* --- the object --- */

struct fg_top_feed *fg_top_feed_new(struct fg_top *t, const struct fg_fold_opts *opts,
				    const char *name, fg_log_fn log, void *ctx)
{
	struct fg_top_feed *in = fg_xcalloc(1, sizeof(*in));
	struct fg_fold_hooks hooks = {.sample = on_sample, .ctx = in};

	in->t = t;
	in->name = name;
	in->log = log;
	in->log_ctx = ctx;
	in->f = fg_fold_new(opts, log, ctx);
	fg_fold_set_hooks(in->f, &hooks);
	fg_top_set_flush(t, flush, in);
	return in;
}

void fg_top_feed_free(struct fg_top_feed *in)
{
	if (!in)
		return;
	add_pending(in);
	fg_top_set_flush(in->t, NULL, NULL);
	fg_fold_free(in->f);
	free(in->stk);
	free(in->pending);
	free(in->buf);
	free(in);
}

void fg_top_feed_stop(struct fg_top_feed *in)
{
	atomic_store_explicit(&in->stop, true, memory_order_relaxed);
}

const struct fg_top_feed_stats *fg_top_feed_stats(const struct fg_top_feed *in)
{
	struct fg_top_feed_stats *st = (struct fg_top_feed_stats *)&in->st;
	const struct fg_fold_stats *fs = fg_fold_stats(in->f);

	st->samples = fs->samples;
	st->other_events = fs->other_events;
	st->filtered = fs->filtered;
	st->bad_lines = fs->bad_lines;
	st->refused = fs->refused;
	st->sideband = fs->sideband;
	st->extra_lines = fs->extra_lines;
	st->long_lines = fs->long_lines;
	st->damaged = fs->damaged;
	st->lost_records = fs->lost_records;
	st->lost = fs->lost;
	st->hits = fs->cached;
	st->event = fs->event;
	st->input = fs->input;
	return st;
}

void fg_top_feed_report(const struct fg_top_feed *in)
{
	const struct fg_top_feed_stats *fs = fg_top_feed_stats(in);
	if (fs->other_events)
		fg_warnx("showed only '%s' events; skipped %llu samples of other events "
			 "(choose with --event-filter)",
			 fs->event, (unsigned long long)fs->other_events);
	if (fs->bad_lines)
		fg_warnx("skipped %llu unrecognized line%s", (unsigned long long)fs->bad_lines,
			 fs->bad_lines == 1 ? "" : "s");
	if (fs->refused || fs->damaged)
		fg_warnx(
		    "left out %llu sample%s or line%s (a count past 2^64-1, or a line too long)",
		    (unsigned long long)(fs->refused + fs->damaged),
		    fs->refused + fs->damaged == 1 ? "" : "s",
		    fs->refused + fs->damaged == 1 ? "" : "s");
	if (fs->sideband || fs->extra_lines)
		fg_warnx(
		    "skipped %llu side-band record%s and %llu line%s perf script adds to samples",
		    (unsigned long long)fs->sideband, fs->sideband == 1 ? "" : "s",
		    (unsigned long long)fs->extra_lines, fs->extra_lines == 1 ? "" : "s");
	if (fs->lost_records)
		fg_warnx("perf lost %llu event%s (%llu PERF_RECORD_LOST record%s in the input)",
			 (unsigned long long)fs->lost, fs->lost == 1 ? "" : "s",
			 (unsigned long long)fs->lost_records, fs->lost_records == 1 ? "" : "s");
}
