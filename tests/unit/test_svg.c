// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for fg-svg's library: the folded parser, the flame, the palette, escaping. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fg/buf.h"
#include "fg/flame.h"
#include "fg/folded.h"
#include "fg/palette.h"
#include "fg/svg.h"
#include "unit.h"

static int parse(const char *s, struct fg_folded *fl)
{
	return fg_folded_parse(s, strlen(s), fl);
}

TEST(folded_counts)
{
	struct fg_folded fl;

	CHECK_INT(parse("a;b;c 42", &fl), 0);
	CHECK_INT(fl.stack_len, 5);
	CHECK(fl.count == 42 && !fl.diff);
	CHECK_INT(parse("a;b 1.5", &fl), 0);
	CHECK(fl.count == 1.5);
	CHECK_INT(parse("a;b 2.", &fl), 0);
	CHECK(fl.count == 2);
	CHECK_INT(parse("a b;c d\t7", &fl), 0);
	CHECK_INT(fl.stack_len, 7); /* spaces inside names are kept */
	CHECK_INT(parse("a;b  5", &fl), 0);
	CHECK_INT(fl.stack_len, 4); /* "a;b ": one whitespace goes with the count */
	CHECK_INT(parse("a;b 3\r", &fl), 0);
	CHECK(fl.count == 3);
	CHECK_INT(parse(" 5", &fl), 0);
	CHECK_INT(fl.stack_len, 0);
}

TEST(folded_two_counts)
{
	struct fg_folded fl;

	CHECK_INT(parse("a;b 3 7", &fl), 0);
	CHECK(fl.diff && fl.before == 3 && fl.count == 7);
	CHECK_INT(fl.stack_len, 3);
	CHECK_INT((int)fl.count_text_len, 1);
	CHECK(fl.count_text[0] == '7' && fl.before_text[0] == '3');
}

TEST(folded_rejects)
{
	struct fg_folded fl;

	CHECK_INT(parse("", &fl), -EINVAL);
	CHECK_INT(parse("a;b", &fl), -EINVAL);
	CHECK_INT(parse("a;b x", &fl), -EINVAL);
	CHECK_INT(parse("a;b .5", &fl), -EINVAL);
	CHECK_INT(parse("a;b -5", &fl), -EINVAL);
	CHECK_INT(parse("a;b 1e3", &fl), -EINVAL);
	CHECK_INT(parse("5", &fl), -EINVAL);
	CHECK_INT(parse("a;b5", &fl), -EINVAL);
}

TEST(folded_frames)
{
	const char *s = "a;;b;;";
	size_t pos = 0, n, k = 0;
	const char *f, *want[] = {"a", "", "b"};

	while (fg_folded_next_frame(s, strlen(s), &pos, &f, &n)) {
		CHECK(k < 3);
		CHECK_INT(n, strlen(want[k]));
		CHECK(memcmp(f, want[k], n) == 0);
		k++;
	}
	CHECK_INT(k, 3); /* trailing empty frames dropped, as perl's split does */
}

static struct fg_flame *flame_min(const char *text, const struct fg_flame_opts *o, double min)
{
	struct fg_flame *f = fg_flame_new(o);

	fg_flame_add_input(f, text, strlen(text));
	fg_flame_build(f, min);
	return f;
}

static struct fg_flame *flame(const char *text, const struct fg_flame_opts *o)
{
	return flame_min(text, o, 0);
}

TEST(flame_merges_sorted)
{
	struct fg_flame *f = flame("b;x 2\na;y 1\nb;x 3\nbad line\na 4\n", NULL);

	CHECK_INT(f->ignored, 1);
	CHECK_INT(f->first_ignored_line, 4);
	CHECK(f->total == 10);
	/* all, a, y, b, x in pre-order */
	CHECK_INT(f->nframes, 5);
	CHECK(f->frames[1].name_len == 1 && f->frames[1].name[0] == 'a');
	CHECK(f->frames[1].start == 0 && f->frames[1].end == 5);
	CHECK(f->frames[2].name[0] == 'y' && f->frames[2].parent == 1);
	CHECK(f->frames[4].name[0] == 'x' && f->frames[4].end - f->frames[4].start == 5);
	CHECK_INT(f->maxdepth, 2);
	fg_flame_free(f);
	/* y (1 sample) goes; its sample stays with a as hidden weight */
	f = flame_min("b;x 2\na;y 1\nb;x 3\na 4\nc;d;e 1\n", NULL, 1.5);
	CHECK_INT(f->nframes, 4); /* all, a, b, x */
	CHECK(f->frames[1].name[0] == 'a' && f->frames[1].hidden == 1);
	CHECK(f->frames[0].hidden == 1); /* c, with d and e, is gone */
	CHECK_INT(f->maxdepth, 2);
	fg_flame_free(f);
}

TEST(flame_chart_keeps_order)
{
	struct fg_flame_opts o = {.flamechart = true};
	struct fg_flame *f = flame("b 1\na 1\nb 1\n", &o);

	CHECK_INT(f->nframes, 4);
	CHECK(f->frames[1].name[0] == 'b' && f->frames[3].name[0] == 'b');
	fg_flame_free(f);
}

TEST(flame_diff_and_reverse)
{
	struct fg_flame_opts o = {.reverse = true};
	struct fg_flame *f = flame("a;z 4 1\nb;z 1 3\n", &o);

	CHECK(f->diff && f->total == 4);
	CHECK(f->frames[1].name[0] == 'z');
	CHECK(f->frames[2].name[0] == 'a' && f->frames[2].delta == -3);
	CHECK(f->frames[3].name[0] == 'b' && f->frames[3].delta == 2);
	CHECK(f->maxdelta == 3);
	fg_flame_free(f);
}

TEST(flame_strip)
{
	CHECK_INT(fg_flame_strip("f_[k]", 5), 1);
	CHECK_INT(fg_flame_strip("f_[w]", 5), 1);
	CHECK_INT(fg_flame_strip("f_[x]", 5), 5);
	CHECK_INT(fg_flame_strip("_[j]", 4), 0);
}

TEST(palette_hash_matches_flamegraph_pl)
{
	/* flamegraph.pl --hash, hot: main rgb(247,83,46), libc.so`malloc rgb(240,112,39) */
	struct fg_rgb c = fg_palette_color(FG_PAL_HOT, FG_PICK_HASH, "main", 4, NULL);

	CHECK(c.r == 247 && c.g == 83 && c.b == 46);
	c = fg_palette_color(FG_PAL_HOT, FG_PICK_HASH, "libc.so`malloc", 14, NULL);
	CHECK(c.r == 240 && c.g == 112 && c.b == 39);
	CHECK_INT(fg_palette_parse("aqua"), FG_PAL_AQUA);
	CHECK_INT(fg_palette_parse("rainbow"), -1);
	CHECK_STR(fg_palette_bg(FG_PAL_MEM), "green");
}

TEST(palette_delta)
{
	struct fg_rgb c = fg_palette_delta(5, 10, false);

	CHECK(c.r == 255 && c.g == 105 && c.b == 105);
	c = fg_palette_delta(5, 10, true);
	CHECK(c.r == 105 && c.g == 105 && c.b == 255);
	c = fg_palette_delta(0, 10, false);
	CHECK(c.r == 255 && c.g == 255 && c.b == 255);
}

TEST(rgb_parse)
{
	struct fg_rgb c;

	CHECK_INT(fg_rgb_parse("rgb(1,2,3)", 10, &c), 0);
	CHECK(c.r == 1 && c.g == 2 && c.b == 3);
	CHECK_INT(fg_rgb_parse("#0a0B0c", 7, &c), 0);
	CHECK(c.r == 10 && c.g == 11 && c.b == 12);
	CHECK_INT(fg_rgb_parse("rgb(256,0,0)", 12, &c), -EINVAL);
	CHECK_INT(fg_rgb_parse("rgb(1,2)", 8, &c), -EINVAL);
	CHECK_INT(fg_rgb_parse("red", 3, &c), -EINVAL);
}

static void check_escape(const char *in, size_t n, unsigned flags, const char *want, int *ok)
{
	struct fg_buf b = FG_BUF_INIT;

	fg_svg_escape(&b, in, n, flags);
	*ok = strcmp(b.data ? b.data : "", want) == 0;
	if (!*ok)
		printf("# escape: got '%s', want '%s'\n", b.data ? b.data : "", want);
	fg_buf_release(&b);
}

TEST(escape)
{
	int ok;

	check_escape("<a href='x'>&\"", 14, 0, "&lt;a href='x'&gt;&amp;\"", &ok);
	CHECK(ok);
	check_escape("'\"\t", 3, FG_ESC_ATTR, "&#39;&quot;&#9;", &ok);
	CHECK(ok);
	check_escape("]]></script>", 12, 0, "]]&gt;&lt;/script&gt;", &ok);
	CHECK(ok);
	check_escape("\xc3\xa9\xff\x01", 4, 0, "\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd", &ok);
	CHECK(ok);
	check_escape("\xe9\x01", 2, FG_ESC_RAW8, "\xe9?", &ok);
	CHECK(ok);
	check_escape("a\0b", 3, 0,
		     "a\xef\xbf\xbd"
		     "b",
		     &ok);
	CHECK(ok);
}

TEST(nameattr)
{
	struct fg_hmap *m = fg_hmap_new(0);
	const char *l1 = "f\ttitle=T\tclass=c<\thref=h";
	struct fg_nameattr *na;

	CHECK_INT(fg_svg_nameattr_line(m, l1, strlen(l1)), 0);
	na = fg_hmap_get(m, "f", 1)->val.p;
	CHECK_STR(na->title, "T");
	CHECK_STR(na->href, "h");
	CHECK_STR(na->attrs, " class=\"c&lt;\"");
	CHECK_INT(fg_svg_nameattr_line(m, "g", 1), -EINVAL);
	CHECK_INT(fg_svg_nameattr_line(m, "g\tbad key=1", 11), -EINVAL);
	CHECK(fg_hmap_get(m, "g", 1) == NULL);
	fg_svg_nameattr_free(m);
}

int main(void)
{
	RUN(folded_counts);
	RUN(folded_two_counts);
	RUN(folded_rejects);
	RUN(folded_frames);
	RUN(flame_merges_sorted);
	RUN(flame_chart_keeps_order);
	RUN(flame_diff_and_reverse);
	RUN(flame_strip);
	RUN(palette_hash_matches_flamegraph_pl);
	RUN(palette_delta);
	RUN(rgb_parse);
	RUN(escape);
	RUN(nameattr);
	return unit_done();
}
