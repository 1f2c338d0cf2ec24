/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * JIT symbol maps, /tmp/perf-PID.map: one "START SIZE NAME" line per
 * function, START and SIZE in hexadecimal (with or without 0x), NAME to the
 * end of the line.  A JIT appends to the file as it compiles, so a map can be
 * fed more text later; later entries win over earlier ones at the same
 * address (code was replaced).
 */
#ifndef FG_PERFMAP_H
#define FG_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct fg_perfmap_ent {
	uint64_t start, size;
	const char *name;
	uint64_t seq; /* order of appearance: the later wins */
};

struct fg_perfmap;

struct fg_perfmap *fg_perfmap_new(void);
/*
 * Add the complete lines of `data` (a partial final line is left for the
 * next call: the return value is the number of bytes consumed).  Malformed
 * lines are counted in *bad (if not NULL) and skipped, as perf does.
 */
size_t fg_perfmap_add(struct fg_perfmap *pm, const char *data, size_t len, uint64_t *bad);
/* The entry holding `addr`, or NULL. */
const struct fg_perfmap_ent *fg_perfmap_lookup(struct fg_perfmap *pm, uint64_t addr);
size_t fg_perfmap_count(const struct fg_perfmap *pm);
void fg_perfmap_free(struct fg_perfmap *pm);

#endif
