// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the JIT map parser, fed in two pieces as a JIT appends: lookups find
 * entries that hold the address.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fg/perfmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_perfmap *pm = fg_perfmap_new();
	size_t half = size / 2, used;
	uint64_t bad = 0;

	used = fg_perfmap_add(pm, (const char *)data, half, &bad);
	if (used > half)
		abort();
	fg_perfmap_add(pm, (const char *)data + used, size - used, &bad);
	for (size_t i = 0; i + 8 <= size && i < 128; i += 8) {
		uint64_t a = 0;

		for (int j = 0; j < 8; j++)
			a = a << 8 | data[i + j];
		const struct fg_perfmap_ent *e = fg_perfmap_lookup(pm, a);
		if (e && (a < e->start || a - e->start >= e->size))
			abort();
	}
	fg_perfmap_free(pm);
	return 0;
}
