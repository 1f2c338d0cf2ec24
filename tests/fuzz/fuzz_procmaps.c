// SPDX-License-Identifier: BSD-2-Clause
/*
 * Fuzz the /proc/PID/maps parser: every accepted line is consistent, and so
 * is the mapping record fg-sample's snapshot makes of it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fg/diag.h"
#include "fg/procmaps.h"
#include "fg/sideband.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check(const struct fg_procmap *m, void *arg)
{
	struct fg_rec_mapping r;

	(void)arg;
	if (m->end < m->start || strlen(m->path) != m->path_len ||
	    m->exec != !!(m->prot & PROT_EXEC) || (m->prot & ~(uint32_t)7))
		abort();
	fg_sideband_maps_record(m, &r);
	if (r.start != m->start || r.end != m->end || r.ino != m->inode || r.prot != m->prot ||
	    r.mflags != (m->shared ? MAP_SHARED : MAP_PRIVATE))
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
