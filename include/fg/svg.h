/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The SVG writer: one self-contained, interactive SVG for a flame graph.
 *
 * Every frame is a <g> holding a <title> "NAME (N samples, P%)" and a
 * <rect>, as flamegraph.pl writes them.  The rects live in a nested <svg>
 * whose horizontal unit is one sample (its viewBox spans the total), so the
 * browser stretches them to any width and zooming is a change of viewBox;
 * the labels sit in a layer of their own that the script redraws.  Text
 * from the input is escaped, and invalid UTF-8 and characters XML forbids
 * come out as U+FFFD.
 */
#ifndef FG_SVG_H
#define FG_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fg/buf.h"
#include "fg/flame.h"
#include "fg/hash.h"
#include "fg/palette.h"

/* Attributes a --nameattr file gives the frames of one name. */
struct fg_nameattr {
	char *title;  /* replaces the title text */
	char *href;   /* the frame links there */
	char *target; /* the link's target (default "_top") */
	char *attrs;  /* more attributes for the <g>, escaped: ` class="x" style="y"` */
};

struct fg_svg_opts {
	const char *title; /* NULL: "Flame Graph", "Icicle Graph" or "Flame Chart" */
	const char *subtitle;
	const char *notes;
	const char *fonttype;
	const char *nametype;
	const char *countname;
	const char *encoding; /* NULL: UTF-8, not declared */
	const char *bg1, *bg2;
	int width;	 /* pixels, for the layout: pruning and labels */
	bool fluid;	 /* the drawing fills the window */
	int frameheight; /* pixels */
	double fontsize, fontwidth;
	double timemax; /* the width's worth of samples, >= the flame's total */
	double factor;	/* shown counts are multiplied by this */
	bool inverted, flamechart, negate;
	enum fg_palette palette;
	enum fg_pick pick;
	uint64_t seed;		  /* for FG_PICK_RANDOM */
	struct fg_hash *colors;	  /* --cp: name -> colour (see fg_rgb_pack), grows as used */
	struct fg_hash *nameattr; /* name -> struct fg_nameattr * */
};

/* Default options: flamegraph.pl's. */
void fg_svg_opts_init(struct fg_svg_opts *o);

/* Write the flame graph.  The bytes written, or -errno of the write. */
int64_t fg_svg_write(FILE *out, const struct fg_flame *f, const struct fg_svg_opts *o);
/* A valid SVG that shows `message` and nothing else.  0 or -errno. */
int fg_svg_write_message(FILE *out, const struct fg_svg_opts *o, const char *message);

enum {
	FG_ESC_ATTR = 1, /* for an attribute value: quotes and tabs escaped too */
	FG_ESC_RAW8 = 2, /* bytes >= 0x80 pass (a declared single-byte encoding) */
};

/*
 * Append s[0, n) as XML text: & < > escaped, invalid UTF-8 and control
 * characters replaced by U+FFFD ('?' with FG_ESC_RAW8).
 */
void fg_svg_escape(struct fg_buf *b, const char *s, size_t n, unsigned flags);

/*
 * One line of a --nameattr file: "NAME<TAB>key=value<TAB>key=value...".
 * Adds to `m` (values are struct fg_nameattr *, freed by fg_svg_nameattr_free).
 * 0, or -EINVAL for a line without a tab or a key that is not an XML name.
 */
int fg_svg_nameattr_line(struct fg_hash *m, const char *line, size_t len);
/*
 * The lines of a --nameattr file, data[0, len), into `m`.  0, or -EINVAL for
 * a line of another form (empty lines pass), whose number is in *bad_line:
 * the lines before it are added.
 */
int fg_svg_nameattr_parse(struct fg_hash *m, const char *data, size_t len, uint64_t *bad_line);
void fg_svg_nameattr_free(struct fg_hash *m);

#endif
