/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-top's input: a stream of `perf script` text, folded stacks or bpftrace
 * maps, folded as it comes into an fg-top model (include/fg/top.h) by
 * fg-fold's engine (include/fg/fold.h): fg_fold_feed() takes the bytes in
 * whatever pieces they come, and each sample it folds, named as fg-fold
 * names it, is added to the model.  fg_fold numbers the distinct stacks, so
 * a stack seen before finds its node without its text being looked up, and
 * its sample cache counts most samples without naming them again.  The
 * weights of a stack seen before are summed by the feed and added to the
 * model before its next tick or view (fg_top_set_flush; one feed a model),
 * and when the feed ends or is freed.  Memory follows the distinct stacks and
 * frames (the caches are bounded), not time.
 *
 *	struct fg_top_feed *in = fg_top_feed_new(t, &fold_opts, "<stdin>", log, ctx);
 *	while ((n = fg_top_feed_fill(in, fd, NULL)) > 0)
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
	uint64_t bytes;		  /* read so far */
	uint64_t hits;		  /* samples counted from fg_fold's sample cache */
	const char *event;	  /* the event shown (the first seen, or the filter) */
	enum fg_fold_input input; /* FG_FOLD_AUTO until known */
};

/*
 * `opts` are fg_fold's (copied; its strings must outlive the feed), `name`
 * names the input in messages.  Never NULL.
 */
struct fg_top_feed *fg_top_feed_new(struct fg_top *t, const struct fg_fold_opts *opts,
				    const char *name, fg_log_fn log, void *ctx);
void fg_top_feed_free(struct fg_top_feed *in);

/*
 * Read what `fd` has into the feed's buffer, once; the model is not touched.
 * Returns the bytes read, 0 at the end of the input, or -errno (-EAGAIN for a
 * non-blocking descriptor with nothing to read).  *drained (when not NULL)
 * tells whether the read took less than it asked for: a pipe had no more.
 */
ssize_t fg_top_feed_fill(struct fg_top_feed *in, int fd, bool *drained);
/* Add bytes to the buffer, as fg_top_feed_fill does. */
void fg_top_feed_append(struct fg_top_feed *in, const char *data, size_t len);
/*
 * Fold the whole samples, lines or entries buffered into the model: to the
 * end of the last empty line (a perf sample's end) in the buffer's last lines,
 * else of its last line; the rest stays buffered for the next read (it is
 * part of a sample or line that fg_fold would hold anyway).  0, or
 * -errno when the input cannot go on, after a message: -EMEDIUMTYPE (binary
 * input), -EINVAL (a differential, two-column profile), -E2BIG (more than
 * 2^31 distinct frames); or, without one, -ECANCELED (fg_top_feed_stop).
 */
int fg_top_feed_process(struct fg_top_feed *in);
/* The input ended: fold what is left, as fg_top_feed_process does. */
int fg_top_feed_finish(struct fg_top_feed *in);
/*
 * Fold no more: an fg_top_feed_process running in another thread returns
 * -ECANCELED at its next sample, rather than when all it read is folded, as
 * does any later call that comes to one; fg_top_feed_stats and
 * fg_top_feed_free are what is left to call.  It needs no lock.
 */
void fg_top_feed_stop(struct fg_top_feed *in);
const struct fg_top_feed_stats *fg_top_feed_stats(const struct fg_top_feed *in);
/*
 * What the input left out or skipped (other events, bad lines, refused
 * counts, side-band records, perf's losses), a line each on standard error.
 */
void fg_top_feed_report(const struct fg_top_feed *in);

#endif
