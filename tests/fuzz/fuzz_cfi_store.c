// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the reader of the unwind tables kept between runs: any bytes are a
 * table that answers lookups and writes back to the very same bytes, or are
 * refused at an offset within them.  The checksum is set right first (a
 * fuzzer would not find one), so that what lies behind it is exercised: the
 * header's counts, the identity, the rows' order and their rules.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/cfi_store.h"
#include "fg/hash.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned char id[] = "fuzz";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char *p = malloc(size ? size : 1);
	struct fg_buf b = FG_BUF_INIT;
	struct fg_cfi *c;
	size_t bad_at = SIZE_MAX;

	if (!p)
		abort();
	memcpy(p, data, size);
	if (size >= 16) {
		uint64_t sum = fg_hash_bytes(p + 16, size - 16, 0);

		memcpy(p + 8, &sum, sizeof(sum));
	}
	c = fg_cfi_store_parse(p, size, id, sizeof(id), &bad_at);
	if (!c) {
		if (bad_at > size)
			abort();
		free(p);
		return 0;
	}
	for (size_t i = 0; i + 4 <= size && i < 256; i += 4) {
		uint32_t a;

		memcpy(&a, p + i, sizeof(a));
		if (!fg_cfi_lookup(c, c->base + a))
			abort();
	}
	fg_cfi_store_format(c, id, sizeof(id), &b);
	if (b.len != size || memcmp(b.data, p, size) != 0)
		abort();
	fg_buf_release(&b);
	fg_cfi_free(c);
	free(p);
	return 0;
}
