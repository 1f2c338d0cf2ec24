/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-top's input: a stream of `perf script` text, folded stacks or bpftrace
 * maps, folded as it comes into an fg-top model (include/fg/top.h) by the
 * same engine and naming rules as fg-fold (include/fg/fold.h).
 *
 * fg_fold reads a whole input and then writes all its stacks; a live display
 * needs the stacks as they come.  This layer cuts the stream where fg_fold's
 * state starts afresh (before a sample's header line that follows a blank
 * line; for folded stacks before a line with one count; for bpftrace before
 * a map entry) and folds each piece with fg_fold_read_mem(), so every stack
 * is fg_fold's.  As folding every sample again would cost more than a live
 * display may, a sample that fg_fold would name as one seen before reuses
 * that fold's result, and only its weight is read from its own header: the
 * same naming fields of the header (comm, event, and the pid or tid when they
 * name the root) and the same frames, compared by each frame line's symbol
 * and module (what fg_fold names a frame from when it is not asked for
 * addresses or source lines), or as they are for samples with other lines.
 * These caches are bounded (64 MB in all; each starts afresh when full), so
 * memory follows the distinct stacks and frames, not time.
 *
 *	struct fg_top_feed *in = fg_top_feed_new(t, &fold_opts, "<stdin>", log, ctx);
 *	while ((n = fg_top_feed_fill(in, fd)) > 0)
 *		fg_top_feed_process(in);	(holding the model's lock)
 *	fg_top_feed_finish(in);
 *	fg_top_feed_free(in);
 *
 * The messages (bad lines, by input line number, at most ten, then one
 * saying there are more) go to the log callback, as fg_fold's do.
 */
#ifndef FG_TOPFEED_H
#define FG_TOPFEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fg/fold.h"
#include "fg/top.h"

struct fg_top_feed_stats {
	uint64_t samples;      /* samples folded (folded input: lines) */
	uint64_t other_events; /* samples of other events, skipped */
	uint64_t filtered;     /* left out by fg_fold_opts' only_pids/only_comms */
	uint64_t bad_lines;    /* lines fg_fold skipped */
	uint64_t refused;      /* samples or lines left out: a count past 2^64-1 */
	uint64_t sideband;     /* side-band records (PERF_RECORD_*) skipped */
	uint64_t extra_lines;  /* lines perf adds to a sample (-F +insn, ...) skipped */
	uint64_t long_lines;   /* lines too long for fg_fold, skipped */
	uint64_t damaged;      /* samples left out for such a line */
	uint64_t lost_records; /* PERF_RECORD_LOST records, and the events they say were lost */
	uint64_t lost;
	uint64_t bytes;	       /* read so far */
	uint64_t folds;	       /* pieces given to fg_fold (cache misses and the rest) */
	uint64_t hits;	       /* samples that reused a fold's result */
	uint64_t cache_resets; /* times the cache was full and started afresh */
	size_t cache_bytes;
	const char *event;	  /* the event shown (the first seen, or the filter) */
	enum fg_fold_input input; /* FG_FOLD_AUTO until known */
};

/*
 * `opts` are fg_fold's (copied; its strings must outlive the feed), `name`
 * names the input in messages.  Never NULL.
 */
struct fg_top_feed *fg_top_feed_new(struct fg_top *t, const struct fg_fold_opts *opts,
				    const char *name, fg_fold_log_fn log, void *ctx);
void fg_top_feed_free(struct fg_top_feed *in);

/*
 * Read what `fd` has into the feed's buffer, once; the model is not touched.
 * Returns the bytes read, 0 at the end of the input, or -errno (-EAGAIN for a
 * non-blocking descriptor with nothing to read).
 */
ssize_t fg_top_feed_fill(struct fg_top_feed *in, int fd);
/* Add bytes to the buffer, as fg_top_feed_fill does. */
void fg_top_feed_append(struct fg_top_feed *in, const char *data, size_t len);
/*
 * Fold the whole samples, lines or entries buffered into the model.  0, or
 * -errno when the input cannot go on, after a message: -EMEDIUMTYPE (binary
 * input), -EINVAL (a differential, two-column profile), -E2BIG (more than
 * 2^31 distinct frames).
 */
int fg_top_feed_process(struct fg_top_feed *in);
/* The input ended: fold what is left, as fg_top_feed_process does. */
int fg_top_feed_finish(struct fg_top_feed *in);
const struct fg_top_feed_stats *fg_top_feed_stats(const struct fg_top_feed *in);

#endif
