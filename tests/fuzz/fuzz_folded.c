// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the folded-stack parser and what fg-svg builds on it: any bytes parse
 * or are rejected without crashing, the frames stay inside the line, and the
 * SVG drawn from them is valid UTF-8 with exactly one <script> element, so no
 * name turns into markup.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/flame.h"
#include "fg/folded.h"
#include "fg/svg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count(const char *hay, size_t n, const char *needle)
{
	size_t k = 0, m = strlen(needle);
	const char *p = hay, *end = hay + n;

	while ((p = memmem(p, (size_t)(end - p), needle, m)) != NULL) {
		k++;
		p += m;
	}
	return k;
}

static void check_utf8(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len = c < 0x80		      ? 1
			     : c >= 0xc2 && c <= 0xdf ? 2
			     : c >= 0xe0 && c <= 0xef ? 3
			     : c >= 0xf0 && c <= 0xf4 ? 4
						      : 0;

		if (!len || i + len > n)
			abort();
		for (size_t j = 1; j < len; j++)
			if ((s[i + j] & 0xc0) != 0x80)
				abort();
		if (c < 0x20 && c != '\n' && c != '\t')
			abort();
		i += len;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct fg_flame_opts fo = {0};
	struct fg_svg_opts so;
	struct fg_flame *f;
	size_t pos = 0, outlen = 0;
	char *copy, *out = NULL;
	FILE *mem;

	/* every line: parsed within its bounds, or rejected */
	while (pos < size) {
		const char *line = text + pos, *nl = memchr(line, '\n', size - pos);
		size_t n = nl ? (size_t)(nl - line) : size - pos, fpos = 0, flen, seen = 0;
		struct fg_folded fl;
		const char *frame;

		pos += n + 1;
		if (fg_folded_parse(line, n, &fl) < 0)
			continue;
		if (fl.stack != line || fl.stack_len >= n || !(fl.count >= 0) ||
		    fl.count_text < line || fl.count_text + fl.count_text_len > line + n)
			abort();
		while (fg_folded_next_frame(fl.stack, fl.stack_len, &fpos, &frame, &flen)) {
			if (frame < fl.stack || frame + flen > fl.stack + fl.stack_len ||
			    memchr(frame, ';', flen))
				abort();
			seen += flen + 1;
		}
		if (seen > fl.stack_len + 1)
			abort();
		/* the exact count: its text again when written, and a sum never wraps */
		struct fg_count c, c2, sum = {0};
		char buf[48];
		if (fg_count_parse(fl.count_text, fl.count_text_len, &c) == 0) {
			int k = fg_count_format(&c, buf, sizeof(buf));

			if (k <= 0 || (size_t)k >= sizeof(buf) ||
			    fg_count_parse(buf, (size_t)k, &c2) != 0 || c2.whole != c.whole ||
			    c2.frac != c.frac || c2.dec != c.dec)
				abort();
			if (fg_count_add(&sum, &c) != 0 ||
			    fg_count_add(&sum, &c) == 0 && sum.whole < c.whole)
				abort();
		}
	}

	/* the whole input as a graph; the first byte picks some options */
	fo.reverse = size > 0 && (data[0] & 1);
	fo.flamechart = size > 0 && (data[0] & 2);
	fo.chain = size > 0 && (data[0] & 4);
	f = fg_flame_new(&fo);
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	fg_flame_add_input(f, copy, size);
	fg_flame_build(f, f->total / 1000);
	fg_svg_opts_init(&so);
	so.inverted = size > 0 && (data[0] & 8);
	so.timemax = f->total;
	mem = open_memstream(&out, &outlen);
	if (mem && f->total > 0) {
		if (fg_svg_write(mem, f, &so) < 0)
			abort();
		fclose(mem);
		check_utf8((const unsigned char *)out, outlen);
		if (count(out, outlen, "<script") != 1 || count(out, outlen, "]]>") != 1)
			abort();
	} else if (mem) {
		fclose(mem);
	}
	free(out);
	fg_flame_free(f);
	free(copy);
	return 0;
}
