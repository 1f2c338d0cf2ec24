// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/perfmap.h"
#include "fg/util.h"

/* A name longer than this is cut: a JIT's names are not essays. */
#define PERFMAP_NAME_MAX 4096

struct fg_perfmap {
	struct fg_perfmap_ent *ents;
	size_t n, alloc;
	bool sorted;
	uint64_t seq;
};

struct fg_perfmap *fg_perfmap_new(void)
{
	struct fg_perfmap *pm = fg_xcalloc(1, sizeof(*pm));

	pm->sorted = true;
	return pm;
}

static int parse_hex(const char **p, const char *end, uint64_t *out)
{
	if (end - *p > 2 && (*p)[0] == '0' && ((*p)[1] == 'x' || (*p)[1] == 'X'))
		*p += 2;
	return fg_scan_hex(p, end, 16, out);
}

static int parse_line(const char *p, const char *end, struct fg_perfmap_ent *e)
{
	const char *name;
	size_t len;

	if (parse_hex(&p, end, &e->start) || p >= end || *p != ' ')
		return -EINVAL;
	p++;
	if (parse_hex(&p, end, &e->size) || p >= end || *p != ' ' || !e->size)
		return -EINVAL;
	name = p + 1;
	len = (size_t)(end - name);
	if (!len || memchr(name, '\0', len))
		return -EINVAL;
	if (len > PERFMAP_NAME_MAX)
		len = PERFMAP_NAME_MAX;
	if (e->start + e->size < e->start)
		return -EINVAL;
	e->name = fg_xstrndup(name, len);
	return 0;
}

size_t fg_perfmap_add(struct fg_perfmap *pm, const char *data, size_t len, uint64_t *bad)
{
	const char *p = data, *end = data + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol;
		struct fg_perfmap_ent e;

		if (!nl)
			break; /* a partial line: the JIT is still writing it */
		eol = nl;
		if (eol > p && eol[-1] == '\r')
			eol--;
		if (eol > p) {
			if (parse_line(p, eol, &e) < 0) {
				if (bad)
					(*bad)++;
			} else {
				e.seq = pm->seq++;
				FG_ALLOC_GROW(pm->ents, pm->n + 1, pm->alloc);
				if (pm->n && pm->ents[pm->n - 1].start > e.start)
					pm->sorted = false;
				pm->ents[pm->n++] = e;
			}
		}
		p = nl + 1;
	}
	return (size_t)(p - data);
}

static int cmp_ent(const void *a, const void *b)
{
	const struct fg_perfmap_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

const struct fg_perfmap_ent *fg_perfmap_lookup(struct fg_perfmap *pm, uint64_t addr)
{
	const struct fg_perfmap_ent *best = NULL;
	size_t lo;

	if (!pm || !pm->n)
		return NULL;
	if (!pm->sorted) {
		qsort(pm->ents, pm->n, sizeof(*pm->ents), cmp_ent);
		pm->sorted = true;
	}
	lo = FG_UPPER_BOUND(pm->ents, pm->n, start, addr);
	/*
	 * Entries may overlap when code is replaced: of those starting at or below
	 * addr and covering it, the latest wins.  Look back a bounded distance.
	 */
	for (size_t i = lo, steps = 0; i > 0 && steps < 64; i--, steps++) {
		const struct fg_perfmap_ent *e = &pm->ents[i - 1];

		if (addr - e->start < e->size && (!best || e->seq > best->seq))
			best = e;
	}
	return best;
}

size_t fg_perfmap_count(const struct fg_perfmap *pm)
{
	return pm ? pm->n : 0;
}

void fg_perfmap_free(struct fg_perfmap *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->n; i++)
		free((char *)pm->ents[i].name);
	free(pm->ents);
	free(pm);
}
