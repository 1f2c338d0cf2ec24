// SPDX-License-Identifier: BSD-2-Clause
/* fg-svg's command line, checked.  See include/fg/svg_args.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/palette.h"
#include "fg/svg_args.h"
#include "fg/util.h"

static int bad(char *why, size_t len, const char *what, const char *value)
{
	return fg_refuse(why, len, "invalid %s '%s'", what, value);
}

/* a number within [min, max] into *v */
static int number(double *v, const char *what, const char *s, double min, double max, char *why,
		  size_t len)
{
	if (fg_parse_double(s, min, max, v) < 0)
		return bad(why, len, what, s);
	return 0;
}

/* a whole number of pixels within [min, max] */
static int pixels(int *v, const char *what, const char *s, double min, double max, char *why,
		  size_t len)
{
	double d;

	if (number(&d, what, s, min, max, why, len) < 0)
		return -EINVAL;
	*v = (int)d;
	if (*v != atof(s))
		return bad(why, len, what, s);
	return 0;
}

static bool valid_encoding(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return false;
	return true;
}

void fg_svg_args_init(struct fg_svg_args *a)
{
	*a = (struct fg_svg_args){.minwidth = "0.1"};
	fg_svg_opts_init(&a->svg);
}

/* the options that only set a string or a flag */
static int plain_arg(struct fg_svg_args *a, int c, const char *arg)
{
	struct fg_svg_opts *so = &a->svg;

	switch (c) {
	case 'o':
		a->output = arg;
		return 0;
	case FG_SVG_ARG_BASE:
		FG_ALLOC_GROW(a->base, a->nbase + 1, a->abase);
		a->base[a->nbase++] = arg;
		return 0;
	case FG_SVG_ARG_BGCOLORS:
		a->bgcolors = arg;
		return 0;
	case FG_SVG_ARG_COUNTNAME:
		so->countname = arg;
		return 0;
	case FG_SVG_ARG_CP:
		a->cp = true;
		return 0;
	case FG_SVG_ARG_DETERMINISTIC:
		so->pick = FG_PICK_DETERMINISTIC;
		return 0;
	case FG_SVG_ARG_FLAMECHART:
		a->flame.flamechart = so->flamechart = true;
		return 0;
	case FG_SVG_ARG_FONTTYPE:
		so->fonttype = arg;
		return 0;
	case FG_SVG_ARG_HASH:
		so->pick = FG_PICK_HASH;
		return 0;
	case FG_SVG_ARG_INVERTED:
		so->inverted = true;
		return 0;
	case FG_SVG_ARG_MINWIDTH:
		a->minwidth = arg;
		return 0;
	case FG_SVG_ARG_NAMEATTR:
		a->nameattr = arg;
		return 0;
	case FG_SVG_ARG_NAMETYPE:
		so->nametype = arg;
		return 0;
	case FG_SVG_ARG_NEGATE:
		so->negate = true;
		return 0;
	case FG_SVG_ARG_NOTES:
		so->notes = arg;
		return 0;
	case FG_SVG_ARG_RANDOM:
		so->pick = FG_PICK_RANDOM;
		return 0;
	case FG_SVG_ARG_REVERSE:
		a->flame.reverse = true;
		return 0;
	case FG_SVG_ARG_SUBTITLE:
		so->subtitle = arg;
		return 0;
	case FG_SVG_ARG_TITLE:
		so->title = arg;
		return 0;
	}
	return -ENOENT;
}

int fg_svg_arg(struct fg_svg_args *a, int c, const char *arg, char *why, size_t len)
{
	struct fg_svg_opts *so = &a->svg;

	switch (c) {
	case FG_SVG_ARG_COLORS:
		if (fg_palette_parse(arg) < 0)
			return bad(why, len, "palette", arg);
		so->palette = (enum fg_palette)fg_palette_parse(arg);
		return 0;
	case FG_SVG_ARG_ENCODING:
		if (!valid_encoding(arg))
			return bad(why, len, "encoding", arg);
		so->encoding = arg;
		return 0;
	case FG_SVG_ARG_FACTOR:
		return number(&so->factor, "factor", arg, 1e-300, 1e300, why, len);
	case FG_SVG_ARG_FONTSIZE:
		return number(&so->fontsize, "font size", arg, 0.5, 1000, why, len);
	case FG_SVG_ARG_FONTWIDTH:
		return number(&so->fontwidth, "font width", arg, 0.01, 100, why, len);
	case FG_SVG_ARG_HEIGHT:
		return pixels(&so->frameheight, "frame height", arg, 2, 1000, why, len);
	case FG_SVG_ARG_TOTAL:
		return number(&a->total, "total", arg, 0, 1e300, why, len);
	case FG_SVG_ARG_WIDTH:
		a->width_set = true;
		return pixels(&so->width, "width", arg, 100, 1000000, why, len);
	}
	return plain_arg(a, c, arg);
}

int fg_svg_args_check(struct fg_svg_args *a, char *why, size_t len)
{
	struct fg_svg_opts *so = &a->svg;
	const char *mw = a->minwidth;
	char *end;

	so->fluid = !a->width_set;
	if (!a->bgcolors)
		a->bgcolors = fg_palette_bg(so->palette);
	if (fg_palette_background(a->bgcolors, &so->bg1, &so->bg2) < 0)
		return bad(why, len, "background colour", a->bgcolors);
	a->minval = strtod(mw, &end);
	if (end == mw || (*end && strcmp(end, "%") != 0) || a->minval < 0 || !(a->minval < 1e300) ||
	    (mw[0] < '0' || mw[0] > '9'))
		return bad(why, len, "minimum width", mw);
	a->flame.chain = so->palette == FG_PAL_CHAIN;
	a->flame.base = a->base;
	a->flame.nbase = a->nbase;
	return 0;
}

void fg_svg_args_release(struct fg_svg_args *a)
{
	free(a->base);
	a->base = NULL;
	a->nbase = a->abase = 0;
}
