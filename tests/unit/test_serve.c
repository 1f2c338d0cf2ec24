// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for fg-serve's profile: folded in its thread, drawn when asked, drawings kept. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fg/serve.h"
#include "unit.h"

static const char input[] = "app;main;f 3\napp;main;g 1\napp;main;f 2\n";

/* a server that has read `input` to its end */
static struct fg_serve *served(void)
{
	struct fg_serve_opts o = {.window = 1, .input_name = "test", .url = "http://test/"};
	struct fg_serve_status st = {0};
	struct fg_serve *s;
	int p[2];

	o.fold.annotate_kernel = o.fold.annotate_jit = true;
	s = fg_serve_new(&o);
	if (pipe(p) < 0 || write(p[1], input, sizeof(input) - 1) < 0)
		abort();
	close(p[1]);
	if (fg_serve_start(s, p[0]) < 0)
		abort();
	for (int i = 0; i < 500 && !st.eof; i++) {
		nanosleep(&(struct timespec){0, 10000000}, NULL);
		fg_serve_status(s, &st);
	}
	return s;
}

static char *render(struct fg_serve *s, enum fg_serve_view v, enum fg_serve_format f, size_t *len)
{
	struct fg_serve_query q = {.view = v, .format = f};
	const char *type;
	char *body = NULL;

	if (fg_serve_render(s, &q, &body, len, &type) != 0)
		return NULL;
	return body;
}

TEST(views)
{
	struct fg_serve *s = served();
	struct fg_serve_status st;
	size_t len;
	char *b;

	fg_serve_status(s, &st);
	CHECK(st.eof && !st.err);
	CHECK_INT(st.samples, 3);
	b = render(s, FG_SERVE_WHOLE, FG_SERVE_FOLDED, &len);
	CHECK_STR(b, "app;main;f 5\napp;main;g 1\n");
	free(b);
	/* the last window holds the samples too: they came within its second */
	b = render(s, FG_SERVE_WINDOW, FG_SERVE_FOLDED, &len);
	CHECK_STR(b, "app;main;f 5\napp;main;g 1\n");
	free(b);
	b = render(s, FG_SERVE_WHOLE, FG_SERVE_SVG, &len);
	CHECK(b && strstr(b, "<svg") && strstr(b, ">f (5 samples"));
	free(b);
	b = render(s, FG_SERVE_WHOLE, FG_SERVE_PPROF, &len);
	CHECK(b && len > 10 && (unsigned char)b[0] == 0x1f && (unsigned char)b[1] == 0x8b);
	free(b);
	fg_serve_free(s);
}

TEST(drawings_are_kept_until_the_counts_move)
{
	struct fg_serve *s = served();
	struct fg_serve_status st;
	size_t len;

	for (int i = 0; i < 3; i++)
		free(render(s, FG_SERVE_WHOLE, FG_SERVE_SVG, &len));
	fg_serve_status(s, &st);
	CHECK_INT(st.renders, 1);
	free(render(s, FG_SERVE_WINDOW, FG_SERVE_SVG, &len));
	free(render(s, FG_SERVE_WHOLE, FG_SERVE_SVG, &len));
	fg_serve_status(s, &st);
	CHECK_INT(st.renders, 2);
	fg_serve_free(s);
}

TEST(the_differential_view_needs_two_windows)
{
	struct fg_serve *s = served();
	size_t len;
	char *b = render(s, FG_SERVE_DIFF, FG_SERVE_SVG, &len);

	/* one tick at the end: one window at most, the message instead of frames */
	CHECK(b && strstr(b, "needs two whole windows of 1 s"));
	free(b);
	b = render(s, FG_SERVE_DIFF, FG_SERVE_FOLDED, &len);
	CHECK(b && len == 0);
	free(b);
	fg_serve_free(s);
}

TEST(view_names)
{
	CHECK_INT(fg_serve_view_parse("whole"), FG_SERVE_WHOLE);
	CHECK_INT(fg_serve_view_parse("window"), FG_SERVE_WINDOW);
	CHECK_INT(fg_serve_view_parse("diff"), FG_SERVE_DIFF);
	CHECK_INT(fg_serve_view_parse("Whole"), -1);
	CHECK_INT(fg_serve_view_parse(""), -1);
}

int main(void)
{
	RUN(views);
	RUN(drawings_are_kept_until_the_counts_move);
	RUN(the_differential_view_needs_two_windows);
	RUN(view_names);
	return unit_done();
}
