// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for fg-svg's command line: each value checked, then the combination. */
#include <errno.h>
#include <string.h>

#include "fg/palette.h"
#include "fg/svg_args.h"
#include "unit.h"

/* one option, refused: the reason */
static const char *refused(int c, const char *arg)
{
	static char why[256];
	struct fg_svg_args a;

	fg_svg_args_init(&a);
	why[0] = '\0';
	if (fg_svg_arg(&a, c, arg, why, sizeof(why)) != -EINVAL)
		snprintf(why, sizeof(why), "(accepted)");
	fg_svg_args_release(&a);
	return why;
}

/* the options alone, checked together: the reason for a refusal */
static const char *checked(int c, const char *arg)
{
	static char why[256];
	struct fg_svg_args a;

	fg_svg_args_init(&a);
	why[0] = '\0';
	if (fg_svg_arg(&a, c, arg, why, sizeof(why)) != 0 ||
	    fg_svg_args_check(&a, why, sizeof(why)) != -EINVAL)
		snprintf(why, sizeof(why), "(accepted)");
	fg_svg_args_release(&a);
	return why;
}

TEST(defaults)
{
	struct fg_svg_args a;
	char why[256];

	fg_svg_args_init(&a);
	CHECK_STR(a.minwidth, "0.1");
	CHECK_INT(a.svg.frameheight, 16);
	CHECK_INT(a.svg.palette, FG_PAL_HOT);
	CHECK_INT(fg_svg_args_check(&a, why, sizeof(why)), 0);
	CHECK(a.svg.fluid && !a.flame.chain && a.flame.nbase == 0);
	CHECK(a.minval == 0.1);
	CHECK(a.svg.bg1 != NULL && a.svg.bg2 != NULL);
	fg_svg_args_release(&a);
}

TEST(values)
{
	struct fg_svg_args a;
	char why[256];

	fg_svg_args_init(&a);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_WIDTH, "800", why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_HEIGHT, "20", why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_FONTSIZE, "9.5", why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_COLORS, "chain", why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_ENCODING, "iso-8859-1", why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_MINWIDTH, "2%", why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_BASE, "main", why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_BASE, "start", why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_FLAMECHART, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_REVERSE, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_RANDOM, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_TOTAL, "1000", why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, FG_SVG_ARG_TITLE, "t", why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, 'o', "g.svg", why, sizeof(why)), 0);
	CHECK_INT(fg_svg_arg(&a, 'h', NULL, why, sizeof(why)), -ENOENT);
	CHECK_INT(fg_svg_arg(&a, 'V', NULL, why, sizeof(why)), -ENOENT);
	CHECK_INT(fg_svg_arg(&a, '?', NULL, why, sizeof(why)), -ENOENT);
	CHECK_INT(fg_svg_args_check(&a, why, sizeof(why)), 0);
	CHECK(a.svg.width == 800 && !a.svg.fluid && a.svg.frameheight == 20);
	CHECK(a.svg.fontsize == 9.5 && a.total == 1000 && a.minval == 2);
	CHECK_STR(a.svg.encoding, "iso-8859-1");
	CHECK_STR(a.svg.title, "t");
	CHECK_STR(a.output, "g.svg");
	CHECK(a.svg.flamechart && a.flame.flamechart && a.flame.reverse && a.flame.chain);
	CHECK_INT(a.svg.pick, FG_PICK_RANDOM);
	CHECK_INT(a.flame.nbase, 2);
	CHECK_STR(a.flame.base[1], "start");
	fg_svg_args_release(&a);
}

TEST(bad_values_say_what)
{
	CHECK_STR(refused(FG_SVG_ARG_COLORS, "pink"), "invalid palette 'pink'");
	CHECK_STR(refused(FG_SVG_ARG_ENCODING, "8bit"), "invalid encoding '8bit'");
	CHECK_STR(refused(FG_SVG_ARG_ENCODING, "utf 8"), "invalid encoding 'utf 8'");
	CHECK_STR(refused(FG_SVG_ARG_FACTOR, "0"), "invalid factor '0'");
	CHECK_STR(refused(FG_SVG_ARG_FONTSIZE, "0.1"), "invalid font size '0.1'");
	CHECK_STR(refused(FG_SVG_ARG_FONTWIDTH, "x"), "invalid font width 'x'");
	CHECK_STR(refused(FG_SVG_ARG_HEIGHT, "1"), "invalid frame height '1'");
	CHECK_STR(refused(FG_SVG_ARG_HEIGHT, "16.5"), "invalid frame height '16.5'");
	CHECK_STR(refused(FG_SVG_ARG_TOTAL, "-1"), "invalid total '-1'");
	CHECK_STR(refused(FG_SVG_ARG_WIDTH, "99"), "invalid width '99'");
	CHECK_STR(refused(FG_SVG_ARG_WIDTH, "1000.5"), "invalid width '1000.5'");
	CHECK_STR(checked(FG_SVG_ARG_BGCOLORS, "pink"), "invalid background colour 'pink'");
	CHECK_STR(checked(FG_SVG_ARG_MINWIDTH, "x"), "invalid minimum width 'x'");
	CHECK_STR(checked(FG_SVG_ARG_MINWIDTH, "1%%"), "invalid minimum width '1%%'");
	CHECK_STR(checked(FG_SVG_ARG_MINWIDTH, "-1"), "invalid minimum width '-1'");
	CHECK_STR(checked(FG_SVG_ARG_MINWIDTH, ".5"), "invalid minimum width '.5'");
}

int main(void)
{
	RUN(defaults);
	RUN(values);
	RUN(bad_values_say_what);
	return unit_done();
}
