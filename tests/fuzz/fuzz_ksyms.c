// SPDX-License-Identifier: BSD-2-Clause
/* Fuzz the kallsyms parser and lookup: any text parses or names a bad line. */
#include <stdint.h>
#include <stdlib.h>

#include "fg/ksyms.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t bad = 0;
	struct fg_ksyms *k = fg_ksyms_parse((const char *)data, size, &bad);

	if (!k) {
		if (!bad) /* a refusal names its line */
			abort();
		return 0;
	}
	for (size_t i = 0; i < size && i < 64; i += 8) {
		uint64_t a = 0;

		for (size_t j = 0; j < 8 && i + j < size; j++)
			a = a << 8 | data[i + j];
		const struct fg_ksym *s = fg_ksyms_lookup(k, a);
		if (s && (a < s->addr || a >= s->end || !s->name))
			abort();
	}
	fg_ksyms_free(k);
	return 0;
}
