/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-svg's command line: each option's value checked as getopt_long()
 * hands it out, then the options together, into the renderer's options
 * (struct fg_svg_opts, fg/svg.h) and the graph's (struct fg_flame_opts,
 * fg/flame.h).  The tool keeps the option table, the usage text and what
 * touches the system (the files of --nameattr and --cp, the clock that
 * seeds --random, the output).  A refusal is -EINVAL with the reason in
 * `why` ("invalid palette 'x'"), which the tool prints before its usage,
 * exit status 2.
 *
 *	struct fg_svg_args a;
 *	fg_svg_args_init(&a);
 *	while ((c = getopt_long(argc, argv, FG_SVG_SHORTOPTS, longopts, NULL)) != -1)
 *		if (fg_svg_arg(&a, c, optarg, why, sizeof(why)) < 0) usage_error(why);
 *	if (fg_svg_args_check(&a, why, sizeof(why)) < 0) usage_error(why);
 *	f = fg_flame_new(&a.flame); ... fg_svg_write(out, f, &a.svg);
 *	fg_svg_args_release(&a);
 */
#ifndef FG_SVG_ARGS_H
#define FG_SVG_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "fg/flame.h"
#include "fg/svg.h"

struct fg_svg_args {
	struct fg_svg_opts svg;	    /* the renderer's options */
	struct fg_flame_opts flame; /* the graph's: --reverse, --flamechart, --base */
	const char *minwidth;	    /* --minwidth N or N% (default "0.1") */
	double minval;		    /* its N, once checked */
	const char *bgcolors;	    /* --bgcolors; NULL: the palette's */
	const char *nameattr;	    /* --nameattr FILE */
	const char *output;	    /* -o FILE; NULL: standard output */
	double total;		    /* --total; 0: the input's */
	bool cp;		    /* --cp: ./palette.map */
	bool width_set;		    /* --width was given: a fixed width, not fluid */
	const char **base;	    /* --base, repeatable; owned */
	size_t nbase, abase;
};

#define FG_SVG_SHORTOPTS "hVo:"

/* the options without a short form */
enum {
	FG_SVG_ARG_TITLE = 256,
	FG_SVG_ARG_SUBTITLE,
	FG_SVG_ARG_WIDTH,
	FG_SVG_ARG_HEIGHT,
	FG_SVG_ARG_MINWIDTH,
	FG_SVG_ARG_FONTTYPE,
	FG_SVG_ARG_FONTSIZE,
	FG_SVG_ARG_FONTWIDTH,
	FG_SVG_ARG_COUNTNAME,
	FG_SVG_ARG_NAMETYPE,
	FG_SVG_ARG_COLORS,
	FG_SVG_ARG_BGCOLORS,
	FG_SVG_ARG_HASH,
	FG_SVG_ARG_DETERMINISTIC,
	FG_SVG_ARG_RANDOM,
	FG_SVG_ARG_CP,
	FG_SVG_ARG_REVERSE,
	FG_SVG_ARG_INVERTED,
	FG_SVG_ARG_FLAMECHART,
	FG_SVG_ARG_NEGATE,
	FG_SVG_ARG_NOTES,
	FG_SVG_ARG_TOTAL,
	FG_SVG_ARG_FACTOR,
	FG_SVG_ARG_NAMEATTR,
	FG_SVG_ARG_ENCODING,
	FG_SVG_ARG_BASE,
};

/* The defaults: flamegraph.pl's (fg_svg_opts_init()), --minwidth 0.1. */
void fg_svg_args_init(struct fg_svg_args *a);
/*
 * Option `c` with its argument (getopt_long's optarg), into *a: -o and
 * FG_SVG_ARG_*.  0, or -EINVAL with the reason in why; -ENOENT for a `c`
 * this module does not take (-h, -V and getopt's '?' are the tool's).
 */
int fg_svg_arg(struct fg_svg_args *a, int c, const char *arg, char *why, size_t len);
/*
 * The options together, once all are in: the background (the palette's
 * unless --bgcolors), --minwidth, the chain palette and --base into the
 * graph's options.  0, or -EINVAL with the reason in why.
 */
int fg_svg_args_check(struct fg_svg_args *a, char *why, size_t len);
/* Free the list of --base. */
void fg_svg_args_release(struct fg_svg_args *a);

#endif
