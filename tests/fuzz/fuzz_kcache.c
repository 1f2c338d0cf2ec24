// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the kernel symbol cache reader: any bytes are adopted as a table that
 * answers lookups within its symbols, or refused as malformed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "fg/ksyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fg_ksyms *k = fg_ksyms_parse_cache(data, size, NULL);

	if (!k) {
		if (errno != EINVAL) /* a refusal says the cache is malformed */
			abort();
		return 0;
	}
	if (!fg_ksyms_from_cache(k))
		abort();
	for (size_t i = 0; i + 8 <= size && i < 512; i += 8) {
		uint64_t a = 0;
		bool sure;

		for (size_t j = 0; j < 8; j++)
			a = a << 8 | data[i + j];
		const struct fg_ksym *s = fg_ksyms_lookup_sure(k, a, &sure);
		if (s && (a < s->addr || a >= s->end || !s->name))
			abort();
		if (!s && sure)
			abort();
	}
	fg_ksyms_free(k);
	return 0;
}
