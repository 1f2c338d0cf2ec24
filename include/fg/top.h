/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-top's model: the profile as a tree of stacks whose counts move with
 * time, and the views a terminal draws from it.
 *
 * A stack is a folded stack as fg-fold writes it ("root;...;leaf", the root
 * the process, frames annotated _[k], _[j], _[i]).  Its leaf node collects
 * the samples of the current second; each tick (one second) moves them into
 * four counts at once, so a display can switch between them freely:
 *
 *	accumulate	every sample since the start
 *	window		the last N seconds (a ring of N one-second slots)
 *	reset		since the last reset, every N seconds
 *	decay		older samples fade: halved every N seconds
 *
 * Memory grows with the number of distinct stacks (and, for the window, with
 * the stacks seen in its N seconds), not with time.
 *
 *	struct fg_top *t = fg_top_new(10);
 *	uint32_t id;
 *	fg_top_stack(t, "a;b;c", 5, &id); fg_top_add(t, id, 1);	(per sample)
 *	fg_top_tick(t);						(every second)
 *	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_WINDOW);
 *	... v->nodes, v->funcs, v->procs ...
 *	fg_top_view_free(v); fg_top_free(t);
 *
 * A view is a snapshot: later samples do not change it.  It borrows frame
 * names from the model, so it must be freed before the model.  The model is
 * not thread-safe; a caller that feeds it from one thread and takes views in
 * another holds a lock around both.
 */
#ifndef FG_TOP_H
#define FG_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fg/buf.h"
#include "fg/palette.h"

enum fg_top_mode {
	FG_TOP_WINDOW,
	FG_TOP_ACCUMULATE,
	FG_TOP_RESET,
	FG_TOP_DECAY,
	FG_TOP_NMODES,
};

/* What a frame is, from its fg-fold annotation. */
enum fg_top_kind {
	FG_TOP_USER,
	FG_TOP_KERNEL,	/* _[k] */
	FG_TOP_JIT,	/* _[j] */
	FG_TOP_INLINED, /* _[i] */
};

struct fg_top;

/* A model whose window, reset interval and half-life are `seconds` (1 to 3600). */
struct fg_top *fg_top_new(unsigned seconds);
void fg_top_free(struct fg_top *t);

/*
 * The node of a folded stack ("a;b;c", root first; empty frames at its end
 * are dropped as flamegraph.pl drops them, and a stack without frames is the
 * root's), made when new: 0 with *id set, or -E2BIG beyond 2^31 nodes or
 * 2^31 names.
 */
int fg_top_stack(struct fg_top *t, const char *stack, size_t len, uint32_t *id);
/*
 * Add `weight` (a sample's period or count, perhaps fractional) to a stack's
 * node for the current second.  0, or -EINVAL for a weight that is negative
 * or not a number.  Weights are doubles: whole sums are exact up to 2^53.
 */
int fg_top_add(struct fg_top *t, uint32_t id, double weight);
/*
 * Add what fg_fold_write() writes for a one-count profile ("STACK COUNT" a
 * line, the count perhaps with decimals) as fg_top_stack() and fg_top_add()
 * would.  0, or -EINVAL for a line that is not so, or their errors.
 * Optional: *nstacks, the lines added, and *last and *last_weight, the last
 * line's node and count.
 */
int fg_top_add_folded(struct fg_top *t, const char *text, size_t len, size_t *nstacks,
		      uint32_t *last, double *last_weight);
/* One second passed: move the current second into the four counts. */
void fg_top_tick(struct fg_top *t);
/*
 * Weights held elsewhere to be added later (fg_top_feed keeps a piece's by
 * stack, where the model's nodes are far apart in memory): flush(ctx) adds
 * them, as fg_top_add would, before each tick and each view, so that they
 * count as added when they came.  NULL: none.
 */
void fg_top_set_flush(struct fg_top *t, void (*flush)(void *ctx), void *ctx);

struct fg_top_stats {
	uint64_t ticks;
	size_t nodes;  /* distinct frames in the tree, the root included */
	size_t names;  /* distinct frame names */
	size_t memory; /* bytes held by the tree, its names and the window */
};
const struct fg_top_stats *fg_top_stats(const struct fg_top *t);
const char *fg_top_mode_name(enum fg_top_mode m);
/* The mode called `name` ("window", "accumulate", "reset", "decay"), or -1. */
int fg_top_mode_parse(const char *name);
unsigned fg_top_seconds(const struct fg_top *t);

/* --- views --- */

struct fg_top_vnode {
	const char *name; /* borrowed from the model; "all" for the root */
	uint32_t len;	  /* without the annotation, which follows unless kind is USER */
	uint8_t kind;	  /* enum fg_top_kind */
	bool matched;	  /* its name matches the search */
	uint32_t depth;	  /* 0 for the root */
	int32_t parent;	  /* index in the view, -1 for the root */
	uint32_t id;	  /* the model's node: the same frame in every view */
	uint32_t nchildren;
	double self, total;
	double start; /* where the frame starts, in weight, from the root's start */
};

struct fg_top_func {
	const char *name;
	uint32_t len;
	uint8_t kind;
	bool matched;
	double self;  /* weight of the samples whose leaf it is */
	double total; /* weight of the samples it is in (once, when it recurses) */
};

enum fg_top_sort { FG_TOP_BY_SELF, FG_TOP_BY_TOTAL };

struct fg_top_view {
	enum fg_top_mode mode;
	struct fg_top_vnode *nodes; /* pre-order, children by name; only nodes with weight */
	size_t nnodes;
	struct fg_top_func
	    *funcs; /* functions (name and kind; not the roots), by fg_top_view_sort */
	size_t nfuncs;
	struct fg_top_func *procs; /* the roots' children (processes), by total */
	size_t nprocs;
	double total; /* weight of every sample in the view */
	uint32_t maxdepth;
	bool searching;
	double matched; /* weight under matched frames (each sample once) */
	int32_t *by_id; /* view index of a model node, -1 when not in the view */
	size_t nby_id;
};

/* A snapshot of the model's counts in one mode.  Never NULL. */
struct fg_top_view *fg_top_view_new(struct fg_top *t, enum fg_top_mode mode);
void fg_top_view_free(struct fg_top_view *v);
/* Order v->funcs, heaviest first (ties by name). */
void fg_top_view_sort(struct fg_top_view *v, enum fg_top_sort by);
/*
 * Write the view as folded stacks: a line for each frame with a self weight,
 * "root;...;frame WEIGHT" (annotations kept), in pre-order.  0, or -EIO.
 */
int fg_top_view_write_folded(const struct fg_top_view *v, FILE *out);
/* The view index of model node `id`, or of its nearest ancestor in the view (0: the root). */
int32_t fg_top_view_find(const struct fg_top_view *v, uint32_t id);

/*
 * Mark the frames and functions whose name (without its annotation) matches
 * the extended regular expression `pattern` (NULL or "" clears the search),
 * and sum their weight, each sample once, as fg-svg's search does.  0, or
 * -EINVAL for a bad expression (then `err` holds regerror's text).
 */
int fg_top_view_search(struct fg_top_view *v, const char *pattern, char *err, size_t errlen);
/* The matched weight inside frame `idx`'s interval (the share of a zoom). */
double fg_top_view_matched_in(const struct fg_top_view *v, int32_t idx);

/* --- the flame graph on a grid --- */

struct fg_top_cell {
	uint32_t row; /* the frame's depth */
	uint32_t col, width;
	int32_t node; /* view index */
};

/*
 * Lay the view out on `cols` columns, zoomed into frame `zoom` (its ancestors
 * full width above it, its descendants in proportion below, frames narrower
 * than a column left out), one row per depth, root on row 0.  The cells are
 * ordered by row, then column.  Returns the number of cells written to *cells
 * (grown as needed; *alloc is its capacity).
 */
size_t fg_top_layout(const struct fg_top_view *v, int32_t zoom, unsigned cols,
		     struct fg_top_cell **cells, size_t *alloc);

enum fg_top_dir { FG_TOP_STAY, FG_TOP_LEFT, FG_TOP_RIGHT, FG_TOP_UP, FG_TOP_DOWN };

/*
 * Move the selection from frame `sel` (a view index; one without a cell is
 * first its nearest ancestor that has one): nowhere (FG_TOP_STAY), left and
 * right to the neighbouring frame on its row, up to its parent (towards the
 * root), down to its widest child.  Returns the new selection (`sel` when
 * there is nowhere to go).
 */
int32_t fg_top_nav(const struct fg_top_view *v, const struct fg_top_cell *cells, size_t ncells,
		   int32_t sel, enum fg_top_dir dir);

/* --- drawing names --- */

/* The kind of a frame from its annotation, and the name's length without it. */
enum fg_top_kind fg_top_kind(const char *name, size_t len, size_t *stripped);

/*
 * Append `name` to `out` so that it is safe on a terminal and fits `maxcols`
 * columns: control bytes and, outside UTF-8 (`utf8` false), every byte above
 * 0x7f become "\xNN"; in UTF-8, invalid sequences become "\xNN" and
 * characters that are not printable or take no column "\u{X}"; nothing else
 * reaches the terminal.  When the name does not fit, it ends in ".." (so
 * maxcols of 2 or less shows only dots).  Returns the columns used.
 */
size_t fg_top_printable(struct fg_buf *out, const char *name, size_t len, bool utf8,
			size_t maxcols);

/* A frame's colour as fg-svg --colors java gives it: by kind, then by a hash of the name. */
struct fg_rgb fg_top_color(const char *name, size_t len, enum fg_top_kind kind);
/* The nearest of the 256 colours of xterm (16-255: the 6x6x6 cube and the greys). */
int fg_top_xterm256(struct fg_rgb c);

#endif
