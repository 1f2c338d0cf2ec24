// SPDX-License-Identifier: BSD-2-Clause
/* Fuzz the /proc/PID/maps parser: every accepted line is consistent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(const struct fg_procmap *m, void *arg)
{
	(void)arg;
	if (m->end < m->start || strlen(m->path) != m->path_len)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = fg_xmalloc(size + 1);
	uint64_t bad;

	memcpy(copy, data, size);
	copy[size] = '\0';
	fg_procmaps_parse(copy, size, check, NULL, &bad);
	free(copy);
	return 0;
}
