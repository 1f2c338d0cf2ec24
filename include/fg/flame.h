/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flame graph's frames, merged from folded stacks as flamegraph.pl
 * merges them: the lines are sorted as byte strings (or kept in input order
 * for a flame chart), and each frame that the next line shares with the
 * previous one, from the root, grows; the others close and new ones open.
 * Every frame is an interval [start, end) of the running sample count.
 *
 *	struct fg_flame *f = fg_flame_new(&opts);
 *	err = fg_flame_read(f, fd);	// once per file (or fg_flame_add_input)
 *	fg_flame_build(f, min_samples);	// f->total is known before this
 *	for (size_t i = 0; i < f->nframes; i++) draw(&f->frames[i]);	// pre-order
 *	fg_flame_free(f);
 *
 * Memory follows the distinct stacks, not the input: the lines of one stack
 * are added up as they are read (for a flame chart, which keeps the input
 * order, those of equal neighbouring lines), and nothing else of the input is
 * kept.  Frames narrower than min_samples are dropped as they close, so the
 * frames follow what is drawn; their weight stays on the parent as `hidden`.
 */
#ifndef FG_FLAME_H
#define FG_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_flame_opts {
	bool reverse;		 /* leaf first: stacks are reversed before merging */
	bool flamechart;	 /* keep the input order instead of sorting */
	bool chain;		 /* frames after a "--" separator are wakers (_[w]) */
	const char *const *base; /* re-root at the first frame with one of these names */
	size_t nbase;
};

enum {
	FG_FRAME_WAKER = 1, /* after a "--" separator in a chain graph */
};

struct fg_flame_frame {
	const char *name; /* not NUL-terminated; "" for the root */
	uint32_t name_len;
	uint32_t depth; /* 0 for the root */
	int32_t parent; /* index of the parent frame, -1 for the root */
	uint32_t flags;
	double start, end; /* in samples */
	double delta;	   /* differential: this frame's own (after - before) */
	double hidden;	   /* samples of children too narrow to keep */
};

struct fg_flame {
	struct fg_flame_frame *frames; /* in pre-order: a parent before its children */
	size_t nframes;
	double total;	   /* sum of the counts, known once the inputs are added */
	bool diff;	   /* some line had two counts */
	double maxdelta;   /* largest |delta| of a frame, at least 1 */
	uint32_t maxdepth; /* of the frames kept */
	uint64_t lines;	   /* lines with a count */
	size_t stacks;	   /* distinct stacks (flame chart: runs of equal neighbours) */
	uint64_t ignored;  /* lines without a count */
	uint64_t first_ignored_input, first_ignored_line; /* from 1; 0 when none */
	/*
	 * lines left out for a count past 2^64-1 (FG_FLAME_TOO_BIG), or that would
	 * take their stack's past it (FG_FLAME_SUM_TOO_BIG), as fg-fold leaves them out
	 */
	uint64_t refused;
	uint64_t first_refused_input, first_refused_line; /* from 1; 0 when none */
	int first_refused_why;
	uint64_t off_base; /* lines left out by the base frames */
	double off_base_samples;
	struct fg_flame_priv *priv;
};

enum { FG_FLAME_TOO_BIG = 1, FG_FLAME_SUM_TOO_BIG };

/* Never NULL.  `o` is copied (its strings must outlive the flame). */
struct fg_flame *fg_flame_new(const struct fg_flame_opts *o);
/* Add one input's contents (copied as needed: `data` may go afterwards). */
void fg_flame_add_input(struct fg_flame *f, const char *data, size_t len);
/*
 * Add one input read from `fd` to its end, a buffer at a time (the longest
 * line is the most held).  0, or -errno of a read, the lines before it added.
 */
int fg_flame_read(struct fg_flame *f, int fd);
/* Sort and merge the lines added into frames, dropping those narrower than `min`. */
void fg_flame_build(struct fg_flame *f, double min);
void fg_flame_free(struct fg_flame *f);

/* The length of a frame name without its annotation (_[k], _[j], _[i] or _[w]). */
size_t fg_flame_strip(const char *name, size_t len);

#endif
