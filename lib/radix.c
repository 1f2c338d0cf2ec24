// SPDX-License-Identifier: BSD-2-Clause
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/radix.h"
#include "fg/diag.h"

/* a record's key and where it is */
struct kv {
	uint64_t k;
	size_t i;
};

void fg_radix_sort(void *base, size_t n, size_t size, size_t key)
{
	unsigned char *b = base, *out;
	struct kv *src, *dst, *t;
	uint64_t first, differ = 0;

	if (n < 2)
		return;
	if (n > SIZE_MAX / 2 / (size > sizeof(*src) ? size : sizeof(*src)))
		fg_diex("out of memory (sorting %zu records of %zu bytes)", n, size);
	src = fg_xmalloc(2 * n * sizeof(*src));
	dst = src + n;
	/* the keys, and the bits in which some key differs from the first: the passes needed */
	memcpy(&first, b + key, sizeof(first));
	for (size_t i = 0; i < n; i++) {
		memcpy(&src[i].k, b + i * size + key, sizeof(src[i].k));
		src[i].i = i;
		differ |= src[i].k ^ first;
	}
	for (unsigned shift = 0; shift < 64 && differ; shift += 8) {
		size_t count[256] = {0}, at = 0;

		if (!(differ >> shift & 0xff))
			continue; /* every key has the same byte here */
		for (size_t i = 0; i < n; i++)
			count[src[i].k >> shift & 0xff]++;
		for (size_t d = 0; d < 256; d++) {
			size_t c = count[d];

			count[d] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[src[i].k >> shift & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (differ) {
		/* the records moved once, into their order */
		out = fg_xmalloc(n * size);
		for (size_t i = 0; i < n; i++)
			memcpy(out + i * size, b + src[i].i * size, size);
		memcpy(b, out, n * size);
		free(out);
	}
	free(src < dst ? src : dst);
}
