// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "fg/procmaps.h"
#include "fg/util.h"

static int hex(const char **p, const char *end, uint64_t *out, int maxdigits)
{
	return fg_scan_hex(p, end, maxdigits, out);
}

static int dec(const char **p, const char *end, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0;

	while (*p < end && **p >= '0' && **p <= '9') {
		if (++n > 20 || v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(**p - '0');
		(*p)++;
	}
	if (!n)
		return -EINVAL;
	*out = v;
	return 0;
}

static int expect(const char **p, const char *end, char c)
{
	if (*p >= end || **p != c)
		return -EINVAL;
	(*p)++;
	return 0;
}

int fg_procmap_parse(char *line, size_t len, struct fg_procmap *m)
{
	static const char deleted[] = " (deleted)";
	const char *p = line, *end = line + len;
	uint64_t maj, min;

	memset(m, 0, sizeof(*m));
	if (hex(&p, end, &m->start, 16) || expect(&p, end, '-') || hex(&p, end, &m->end, 16) ||
	    expect(&p, end, ' ') || m->end < m->start)
		return -EINVAL;
	if (end - p < 5)
		return -EINVAL;
	for (int i = 0; i < 4; i++)
		if (!p[i] || !strchr(i == 0 ? "r-" : i == 1 ? "w-" : i == 2 ? "x-" : "ps", p[i]))
			return -EINVAL;
	m->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		  (p[2] == 'x' ? PROT_EXEC : 0);
	m->shared = p[3] == 's';
	m->exec = p[2] == 'x';
	p += 4;
	if (expect(&p, end, ' ') || hex(&p, end, &m->pgoff, 16) || expect(&p, end, ' ') ||
	    hex(&p, end, &maj, 8) || expect(&p, end, ':') || hex(&p, end, &min, 8) ||
	    expect(&p, end, ' ') || dec(&p, end, &m->inode))
		return -EINVAL;
	m->dev_major = (uint32_t)maj;
	m->dev_minor = (uint32_t)min;
	while (p < end && *p == ' ')
		p++;
	if (memchr(p, '\0', (size_t)(end - p)))
		return -EINVAL;
	m->path = p;
	m->path_len = (size_t)(end - p);
	if (m->path_len > sizeof(deleted) - 1 &&
	    memcmp(end - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1) == 0) {
		m->deleted = true;
		m->path_len -= sizeof(deleted) - 1;
	}
	line[(p - line) + (ptrdiff_t)m->path_len] = '\0';
	return 0;
}

int fg_procmaps_parse(char *data, size_t len, int (*fn)(const struct fg_procmap *, void *),
		      void *arg, uint64_t *bad_line)
{
	char *p = data, *end = data + len;
	uint64_t lineno = 0;

	if (bad_line)
		*bad_line = 0;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		struct fg_procmap m;
		int r;

		lineno++;
		if (eol > p) {
			if (fg_procmap_parse(p, (size_t)(eol - p), &m) < 0) {
				if (bad_line)
					*bad_line = lineno;
				return -EINVAL;
			}
			r = fn(&m, arg);
			if (r)
				return r;
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}
