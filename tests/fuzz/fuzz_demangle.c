// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the demangler wrapper with a length oracle: whatever the name, what
 * comes back is at most FG_DEMANGLE_MAX bytes, ends with the cut mark when it
 * was cut, and comes back quickly (libFuzzer's -timeout catches a name whose
 * demangling runs away).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(char *d, uint64_t cut_before)
{
	size_t n = d ? strlen(d) : 0, m = strlen(FG_DEMANGLE_CUT_MARK);

	if (n > FG_DEMANGLE_MAX)
		abort();
	/* a name counted as cut ends with the mark */
	if (fg_demangle_cut_count() != cut_before &&
	    (n < m || strcmp(d + n - m, FG_DEMANGLE_CUT_MARK)))
		abort();
	free(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1);
	uint64_t before;

	if (!name)
		return 0;
	memcpy(name, data, size);
	name[size] = '\0';
	before = fg_demangle_cut_count();
	check(fg_demangle(name), before);
	before = fg_demangle_cut_count();
	check(fg_demangle_params(name), before);
	free(name);
	return 0;
}
