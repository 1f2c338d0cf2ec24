// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/ksyms.h"
#include "fg/safeio.h"

/* How far past the last symbol of a run an address still belongs to it. */
#define KSYM_TAIL 4096

struct fg_ksyms {
	char *text; /* the parsed copy; names point into it */
	struct fg_ksym *syms;
	size_t n, alloc;
	bool hidden;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct fg_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* the kernel's own names before modules', then by name, for a stable order */
	if (!x->module != !y->module)
		return x->module ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * One line: "ADDR TYPE NAME" or "ADDR TYPE NAME\t[MODULE]".  0 on success
 * (*keep tells whether it is a text symbol), -EINVAL when malformed.
 */
static int parse_line(char *p, char *end, struct fg_ksym *s, bool *keep)
{
	uint64_t addr = 0;
	int digits = 0, v;
	char type, *name, *mod = NULL;

	while (p < end && (v = hexval(*p)) >= 0) {
		if (++digits > 16)
			return -EINVAL;
		addr = addr << 4 | (uint64_t)v;
		p++;
	}
	if (!digits || p + 3 > end || *p != ' ' || p[2] != ' ')
		return -EINVAL;
	type = p[1];
	name = p + 3;
	for (p = name; p < end && *p != '\t' && *p != ' '; p++)
		;
	if (p == name)
		return -EINVAL;
	if (p < end) {
		*p++ = '\0';
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end) {
			if (*p != '[' || end[-1] != ']' || end - p < 3)
				return -EINVAL;
			mod = p + 1;
			end[-1] = '\0';
		}
	}
	*end = '\0';
	s->addr = addr;
	s->end = 0;
	s->name = name;
	s->module = mod;
	*keep = type == 't' || type == 'T' || type == 'w' || type == 'W';
	return 0;
}

/* Parse `text` (len bytes and a NUL after them) in place; the table owns it. */
static struct fg_ksyms *parse_owned(char *text, size_t len, uint64_t *bad_line)
{
	struct fg_ksyms *k = fg_xcalloc(1, sizeof(*k));
	uint64_t lineno = 0;
	bool any_nonzero = false, sorted = true;
	char *p, *end;

	if (bad_line)
		*bad_line = 0;
	k->text = text;
	p = k->text;
	end = k->text + len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		struct fg_ksym s;
		bool keep;

		lineno++;
		if (eol > p && eol[-1] == '\r')
			eol--;
		if (eol == p) { /* an empty line */
			p = nl ? nl + 1 : end;
			continue;
		}
		if (memchr(p, '\0', (size_t)(eol - p)) || parse_line(p, eol, &s, &keep) < 0) {
			if (bad_line)
				*bad_line = lineno;
			fg_ksyms_free(k);
			errno = EINVAL;
			return NULL;
		}
		if (s.addr)
			any_nonzero = true;
		if (keep) {
			FG_ALLOC_GROW(k->syms, k->n + 1, k->alloc);
			if (k->n && k->syms[k->n - 1].addr > s.addr)
				sorted = false;
			k->syms[k->n++] = s;
		}
		p = nl ? nl + 1 : end;
	}
	k->hidden = k->n > 0 && !any_nonzero;
	if (k->hidden) {
		k->n = 0; /* every address zero: nothing can be looked up */
		return k;
	}
	/* the kernel lists its symbols in address order: sort only when needed */
	if (!sorted)
		qsort(k->syms, k->n, sizeof(*k->syms), cmp_ksym);
	/* one symbol an address: of aliases, the first in cmp_ksym's order */
	size_t w = 0;
	for (size_t i = 0; i < k->n; i++) {
		if (w && k->syms[w - 1].addr == k->syms[i].addr) {
			if (cmp_ksym(&k->syms[i], &k->syms[w - 1]) < 0)
				k->syms[w - 1] = k->syms[i];
			continue;
		}
		k->syms[w++] = k->syms[i];
	}
	k->n = w;
	for (size_t i = 0; i < k->n; i++) {
		struct fg_ksym *s = &k->syms[i];
		const struct fg_ksym *next = i + 1 < k->n ? s + 1 : NULL;
		bool same_owner = next && (!s->module == !next->module) &&
				  (!s->module || strcmp(s->module, next->module) == 0);

		/* a symbol ends where the next one starts, unless the next belongs elsewhere */
		if (next && (same_owner || next->addr - s->addr <= KSYM_TAIL))
			s->end = next->addr;
		else
			s->end = s->addr + KSYM_TAIL < s->addr ? UINT64_MAX : s->addr + KSYM_TAIL;
	}
	return k;
}

struct fg_ksyms *fg_ksyms_parse(const char *data, size_t len, uint64_t *bad_line)
{
	char *text = fg_xmalloc(len + 1);

	memcpy(text, data, len);
	text[len] = '\0';
	return parse_owned(text, len, bad_line);
}

struct fg_ksyms *fg_ksyms_load(const char *path, uint64_t *bad_line)
{
	char *data;
	size_t len;
	int err;

	if (bad_line)
		*bad_line = 0;
	err = fg_read_file(path, FG_KSYMS_MAX_BYTES, &data, &len);
	if (err < 0) {
		errno = -err;
		return NULL;
	}
	return parse_owned(data, len, bad_line); /* frees data on failure */
}

const struct fg_ksym *fg_ksyms_lookup(const struct fg_ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi;

	if (!k || !k->n)
		return NULL;
	hi = k->n;
	/* the last symbol starting at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct fg_ksym *s = &k->syms[lo - 1];
	return addr < s->end ? s : NULL;
}

bool fg_ksyms_hidden(const struct fg_ksyms *k)
{
	return k && k->hidden;
}

size_t fg_ksyms_count(const struct fg_ksyms *k)
{
	return k ? k->n : 0;
}

void fg_ksyms_free(struct fg_ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->text);
	free(k);
}
