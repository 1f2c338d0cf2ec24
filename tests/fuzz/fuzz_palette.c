// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the small files fg-svg reads besides its input: palette maps
 * (NAME->rgb(R,G,B) a line) and --nameattr files (NAME<TAB>key=value...).
 * Any bytes parse or are rejected without crashing; what a palette map keeps
 * is written out and read back the same; every attribute string a --nameattr
 * line keeps is valid text for the inside of an SVG tag.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/hash.h"
#include "fg/palette.h"
#include "fg/svg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct fg_hash *m = fg_hash_new(0), *again = fg_hash_new(0), *attrs = fg_hash_new(0);
	uint64_t bad, first;
	size_t pos = 0;

	fg_palette_map_parse(m, text, size, &bad, &first);
	if (bad > size || (bad && !first))
		abort();
	/* the map as fg_palette_map_write writes it, read back */
	{
		char *out = NULL;
		size_t outlen = 0;
		FILE *f = open_memstream(&out, &outlen);

		if (!f)
			abort();
		for (size_t i = 0; i < fg_hash_count(m); i++) {
			struct fg_hash_entry *e = fg_hash_at(m, i);
			struct fg_rgb c = fg_rgb_unpack(e->val.u);

			if (memchr(e->key, '\n', e->len))
				continue; /* cannot be: lines are split at newlines */
			fwrite(e->key, 1, e->len, f);
			fprintf(f, "->rgb(%u,%u,%u)\n", c.r, c.g, c.b);
		}
		fclose(f);
		fg_palette_map_parse(again, out, outlen, &bad, &first);
		if (bad || fg_hash_count(again) != fg_hash_count(m))
			abort();
		for (size_t i = 0; i < fg_hash_count(m); i++) {
			struct fg_hash_entry *e = fg_hash_at(m, i);
			struct fg_hash_entry *g = fg_hash_get(again, e->key, e->len);

			if (!g || g->val.u != e->val.u)
				abort();
		}
		free(out);
	}
	while (pos < size) {
		const char *line = text + pos, *nl = memchr(line, '\n', size - pos);
		size_t n = nl ? (size_t)(nl - line) : size - pos;

		pos += n + 1;
		fg_svg_nameattr_line(attrs, line, n);
	}
	for (size_t i = 0; i < fg_hash_count(attrs); i++) {
		const struct fg_nameattr *na = fg_hash_at(attrs, i)->val.p;

		size_t quotes = 0;

		if (!na->attrs)
			continue;
		/* escaped: no markup can start inside the tag, no value ends early */
		if (strpbrk(na->attrs, "<>\t\n"))
			abort();
		for (const char *q = na->attrs; (q = strchr(q, '"')); q++)
			quotes++;
		if (quotes % 2)
			abort();
	}
	fg_svg_nameattr_free(attrs);
	fg_hash_free(again);
	fg_hash_free(m);
	return 0;
}
