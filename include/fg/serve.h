/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-serve's profile: the input folded as it comes, by fg-top's feed
 * (fg/topfeed.h, fg-fold's engine) into fg-top's model (fg/top.h), in a
 * thread of its own, and the views a browser asks for, drawn by fg-svg's
 * engine (fg/flame.h, fg/svg.h) or written as folded stacks or pprof.
 *
 *	struct fg_serve *s = fg_serve_new(&opts);
 *	fg_serve_start(s, fd);				(the reader thread)
 *	fg_serve_render(s, &query, &body, &len, &type);	(from any thread)
 *	fg_serve_stop(s); fg_serve_report(s); fg_serve_free(s);
 *
 * The reader takes the model's lock only to fold what it read and to tick
 * (every second); a view is a snapshot taken under the lock and drawn outside
 * it, so a slow or busy client never holds up the folding.  Views change at
 * ticks only, so a drawing is kept (a few, by query) until the next tick and
 * shared by every client that asks; one is drawn at a time.
 *
 * The differential view compares the last whole window of opts.window seconds
 * with the one before it: every opts.window ticks the window's stacks are
 * kept as folded text, the two last ones, so memory stays that of the
 * distinct stacks.  When the input ends the reader ticks once more (the last
 * second counts), says so on standard error and stops ticking: the profile
 * stays as it was at the end.
 */
#ifndef FG_SERVE_H
#define FG_SERVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/fold.h"
#include "fg/palette.h"

struct fg_serve_opts {
	struct fg_fold_opts fold; /* copied; its strings must outlive the server */
	unsigned window;	  /* seconds, 1 to 3600 */
	const char *title;	  /* NULL: "fg-serve" */
	const char *input_name;	  /* for messages ("<stdin>") */
	const char *url;	  /* where it is served, for the message at the input's end */
	double minwidth;	  /* frames narrower are left out: pixels of a 1200-pixel graph */
	bool minwidth_pct;	  /* ... or per cent of the total */
};

enum fg_serve_view { FG_SERVE_WHOLE, FG_SERVE_WINDOW, FG_SERVE_DIFF };
enum fg_serve_format { FG_SERVE_SVG, FG_SERVE_FOLDED, FG_SERVE_PPROF };

struct fg_serve_query {
	enum fg_serve_view view;
	enum fg_serve_format format;
	bool inverted;
	enum fg_palette palette;
};

struct fg_serve_status {
	uint64_t samples; /* folded so far */
	uint64_t ticks;	  /* seconds counted */
	uint64_t renders; /* drawings made (not taken from the cache) */
	bool eof;
	int err; /* the input could not go on: -errno */
};

struct fg_serve;

/* Never NULL. */
struct fg_serve *fg_serve_new(const struct fg_serve_opts *o);
/* Read and fold `fd` in a thread of its own.  0 or -errno. */
int fg_serve_start(struct fg_serve *s, int fd);
/*
 * The view `q` names: an SVG, folded text (two counts a line for the
 * differential view) or a gzipped pprof profile (of the last window for the
 * differential view), into *body (malloc'd, *len bytes and a NUL) with its content type.
 * 0 or -errno.
 */
int fg_serve_render(struct fg_serve *s, const struct fg_serve_query *q, char **body, size_t *len,
		    const char **type);
void fg_serve_status(struct fg_serve *s, struct fg_serve_status *st);
/* Stop reading (the reader's thread is joined). */
void fg_serve_stop(struct fg_serve *s);
/* What the input left out, on standard error. */
void fg_serve_report(struct fg_serve *s);
void fg_serve_free(struct fg_serve *s);

/* "whole", "window", "diff" and back; -1 when unknown. */
int fg_serve_view_parse(const char *name);

#endif
