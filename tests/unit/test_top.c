// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for fg-top's model (lib/top.c) and input layer (lib/topfeed.c). */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fg/fold.h"
#include "fg/top.h"
#include "fg/topfeed.h"
#include "unit.h"

static void add(struct fg_top *t, const char *stack, uint64_t w)
{
	uint32_t id;

	if (fg_top_stack(t, stack, strlen(stack), &id) == 0)
		fg_top_add(t, id, w);
}

static const struct fg_top_func *func(const struct fg_top_view *v, const char *name, int kind)
{
	for (size_t i = 0; i < v->nfuncs; i++)
		if (v->funcs[i].len == strlen(name) &&
		    !memcmp(v->funcs[i].name, name, strlen(name)) && v->funcs[i].kind == kind)
			return &v->funcs[i];
	return NULL;
}

static int32_t node(const struct fg_top_view *v, const char *name, uint32_t depth)
{
	for (size_t i = 0; i < v->nnodes; i++)
		if (v->nodes[i].depth == depth && v->nodes[i].len == strlen(name) &&
		    !memcmp(v->nodes[i].name, name, strlen(name)))
			return (int32_t)i;
	return -1;
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9 * (fabs(a) + fabs(b) + 1);
}

/* a view of the model as folded text */
static char *folded(struct fg_top *t, enum fg_top_mode m)
{
	struct fg_top_view *v = fg_top_view_new(t, m);
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);

	fg_top_view_write_folded(v, fp);
	fclose(fp);
	fg_top_view_free(v);
	return out;
}

TEST(tree_and_shares)
{
	struct fg_top *t = fg_top_new(10);

	add(t, "p;a;b", 3);
	add(t, "p;a;c", 1);
	add(t, "q;a", 2);
	add(t, "p;a;b;", 1); /* a trailing empty frame is dropped */
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_WINDOW);

	CHECK(near(v->total, 7));
	CHECK_INT(v->nnodes, 7); /* all, p, a, b, c, q, a */
	CHECK_INT(v->maxdepth, 3);
	/* pre-order, children by name: all p a b c q a */
	CHECK_STR(v->nodes[1].name, "p");
	CHECK(v->nodes[3].len == 1 && v->nodes[3].name[0] == 'b');
	CHECK(near(v->nodes[3].total, 4) && near(v->nodes[3].self, 4));
	CHECK(near(v->nodes[4].start, 4)); /* c after b */
	CHECK(near(v->nodes[5].start, 5)); /* q after p */
	const struct fg_top_func *a = func(v, "a", FG_TOP_USER);
	CHECK(a && near(a->total, 7) && near(a->self, 2));
	CHECK(near(v->funcs[0].self, 4)); /* b first, by self */
	fg_top_view_sort(v, FG_TOP_BY_TOTAL);
	CHECK(v->funcs[0].len == 1 && v->funcs[0].name[0] == 'a');
	CHECK_INT(v->nprocs, 2);
	CHECK(v->procs[0].name[0] == 'p' && near(v->procs[0].total, 5));
	fg_top_view_free(v);
	fg_top_free(t);
}

TEST(recursion_counted_once)
{
	struct fg_top *t = fg_top_new(10);

	add(t, "p;f;f;f;g", 2);
	add(t, "p;h", 2);
	add(t, "f;h", 1); /* a process named as a function is not the function */
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_WINDOW);
	const struct fg_top_func *f = func(v, "f", FG_TOP_USER);

	CHECK(f && near(f->total, 2) && near(f->self, 0));
	CHECK(near(func(v, "g", FG_TOP_USER)->self, 2));
	CHECK(near(func(v, "h", FG_TOP_USER)->total, 3));
	CHECK(!func(v, "p", FG_TOP_USER));
	CHECK_INT(v->nprocs, 2);
	fg_top_view_free(v);
	fg_top_free(t);
}

TEST(kinds)
{
	struct fg_top *t = fg_top_new(10);
	size_t n;

	CHECK_INT(fg_top_kind("x_[k]", 5, &n), FG_TOP_KERNEL);
	CHECK_INT(n, 1);
	CHECK_INT(fg_top_kind("x_[j]", 5, &n), FG_TOP_JIT);
	CHECK_INT(fg_top_kind("x_[i]", 5, &n), FG_TOP_INLINED);
	CHECK_INT(fg_top_kind("x_[w]", 5, &n), FG_TOP_USER);
	CHECK_INT(n, 5);
	CHECK_INT(fg_top_kind("_[k]", 4, &n), FG_TOP_USER); /* no name left */
	add(t, "p;read;read_[k]", 1);
	add(t, "p;read", 1);
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_WINDOW);
	CHECK(near(func(v, "read", FG_TOP_KERNEL)->self, 1));
	CHECK(near(func(v, "read", FG_TOP_USER)->self, 1));
	CHECK(near(func(v, "read", FG_TOP_USER)->total, 2));
	fg_top_view_free(v);
	fg_top_free(t);
}

TEST(modes_move_with_time)
{
	struct fg_top *t = fg_top_new(3);
	struct fg_top_view *v;

	add(t, "p;a", 8);
	fg_top_tick(t); /* second 0 */
	add(t, "p;b", 4);
	fg_top_tick(t); /* second 1 */
	fg_top_tick(t); /* second 2 */
	v = fg_top_view_new(t, FG_TOP_WINDOW);
	CHECK(near(v->total, 12));
	fg_top_view_free(v);
	fg_top_tick(t); /* second 3: second 0 leaves the window */
	v = fg_top_view_new(t, FG_TOP_WINDOW);
	CHECK(near(v->total, 4));
	CHECK(node(v, "a", 2) < 0);
	fg_top_view_free(v);
	v = fg_top_view_new(t, FG_TOP_ACCUMULATE);
	CHECK(near(v->total, 12));
	fg_top_view_free(v);
	/* reset: every 3 seconds, at the start of seconds 3, 6, ... */
	v = fg_top_view_new(t, FG_TOP_RESET);
	CHECK(near(v->total, 0));
	fg_top_view_free(v);
	add(t, "p;c", 5); /* the current second counts in every mode */
	v = fg_top_view_new(t, FG_TOP_RESET);
	CHECK(near(v->total, 5));
	fg_top_view_free(v);
	/* decay: halved every 3 seconds */
	v = fg_top_view_new(t, FG_TOP_DECAY);
	CHECK(near(v->nodes[node(v, "a", 2)].total, 8 * pow(0.5, 3.0 / 3)));
	CHECK(near(v->nodes[node(v, "b", 2)].total, 4 * pow(0.5, 2.0 / 3)));
	CHECK(near(v->nodes[node(v, "c", 2)].total, 5));
	fg_top_view_free(v);
	CHECK_INT(fg_top_stats(t)->ticks, 4);
	fg_top_free(t);
}

TEST(memory_follows_stacks_not_time)
{
	struct fg_top *t = fg_top_new(5);
	size_t mem = 0;

	for (int s = 0; s < 200; s++) {
		for (int k = 0; k < 100; k++) {
			char st[32];

			snprintf(st, sizeof(st), "p;f%d;g%d", k % 10, k);
			add(t, st, 1);
		}
		fg_top_tick(t);
		if (s == 20)
			mem = fg_top_stats(t)->memory;
	}
	CHECK_INT(fg_top_stats(t)->nodes, 1 + 1 + 10 + 100);
	CHECK_INT(fg_top_stats(t)->memory, mem);
	fg_top_free(t);
}

/* a view node's full name: with its annotation */
static int vname_cmp(const struct fg_top_vnode *a, const struct fg_top_vnode *b)
{
	size_t la = a->len + (a->kind != FG_TOP_USER ? 4 : 0);
	size_t lb = b->len + (b->kind != FG_TOP_USER ? 4 : 0);
	int c = memcmp(a->name, b->name, la < lb ? la : lb);

	return c ? c : (la > lb) - (la < lb);
}

/* every node's children, in the view's pre-order, strictly by name */
static bool children_in_order(const struct fg_top_view *v)
{
	int32_t *last = malloc(v->nnodes * sizeof(*last));
	bool ok = true;

	for (size_t i = 0; i < v->nnodes; i++)
		last[i] = -1;
	for (size_t i = 1; i < v->nnodes; i++) {
		int32_t p = v->nodes[i].parent;

		if (last[p] >= 0 && vname_cmp(&v->nodes[last[p]], &v->nodes[i]) >= 0)
			ok = false;
		last[p] = (int32_t)i;
	}
	free(last);
	return ok;
}

TEST(children_in_order_however_they_came)
{
	/* names that sort by their bytes: prefixes, annotations, bytes above 0x7f */
	static const char *const names[] = {"a",  "ab",	 "a_[k]", "b", "B",	"\xc3\xa9",
					    "aa", "a;b", "zz",	  "z", "m_[j]", "m"};
	struct fg_top *t = fg_top_new(10), *once = fg_top_new(10);
	char st[64];
	uint64_t rng = 42;
	int order[600];
	const int n = 600;

	for (int i = 0; i < n; i++)
		order[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j, x;

		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		j = (int)((rng >> 33) % (uint64_t)(i + 1));
		x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	/* in a shuffled order, with views between that put what came so far in order */
	for (int i = 0; i < n; i++) {
		int k = order[i];

		snprintf(st, sizeof(st), "p%d;%s;%s%d", k % 3, names[k % 12], names[(k / 12) % 12],
			 k % 5);
		add(t, st, (uint64_t)k + 1);
		if (i % 97 == 0 || i == n - 1) {
			struct fg_top_view *v = fg_top_view_new(t, FG_TOP_WINDOW);

			CHECK(children_in_order(v));
			fg_top_view_free(v);
		}
	}
	/* the same tree as the stacks in order, at once */
	for (int k = 0; k < n; k++) {
		snprintf(st, sizeof(st), "p%d;%s;%s%d", k % 3, names[k % 12], names[(k / 12) % 12],
			 k % 5);
		add(once, st, (uint64_t)k + 1);
	}
	char *a = folded(t, FG_TOP_WINDOW), *b = folded(once, FG_TOP_WINDOW);

	CHECK_STR(a, b);
	free(a);
	free(b);
	fg_top_free(t);
	fg_top_free(once);
}

TEST(search_share)
{
	struct fg_top *t = fg_top_new(10);
	char err[128];

	add(t, "p;a;b;a", 2);
	add(t, "p;a;c", 2);
	add(t, "p;d", 4);
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_WINDOW);

	CHECK_INT(fg_top_view_search(v, "^a$", err, sizeof(err)), 0);
	CHECK(v->searching);
	CHECK(near(v->matched, 4)); /* a inside a counted once */
	CHECK(v->nodes[node(v, "a", 4)].matched);
	CHECK(func(v, "a", FG_TOP_USER)->matched && !func(v, "d", FG_TOP_USER)->matched);
	/* the share of a zoom: inside p;a;c, all; inside p;d, none; inside p, half */
	CHECK(near(fg_top_view_matched_in(v, node(v, "c", 3)), 2));
	CHECK(near(fg_top_view_matched_in(v, node(v, "d", 2)), 0));
	CHECK(near(fg_top_view_matched_in(v, node(v, "p", 1)), 4));
	CHECK_INT(fg_top_view_search(v, "b|d", err, sizeof(err)), 0);
	CHECK(near(v->matched, 6));
	CHECK_INT(fg_top_view_search(v, "(", err, sizeof(err)), -EINVAL);
	CHECK(err[0] != '\0');
	CHECK(!v->searching && near(v->matched, 0));
	CHECK_INT(fg_top_view_search(v, "", err, sizeof(err)), 0);
	CHECK(!v->nodes[node(v, "a", 2)].matched);
	fg_top_view_free(v);
	fg_top_free(t);
}

TEST(layout_and_moves)
{
	struct fg_top *t = fg_top_new(10);
	struct fg_top_cell *c = NULL;
	size_t alloc = 0, n;

	add(t, "p;a;x", 60);
	add(t, "p;b", 39);
	add(t, "p;c", 1); /* 0.4 columns of 40: left out */
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_WINDOW);
	int32_t p = node(v, "p", 1), a = node(v, "a", 2), b = node(v, "b", 2), x = node(v, "x", 3);

	n = fg_top_layout(v, 0, 40, &c, &alloc);
	CHECK_INT(n, 5); /* all, p, a, b, x */
	CHECK(c[0].row == 0 && c[0].width == 40 && c[0].node == 0);
	CHECK(c[1].row == 1 && c[1].width == 40 && c[1].node == p);
	CHECK(c[2].node == a && c[2].col == 0 && c[2].width == 24);
	CHECK(c[3].node == b && c[3].col == 24 && c[3].width == 16);
	CHECK(c[4].node == x && c[4].row == 3 && c[4].width == 24);
	CHECK_INT(fg_top_nav(v, c, n, a, FG_TOP_RIGHT), b);
	CHECK_INT(fg_top_nav(v, c, n, b, FG_TOP_RIGHT), b);
	CHECK_INT(fg_top_nav(v, c, n, b, FG_TOP_LEFT), a);
	CHECK_INT(fg_top_nav(v, c, n, a, FG_TOP_UP), p);
	CHECK_INT(fg_top_nav(v, c, n, p, FG_TOP_DOWN), a); /* the widest child */
	CHECK_INT(fg_top_nav(v, c, n, a, FG_TOP_DOWN), x);
	CHECK_INT(fg_top_nav(v, c, n, x, FG_TOP_DOWN), x);
	CHECK_INT(fg_top_nav(v, c, n, 0, FG_TOP_UP), 0);
	/* a frame without a cell moves from its nearest ancestor that has one */
	CHECK_INT(fg_top_nav(v, c, n, node(v, "c", 2), FG_TOP_RIGHT), p);
	CHECK_INT(fg_top_nav(v, c, n, node(v, "c", 2), FG_TOP_STAY), p);
	CHECK_INT(fg_top_nav(v, c, n, x, FG_TOP_STAY), x);
	/* zoomed into b: its ancestors full width, b full width */
	n = fg_top_layout(v, b, 40, &c, &alloc);
	CHECK_INT(n, 3);
	CHECK(c[2].node == b && c[2].width == 40 && c[2].row == 2);
	/* zoomed into a: x fills it */
	n = fg_top_layout(v, a, 7, &c, &alloc);
	CHECK(n == 4 && c[3].node == x && c[3].width == 7);
	free(c);
	fg_top_view_free(v);
	fg_top_free(t);
}

static const char *printable(const char *s, size_t len, bool utf8, size_t cols, size_t *w)
{
	static struct fg_buf b;

	fg_buf_reset(&b);
	*w = fg_top_printable(&b, s, len, utf8, cols);
	return b.data ? b.data : "";
}

TEST(names_are_safe_on_a_terminal)
{
	size_t w;
	const char *evil = "x\033]0;pwned\007y";

	CHECK_STR(printable(evil, strlen(evil), true, 100, &w), "x\\x1b]0;pwned\\x07y");
	CHECK_INT(w, 18);
	CHECK_STR(printable("a\tb\r\n\x7f", 6, true, 100, &w), "a\\x09b\\x0d\\x0a\\x7f");
	CHECK_STR(printable("a\0b", 3, true, 100, &w), "a\\x00b");
	/* UTF-8: printable characters pass, C1 controls and bidi overrides do not */
	CHECK_STR(printable("h\xc3\xa9", 3, true, 100, &w), "h\xc3\xa9");
	CHECK_INT(w, 2);
	CHECK_STR(printable("\xc2\x9b"
			    "31m",
			    5, true, 100, &w),
		  "\\u{9b}31m");
	CHECK_STR(printable("\xe2\x80\xae"
			    "x",
			    4, true, 100, &w),
		  "\\u{202e}x");
	CHECK_STR(printable("\xe6\x97\xa5", 3, true, 100, &w), "\xe6\x97\xa5");
	CHECK_INT(w, 2); /* a wide character */
	/* invalid sequences: overlong, surrogate, cut short */
	CHECK_STR(printable("\xc0\xaf", 2, true, 100, &w), "\\xc0\\xaf");
	CHECK_STR(printable("\xed\xa0\x80", 3, true, 100, &w), "\\xed\\xa0\\x80");
	CHECK_STR(printable("a\xe6\x97", 3, true, 100, &w), "a\\xe6\\x97");
	/* not UTF-8: every byte above 0x7f */
	CHECK_STR(printable("h\xc3\xa9", 3, false, 100, &w), "h\\xc3\\xa9");
	/* cut to fit, with ".." */
	CHECK_STR(printable("function_name", 13, true, 13, &w), "function_name");
	CHECK_STR(printable("function_name", 13, true, 12, &w), "function_n..");
	CHECK_INT(w, 12);
	CHECK_STR(printable("function_name", 13, true, 3, &w), "f..");
	CHECK_STR(printable("function_name", 13, true, 2, &w), "");
	CHECK_INT(w, 0);
	/* an escape is never cut in half */
	CHECK_STR(printable("ab\033cd", 5, true, 6, &w), "ab..");
	CHECK_STR(printable("\xe6\x97\xa5\xe6\x97\xa5\xe6\x97\xa5", 9, true, 5, &w),
		  "\xe6\x97\xa5..");
	CHECK_INT(w, 4);
}

TEST(colours_by_kind)
{
	struct fg_rgb k = fg_top_color("vfs_read", 8, FG_TOP_KERNEL);
	struct fg_rgb j = fg_top_color("Interpreter", 11, FG_TOP_JIT);
	struct fg_rgb i = fg_top_color("inlined", 7, FG_TOP_INLINED);
	struct fg_rgb u = fg_top_color("main", 4, FG_TOP_USER);

	CHECK(k.b == 0 && k.r > k.g);		      /* orange */
	CHECK(j.g >= 200 && j.g > j.r);		      /* green */
	CHECK(i.g >= 165 && i.g == i.b && i.r < i.g); /* aqua */
	CHECK(u.r >= 200 && u.g == u.b);	      /* red */
	CHECK_INT(fg_top_xterm256((struct fg_rgb){255, 0, 0}), 196);
	CHECK_INT(fg_top_xterm256((struct fg_rgb){0, 0, 0}), 16);
	CHECK_INT(fg_top_xterm256((struct fg_rgb){128, 128, 128}), 244);
	CHECK_INT(fg_top_xterm256((struct fg_rgb){255, 255, 255}), 231);
}

/* --- the input layer --- */

static const char perf_text[] =
    "# a comment\n"
    "app 10/10 [000] 1.000001: 100 cpu-clock:\n"
    "\tffffffff81000010 native_safe_halt+0x10 ([kernel.kallsyms])\n"
    "\t    55d0c0de1000 compute+0x1a (/usr/bin/app)\n"
    "\t    55d0c0de2000 main+0x40 (/usr/bin/app)\n"
    "\n"
    "app 10/11 [001] 1.000002: 100 cpu-clock:\n"
    "\t    55d0c0de1000 compute+0x1a (/usr/bin/app)\n"
    "\t    55d0c0de2000 main+0x40 (/usr/bin/app)\n"
    "\n"
    "not a line of perf script\n"
    "\n"
    "app 10/11 [001] 1.000003: 5 page-faults:\n"
    "\t    55d0c0de1000 compute+0x1a (/usr/bin/app)\n"
    "\n"
    "java 20/21 [001] 1.000004: 100 cpu-clock:\n"
    "\t    7f1234000200 Ljava/util/HashMap;::get->Ljava/util/HashMap;::hash (/tmp/perf-20.map)\n"
    "\t    55d0c0de2000 main+0x40 (/usr/bin/java)\n"
    "\n"
    "app 10/10 [000] 1.000005: 300 cpu-clock:\n"
    "\tffffffff81000010 native_safe_halt+0x20 ([kernel.kallsyms])\n"
    "\t    55d0c0de1000 compute+0x1a (/usr/bin/app)\n"
    "\t    55d0c0de2000 main+0x40 (/usr/bin/app)\n"
    "\tthis is no frame\n"
    "\n";

struct logged {
	char msgs[8][200];
	int n;
};

static void log_cb(void *ctx, const char *msg)
{
	struct logged *l = ctx;

	if (l->n < 8)
		snprintf(l->msgs[l->n++], sizeof(l->msgs[0]), "%s", msg);
}

/* fold `text` with fg_fold at once and with the feed in pieces of `step` bytes */
static bool same_as_fold(const char *text, size_t len, size_t step, const struct fg_fold_opts *o,
			 struct fg_top_feed_stats *out_st)
{
	struct fg_top *whole = fg_top_new(3), *t = fg_top_new(3);
	struct fg_fold *f = fg_fold_new(o, NULL, NULL);
	struct fg_top_feed *in = fg_top_feed_new(t, o, "in", NULL, NULL);
	char *out = NULL;
	size_t outlen = 0;
	FILE *fp = open_memstream(&out, &outlen);
	bool same;

	fg_fold_read_mem(f, text, len, "in");
	fg_fold_write(f, fp);
	fclose(fp);
	fg_top_add_folded(whole, out, outlen, NULL, NULL, NULL);
	for (size_t pos = 0; pos < len; pos += step) {
		fg_top_feed_append(in, text + pos, pos + step <= len ? step : len - pos);
		fg_top_feed_process(in);
	}
	fg_top_feed_finish(in);

	char *a = folded(whole, FG_TOP_ACCUMULATE), *b = folded(t, FG_TOP_ACCUMULATE);
	const struct fg_top_feed_stats *st = fg_top_feed_stats(in);
	const struct fg_fold_stats *fst = fg_fold_stats(f);

	same = strcmp(a, b) == 0 && st->samples == fst->samples &&
	       st->other_events == fst->other_events && st->bad_lines == fst->bad_lines;
	if (!same)
		printf("# step %zu:\n# fold: %s\n# feed: %s\n", step, a, b);
	if (out_st) {
		static char event[64];

		*out_st = *st;
		snprintf(event, sizeof(event), "%s", st->event ? st->event : "");
		out_st->event = event;
	}
	free(a);
	free(b);
	free(out);
	fg_top_feed_free(in);
	fg_fold_free(f);
	fg_top_free(t);
	fg_top_free(whole);
	return same;
}

TEST(feed_folds_as_fg_fold)
{
	struct fg_fold_opts o = {.annotate_kernel = true, .annotate_jit = true};
	struct fg_top_feed_stats st;

	for (size_t step = 1; step <= sizeof(perf_text); step += step < 40 ? 1 : 37)
		CHECK(same_as_fold(perf_text, sizeof(perf_text) - 1, step, &o, &st));
	CHECK_INT(st.samples, 4);
	CHECK_INT(st.other_events, 1);
	CHECK_INT(st.bad_lines, 2);
	CHECK_INT(st.input, FG_FOLD_PERF);
	CHECK_STR(st.event, "cpu-clock");
	o.include_tid = true;
	o.count_samples = true;
	CHECK(same_as_fold(perf_text, sizeof(perf_text) - 1, 7, &o, NULL));
	o = (struct fg_fold_opts){.event_filter = "page-faults"};
	CHECK(same_as_fold(perf_text, sizeof(perf_text) - 1, 11, &o, &st));
	CHECK_INT(st.samples, 1);

	static const char folded_text[] = "a;b 3\na;b;c 1\n\nx;y 2\r\na;b 4\nb;c 1 2\n";
	o = (struct fg_fold_opts){0};
	for (size_t step = 1; step < sizeof(folded_text); step++)
		CHECK(same_as_fold(folded_text, sizeof(folded_text) - 1, step, &o, &st));
	CHECK_INT(st.input, FG_FOLD_FOLDED);
	CHECK_INT(st.samples, 5);
	/* a bad line among the first lines makes perf script of it, as for fg-fold */
	static const char bad_folded[] = "a;b 3\nbad line\nx;y 2\n";
	for (size_t step = 1; step < sizeof(bad_folded); step++)
		CHECK(same_as_fold(bad_folded, sizeof(bad_folded) - 1, step, &o, &st));
	CHECK_INT(st.input, FG_FOLD_PERF);
	o.input = FG_FOLD_FOLDED;
	for (size_t step = 1; step < sizeof(bad_folded); step++)
		CHECK(same_as_fold(bad_folded, sizeof(bad_folded) - 1, step, &o, &st));
	CHECK_INT(st.bad_lines, 1);
	o.input = FG_FOLD_AUTO;

	static const char bpf_text[] =
	    "Attaching 1 probe...\n\n@[\n    hot+4\n    main+40\n, app]: 3\n"
	    "\n@[\n    cold+8\n    main+40\n, app]: 2\n";
	for (size_t step = 1; step < sizeof(bpf_text); step++)
		CHECK(same_as_fold(bpf_text, sizeof(bpf_text) - 1, step, &o, &st));
	CHECK_INT(st.input, FG_FOLD_BPFTRACE);
}

TEST(feed_reuses_folds_and_says_where)
{
	struct fg_top *t = fg_top_new(3);
	struct fg_fold_opts o = {.annotate_kernel = true, .annotate_jit = true};
	struct logged l = {.n = 0};
	struct fg_top_feed *in = fg_top_feed_new(t, &o, "in", log_cb, &l);

	for (int i = 0; i < 100; i++) {
		fg_top_feed_append(in, perf_text, sizeof(perf_text) - 1);
		CHECK_INT(fg_top_feed_process(in), 0);
	}
	CHECK_INT(fg_top_feed_finish(in), 0);
	const struct fg_top_feed_stats *st = fg_top_feed_stats(in);
	CHECK_INT(st->samples, 400);
	CHECK_INT(st->other_events, 100);
	CHECK_INT(st->bad_lines, 200);
	/*
	 * the four samples of frames only (one of another event) come from
	 * fg_fold's sample cache once seen; the one with a bad line never does
	 */
	CHECK_INT(st->hits, 99 * 4);
	/* messages name the input's line, ten at most, then say so once */
	CHECK_STR(l.msgs[0], "in:11: line outside a sample skipped: 'not a line of perf script'");
	CHECK_STR(l.msgs[1], "in:24: unrecognized line skipped: '\\tthis is no frame'");
	CHECK(l.n >= 2);
	fg_top_feed_free(in);

	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_ACCUMULATE);
	CHECK(near(v->total, 100 * 600));
	const struct fg_top_func *h = func(v, "native_safe_halt", FG_TOP_KERNEL);
	CHECK(h && near(h->self, 100 * 400));
	CHECK(func(v, "java/util/HashMap:::get", FG_TOP_JIT));
	CHECK(func(v, "java/util/HashMap:::hash", FG_TOP_INLINED));
	fg_top_view_free(v);
	fg_top_free(t);
}

/*
 * Reads that cut samples anywhere: each sample is still folded whole, so the
 * sample cache finds all but the first of each key, and nothing is lost
 */
TEST(feed_folds_samples_whole_across_reads)
{
	struct fg_top *t = fg_top_new(3);
	struct fg_fold_opts o = {.annotate_kernel = true};
	struct fg_top_feed *in = fg_top_feed_new(t, &o, "in", NULL, NULL);
	struct fg_buf b = FG_BUF_INIT;

	for (int i = 0; i < 600; i++)
		fg_buf_addf(&b,
			    "app 1/1 [000] 1.0: 10 cpu-clock:\n"
			    "\t%16x leaf+0x%x (/usr/bin/app)\n"
			    "\t%16x caller%d+0x10 (/usr/bin/app)\n"
			    "\t    55d0c0de2000 main+0x40 (/usr/bin/app)\n\n",
			    0x1000 + i % 7, i % 7, 0x2000 + i % 3, i % 3);
	/* pieces of 97 bytes, then 1, then 2, ...: cut within lines and between them */
	for (size_t pos = 0, step = 97; pos < b.len; pos += step, step = step % 200 + 1) {
		fg_top_feed_append(in, b.data + pos, pos + step <= b.len ? step : b.len - pos);
		CHECK_INT(fg_top_feed_process(in), 0);
	}
	CHECK_INT(fg_top_feed_finish(in), 0);
	CHECK_INT(fg_top_feed_stats(in)->samples, 600);
	CHECK_INT(fg_top_feed_stats(in)->hits, 597);
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_ACCUMULATE);
	CHECK(near(func(v, "leaf", FG_TOP_USER)->self, 6000));
	CHECK(near(func(v, "caller1", FG_TOP_USER)->total, 2000));
	fg_top_view_free(v);
	fg_top_feed_free(in);
	fg_top_free(t);
	fg_buf_release(&b);
}

/* the feed holds a stack's weights until the model's next tick or view: they count in their second
 */
TEST(feed_samples_count_in_their_second)
{
	struct fg_top *t = fg_top_new(2);
	struct fg_fold_opts o = {0};
	struct fg_top_feed *in = fg_top_feed_new(t, &o, "in", NULL, NULL);
	const char *s = "app 1/1 [000] 1.0: 10 cpu-clock:\n\t1000 leaf+0x1 (/b/app)\n\n";

	for (int sec = 0; sec < 2; sec++) {
		for (int i = 0; i < 3 - sec; i++) {
			fg_top_feed_append(in, s, strlen(s));
			CHECK_INT(fg_top_feed_process(in), 0);
		}
		fg_top_tick(t);
	}
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_WINDOW);
	CHECK(near(func(v, "leaf", FG_TOP_USER)->self, 50));
	fg_top_view_free(v);
	fg_top_tick(t); /* the first second leaves the window */
	v = fg_top_view_new(t, FG_TOP_WINDOW);
	CHECK(near(func(v, "leaf", FG_TOP_USER)->self, 20));
	fg_top_view_free(v);
	/* what came after the last tick is in the next view, and stays when the feed goes */
	fg_top_feed_append(in, s, strlen(s));
	CHECK_INT(fg_top_feed_process(in), 0);
	fg_top_feed_free(in);
	fg_top_tick(t);
	v = fg_top_view_new(t, FG_TOP_ACCUMULATE);
	CHECK(near(func(v, "leaf", FG_TOP_USER)->self, 60));
	fg_top_view_free(v);
	fg_top_free(t);
}

TEST(feed_reuses_folds_at_other_addresses)
{
	struct fg_top *t = fg_top_new(3);
	struct fg_fold_opts o = {.annotate_kernel = true};
	struct fg_top_feed *in = fg_top_feed_new(t, &o, "in", NULL, NULL);
	char s[512];

	/* one stack, at 300 leaf addresses and 3 return addresses of its caller */
	for (int i = 0; i < 900; i++) {
		int n = snprintf(s, sizeof(s),
				 "app 1/1 [000] 1.0: 10 cpu-clock:\n"
				 "\t%16x leaf+0x%x (/usr/bin/app)\n"
				 "\t%16x caller+0x%x (/usr/bin/app)\n"
				 "\t    55d0c0de2000 main+0x40 (/usr/bin/app)\n\n",
				 0x1000 + i % 300, i % 300, 0x2000 + i % 3, i % 3);
		fg_top_feed_append(in, s, (size_t)n);
		CHECK_INT(fg_top_feed_process(in), 0);
	}
	CHECK_INT(fg_top_feed_finish(in), 0);
	CHECK_INT(fg_top_feed_stats(in)->samples, 900);
	/* three keys: the leaf's address is not in it, its caller's line is */
	CHECK_INT(fg_top_feed_stats(in)->hits, 897);
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_ACCUMULATE);
	CHECK_INT(v->nnodes, 5);
	CHECK(near(func(v, "leaf", FG_TOP_USER)->self, 9000));
	fg_top_view_free(v);
	fg_top_feed_free(in);
	fg_top_free(t);
}

TEST(feed_refuses_what_fg_fold_refuses)
{
	struct fg_top *t = fg_top_new(3);
	struct fg_fold_opts o = {0};
	struct logged l = {.n = 0};
	struct fg_top_feed *in = fg_top_feed_new(t, &o, "in", log_cb, &l);

	fg_top_feed_append(in, "a;b 1 2\n", 8);
	CHECK_INT(fg_top_feed_finish(in), -EINVAL);
	CHECK(strstr(l.msgs[0], "two count columns") != NULL);
	fg_top_feed_free(in);

	in = fg_top_feed_new(t, &o, "in", log_cb, &l);
	fg_top_feed_append(in, "FGSTACK1\0\0\0\0", 12);
	CHECK_INT(fg_top_feed_finish(in), -EMEDIUMTYPE);
	CHECK(strstr(l.msgs[1], "in: binary input") == l.msgs[1]);
	fg_top_feed_free(in);

	/* counts past 2^64-1 leave their line out, as fg_fold does; decimals are taken */
	in = fg_top_feed_new(t, &o, "in", log_cb, &l);
	fg_top_feed_append(in, "a;b 18446744073709551616\na;b 1\nc 2.5\n", 37);
	CHECK_INT(fg_top_feed_finish(in), 0);
	CHECK_INT(fg_top_feed_stats(in)->refused, 1);
	CHECK_INT(fg_top_feed_stats(in)->samples, 2);
	fg_top_feed_free(in);
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_ACCUMULATE);
	CHECK(near(v->total, 3.5));
	fg_top_view_free(v);
	fg_top_free(t);
}

TEST(feed_stops_at_its_next_sample)
{
	struct fg_fold_opts o = {.input = FG_FOLD_FOLDED};
	struct fg_top *t = fg_top_new(10);
	struct fg_top_feed *in = fg_top_feed_new(t, &o, "stop", NULL, NULL);
	char text[1300];
	size_t len = 0;

	/* lines enough for fg_fold to see what the input is */
	for (int i = 0; i < 100; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "a;b 1\na;c 2\n");
	fg_top_feed_append(in, text, len);
	CHECK_INT(fg_top_feed_process(in), 0);
	CHECK(fg_top_feed_stats(in)->samples >= 199); /* the last line may wait for the next */
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_ACCUMULATE);
	double before = v->total;

	CHECK(before >= 298);
	fg_top_view_free(v);
	/* from another thread, as fg-top quits: what is read is not folded */
	fg_top_feed_stop(in);
	fg_top_feed_append(in, text, len);
	CHECK_INT(fg_top_feed_process(in), -ECANCELED);
	CHECK_INT(fg_top_feed_finish(in), -ECANCELED);
	v = fg_top_view_new(t, FG_TOP_ACCUMULATE);
	CHECK(near(v->total, before));
	fg_top_view_free(v);
	fg_top_feed_free(in);
	fg_top_free(t);
}

TEST(feed_memory_is_bounded)
{
	struct fg_top *t = fg_top_new(2);
	struct fg_fold_opts o = {0};
	struct fg_top_feed *in = fg_top_feed_new(t, &o, "in", NULL, NULL);
	size_t mem = 0;

	for (int i = 0; i < 3000; i++) {
		fg_top_feed_append(in, perf_text, sizeof(perf_text) - 1);
		CHECK_INT(fg_top_feed_process(in), 0);
		if (i % 100 == 0)
			fg_top_tick(t);
		if (i == 1000)
			mem = fg_top_stats(t)->memory;
	}
	CHECK_INT(fg_top_stats(t)->memory, mem);
	fg_top_feed_free(in);
	fg_top_free(t);
}

int main(void)
{
	setlocale(LC_CTYPE, "C.UTF-8");
	RUN(tree_and_shares);
	RUN(recursion_counted_once);
	RUN(kinds);
	RUN(modes_move_with_time);
	RUN(memory_follows_stacks_not_time);
	RUN(children_in_order_however_they_came);
	RUN(search_share);
	RUN(layout_and_moves);
	RUN(names_are_safe_on_a_terminal);
	RUN(colours_by_kind);
	RUN(feed_folds_as_fg_fold);
	RUN(feed_reuses_folds_and_says_where);
	RUN(feed_folds_samples_whole_across_reads);
	RUN(feed_samples_count_in_their_second);
	RUN(feed_reuses_folds_at_other_addresses);
	RUN(feed_refuses_what_fg_fold_refuses);
	RUN(feed_stops_at_its_next_sample);
	RUN(feed_memory_is_bounded);
	return unit_done();
}
