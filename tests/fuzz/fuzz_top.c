// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz fg-top's input layer against fg_fold: any bytes, cut into pieces of
 * any sizes as a pipe might deliver them, must give fg-top's model exactly
 * the stacks, counts and skipped lines that fg_fold gives reading the whole
 * input at once.  Then the views, the search and the layout run on the
 * result, and every name is made printable: nothing may crash, leak, or let
 * a control byte through.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/fold.h"
#include "fg/top.h"
#include "fg/topfeed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the model's stacks as folded text, in a fixed order */
static char *folded(struct fg_top *t, size_t *len)
{
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_ACCUMULATE);
	char *out = NULL;
	FILE *fp = open_memstream(&out, len);

	if (!fp || fg_top_view_write_folded(v, fp) != 0)
		abort();
	fclose(fp);
	fg_top_view_free(v);
	return out;
}

static void exercise(struct fg_top *t, const char *pattern)
{
	struct fg_top_view *v = fg_top_view_new(t, FG_TOP_WINDOW);
	struct fg_top_cell *cells = NULL;
	size_t alloc = 0, n;
	struct fg_buf b = FG_BUF_INIT;
	char err[64];

	fg_top_view_sort(v, FG_TOP_BY_TOTAL);
	(void)fg_top_view_search(v, pattern, err, sizeof(err));
	for (size_t i = 0; i < v->nnodes; i++) {
		fg_buf_reset(&b);
		(void)fg_top_printable(&b, v->nodes[i].name, v->nodes[i].len, i & 1, 3 + i % 40);
		for (size_t k = 0; k < b.len; k++)
			if ((unsigned char)b.data[k] < 0x20 || b.data[k] == 0x7f ||
			    (!(i & 1) && (unsigned char)b.data[k] >= 0x80))
				abort();
	}
	n = fg_top_layout(v, (int32_t)(v->nnodes / 2), 40, &cells, &alloc);
	for (size_t i = 0; i < n; i++) {
		if (cells[i].col + cells[i].width > 40 || cells[i].width == 0)
			abort();
		(void)fg_top_nav(v, cells, n, cells[i].node, (enum fg_top_dir)(i % 5));
	}
	if (v->nnodes)
		(void)fg_top_view_matched_in(v, (int32_t)(v->nnodes - 1));
	free(cells);
	fg_buf_release(&b);
	fg_top_view_free(v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_fold_opts o = {.annotate_kernel = true, .annotate_jit = true};
	const char *text;
	size_t len;

	if (size < 2)
		return 0;
	uint8_t a = data[0], seed = data[1];
	o.input = (enum fg_fold_input)(a & 3);
	o.include_pid = a & 4;
	o.include_tid = a & 8;
	o.count_samples = a & 16;
	if (a & 32)
		o.event_filter = "cycles";
	text = (const char *)data + 2;
	len = size - 2;

	/* fg_fold, the whole input at once */
	struct fg_top *whole = fg_top_new(3);
	struct fg_fold *f = fg_fold_new(&o, NULL, NULL);
	int r1 = fg_fold_read_mem(f, text, len, "fuzz");
	char *out = NULL;
	size_t outlen = 0;
	FILE *fp = open_memstream(&out, &outlen);

	fg_fold_write(f, fp);
	fclose(fp);
	const struct fg_fold_stats *fst = fg_fold_stats(f);
	if (r1 == 0 && fst->columns != 2)
		r1 = fg_top_add_folded(whole, out, outlen, NULL, NULL, NULL);
	free(out);

	/* fg-top's feed, in pieces */
	struct fg_top *t = fg_top_new(3);
	struct fg_top_feed *in = fg_top_feed_new(t, &o, "fuzz", NULL, NULL);
	int r2 = 0;
	size_t pos = 0, k = 0;

	while (pos < len && r2 == 0) {
		size_t n = 1 + (size_t)((seed * 31u + k * 17u) % 97u);

		if ((seed & 7) == 0)
			n = len; /* all at once */
		if (n > len - pos)
			n = len - pos;
		fg_top_feed_append(in, text + pos, n);
		r2 = fg_top_feed_process(in);
		pos += n;
		k++;
		if (k % 5 == 0)
			fg_top_tick(t);
		if (k % 3 == 0) /* a view orders the frames that came since the last */
			fg_top_view_free(fg_top_view_new(t, FG_TOP_WINDOW));
	}
	if (r2 == 0)
		r2 = fg_top_feed_finish(in);

	const struct fg_top_feed_stats *st = fg_top_feed_stats(in);

	if (fst->columns == 2) {
		if (r1 == 0 && r2 != -EINVAL)
			abort(); /* a differential profile is refused */
	} else if (r1 == 0 && r2 == 0) {
		size_t l1, l2;
		char *s1 = folded(whole, &l1), *s2 = folded(t, &l2);

		if (l1 != l2 || memcmp(s1, s2, l1) != 0)
			abort(); /* other stacks than fg_fold's */
		if (st->samples != fst->samples || st->other_events != fst->other_events ||
		    st->filtered != fst->filtered || st->bad_lines != fst->bad_lines ||
		    st->sideband != fst->sideband || st->extra_lines != fst->extra_lines ||
		    st->long_lines != fst->long_lines || st->damaged != fst->damaged ||
		    st->lost_records != fst->lost_records || st->lost != fst->lost ||
		    st->refused != fst->refused)
			abort(); /* other counts than fg_fold's */
		free(s1);
		free(s2);
	} else if ((r1 < 0) != (r2 < 0)) {
		abort(); /* bad input (binary) is bad to both */
	}
	exercise(t, (a & 64) ? "a|b" : "(");
	fg_top_feed_free(in);
	fg_top_free(t);
	fg_top_free(whole);
	fg_fold_free(f);
	return 0;
}
