// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz CPython's line-table decoders (lib/pyline): any table, in each
 * format, at any offset gives a line, no line, or a refusal naming a byte
 * inside the table; never a read past it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/pyline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum fg_pyline_format fmts[] = {FG_PYLINE_LNOTAB, FG_PYLINE_RANGES,
						     FG_PYLINE_LOCATIONS};
	uint32_t offset = 0;
	int32_t first = 0;
	uint8_t *t;

	/* the first 8 bytes: the offset and the first line; the rest the table, a copy of its size
	 */
	if (size >= 8) {
		memcpy(&offset, data, 4);
		memcpy(&first, data + 4, 4);
		data += 8;
		size -= 8;
	}
	first %= 1 << 20;
	t = fg_xmalloc(size + 1);
	memcpy(t, data, size);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		int line = 0;
		size_t bad = 0;
		int err =
		    fg_pyline_line(fmts[i], t, size, first, offset % (2 * size + 64), &line, &bad);

		if (err != 0 && err != -ENOENT && err != -EINVAL)
			abort();
		if (err == -EINVAL && size && bad >= size)
			abort();
		if (err == 0 && (line <= -(1 << 30) || line >= 1 << 30))
			abort();
	}
	free(t);
	return 0;
}
