// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for fg-svg's library: the folded parser, the flame, the palette, escaping. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/buf.h"
#include "fg/flame.h"
#include "fg/folded.h"
#include "fg/hash.h"
#include "fg/palette.h"
#include "fg/safeio.h"
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
	struct fg_hash *m = fg_hash_new(0);
	const char *l1 = "f\ttitle=T\tclass=c<\thref=h";
	struct fg_nameattr *na;

	CHECK_INT(fg_svg_nameattr_line(m, l1, strlen(l1)), 0);
	na = fg_hash_get(m, "f", 1)->val.p;
	CHECK_STR(na->title, "T");
	CHECK_STR(na->href, "h");
	CHECK_STR(na->attrs, " class=\"c&lt;\"");
	CHECK_INT(fg_svg_nameattr_line(m, "g", 1), -EINVAL);
	CHECK_INT(fg_svg_nameattr_line(m, "g\tbad key=1", 11), -EINVAL);
	CHECK(fg_hash_get(m, "g", 1) == NULL);
	fg_svg_nameattr_free(m);
}

static bool frame_is(const struct fg_flame_frame *fr, const char *name)
{
	return fr->name_len == strlen(name) && memcmp(fr->name, name, fr->name_len) == 0;
}

TEST(flame_merges_stacks_as_read)
{
	struct fg_flame *f = flame("a;b 1\nx 2\na;b 3\na;b\t4\na;b 5\n", NULL);

	CHECK_INT(f->lines, 5);
	CHECK_INT(f->stacks, 2);
	CHECK(f->total == 15);
	/* all, a, b, x */
	CHECK_INT(f->nframes, 4);
	CHECK(frame_is(&f->frames[2], "b") && f->frames[2].end - f->frames[2].start == 13);
	fg_flame_free(f);
}

TEST(flame_one_stack_is_drawn_once)
{
	/* flamegraph.pl sorts "a;b 2nd 5" between "a;b 1" and "a;b 9" and splits b */
	struct fg_flame *f = flame("a;b 9\na;b 2nd 5\na;b 1\n", NULL);

	CHECK_INT(f->nframes, 4);
	CHECK(frame_is(&f->frames[2], "b") && f->frames[2].start == 0 && f->frames[2].end == 10);
	CHECK(frame_is(&f->frames[3], "b 2nd") && f->frames[3].start == 10);
	fg_flame_free(f);
}

TEST(flame_sorts_by_the_first_line)
{
	/* "a;b\t1" sorts before "a;b!" and "a;b 1" after it: the least suffix wins */
	struct fg_flame *f = flame("a;b 1\na;b! 2\na;b\t1\n", NULL);

	CHECK(frame_is(&f->frames[2], "b") && f->frames[2].start == 0);
	CHECK(frame_is(&f->frames[3], "b!") && f->frames[3].start == 2);
	fg_flame_free(f);
}

TEST(flame_chart_merges_neighbours_only)
{
	struct fg_flame_opts o = {.flamechart = true};
	struct fg_flame *f = flame("a 1\na 2\nb 1\na 1\n", &o);

	CHECK_INT(f->stacks, 3);
	CHECK_INT(f->nframes, 4); /* all, a (3), b, a */
	CHECK(frame_is(&f->frames[1], "a") && f->frames[1].end == 3);
	CHECK(frame_is(&f->frames[3], "a") && f->frames[3].start == 4);
	fg_flame_free(f);
}

TEST(flame_reverse_and_diff_merge)
{
	struct fg_flame_opts o = {.reverse = true};
	struct fg_flame *f = flame("a;z 4 1\nb;z 1 3\na;z 2 2\n", &o);

	CHECK_INT(f->stacks, 2);
	CHECK(f->diff && f->total == 6);
	CHECK(frame_is(&f->frames[1], "z"));
	CHECK(frame_is(&f->frames[2], "a") && f->frames[2].delta == -3);
	CHECK(frame_is(&f->frames[3], "b") && f->frames[3].delta == 2);
	fg_flame_free(f);
}

TEST(flame_fractions_add_up_in_any_order)
{
	struct fg_flame *f = flame("a;b 1.5\na;b 0.5\na;b 0.1\na;b 0.2\na;c 2\n", NULL);

	/* 2.3, as if added exactly and rounded once */
	CHECK(f->frames[2].end == 2.3);
	CHECK(f->frames[3].start == 2.3 && f->frames[3].end == 4.3);
	fg_flame_free(f);
}

TEST(flame_reads_a_descriptor)
{
	struct fg_flame *f = fg_flame_new(NULL);
	int fds[2];

	CHECK(pipe(fds) == 0);
	CHECK(write(fds[1], "a;b 1\nbad\na;b 2", 15) == 15);
	close(fds[1]);
	CHECK_INT(fg_flame_read(f, fds[0]), 0);
	close(fds[0]);
	CHECK_INT(f->lines, 2);
	CHECK_INT(f->ignored, 1);
	CHECK_INT(f->first_ignored_input, 1);
	CHECK_INT(f->first_ignored_line, 2);
	CHECK_INT(fg_flame_read(f, -1), -EBADF);
	fg_flame_free(f);
}

TEST(palette_background)
{
	const char *top, *bottom;

	CHECK_INT(fg_palette_background("blue", &top, &bottom), 0);
	CHECK_STR(top, "#eeeeee");
	CHECK_STR(bottom, "#e0e0ff");
	CHECK_INT(fg_palette_background("#123456", &top, &bottom), 0);
	CHECK_STR(top, "#123456");
	CHECK_STR(bottom, "#123456");
	CHECK_INT(fg_palette_background("pink", &top, &bottom), -EINVAL);
	CHECK_INT(fg_palette_background("rgb(1,2,3)", &top, &bottom), -EINVAL);
}

TEST(palette_map_round_trip)
{
	const char *text = "b->rgb(1,2,3)\nop->x->rgb(4,5,6)\nnot a colour\n\na->#0a0b0c\r\n";
	struct fg_hash *m = fg_hash_new(0), *m2 = fg_hash_new(0);
	char dir[] = "/tmp/fg-test-svg-XXXXXX", path[64], *data;
	uint64_t bad, first;
	struct fg_rgb c;
	size_t len;

	fg_palette_map_parse(m, text, strlen(text), &bad, &first);
	CHECK_INT(bad, 1);
	CHECK_INT(first, 3);
	CHECK_INT(fg_hash_count(m), 3);
	c = fg_rgb_unpack(fg_hash_get(m, "op->x", 5)->val.u);
	CHECK(c.r == 4 && c.g == 5 && c.b == 6);
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/palette.map", dir);
	CHECK_INT(fg_palette_map_write(m, path), 0);
	CHECK_INT(fg_safeio_read_file(path, 1 << 20, &data, &len), 0);
	CHECK_STR(data, "a->rgb(10,11,12)\nb->rgb(1,2,3)\nop->x->rgb(4,5,6)\n");
	fg_palette_map_parse(m2, data, len, &bad, &first);
	CHECK_INT(bad, 0);
	CHECK_INT(fg_hash_count(m2), 3);
	free(data);
	fg_hash_free(m);
	fg_hash_free(m2);
	unlink(path);
	rmdir(dir);
}

TEST(nameattr_parse)
{
	struct fg_hash *m = fg_hash_new(0);
	const char *text = "f\ttitle=T\n\ng\tclass=c\nbad line\nh\tclass=d\n";
	uint64_t line = 0;

	CHECK_INT(fg_svg_nameattr_parse(m, text, strlen(text), &line), -EINVAL);
	CHECK_INT(line, 4);
	CHECK(fg_hash_get(m, "g", 1) != NULL);
	CHECK(fg_hash_get(m, "h", 1) == NULL);
	CHECK_INT(fg_svg_nameattr_parse(m, "x\ty=1", 5, &line), 0);
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
	RUN(flame_merges_stacks_as_read);
	RUN(flame_one_stack_is_drawn_once);
	RUN(flame_sorts_by_the_first_line);
	RUN(flame_chart_merges_neighbours_only);
	RUN(flame_reverse_and_diff_merge);
	RUN(flame_fractions_add_up_in_any_order);
	RUN(flame_reads_a_descriptor);
	RUN(palette_background);
	RUN(palette_map_round_trip);
	RUN(nameattr_parse);
	return unit_done();
}
