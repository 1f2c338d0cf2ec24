// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/ksyms.h"
#include "fg/safeio.h"

/* How far past the last symbol of a run an address still belongs to it. */
#define KSYM_TAIL 4096

struct arena_chunk {
	struct arena_chunk *next;
	char data[];
};

struct fg_ksyms {
	struct arena_chunk *chunks; /* the names, copied */
	char *cur;
	size_t left;
	struct fg_ksym *syms;
	size_t n, alloc;
	bool hidden, any_nonzero, sorted;
	uint64_t lineno;
};

#define ARENA_CHUNK (256u * 1024)
#define READ_CHUNK (256u * 1024)

static const char *arena_dup(struct fg_ksyms *k, const char *str)
{
	size_t n = strlen(str) + 1;
	char *p;

	if (n > k->left) {
		size_t sz = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		struct arena_chunk *c = fg_xmalloc(sizeof(*c) + sz);

		c->next = k->chunks;
		k->chunks = c;
		k->cur = c->data;
		k->left = sz;
	}
	p = k->cur;
	memcpy(p, str, n);
	k->cur += n;
	k->left -= n;
	return p;
}

/* hexadecimal digit values, -1 for anything else */
static const signed char hexv[256] = {
	['0'] = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
	['A'] = 10, 11, 12, 13, 14, 15,
	['a'] = 10, 11, 12, 13, 14, 15,
};

static int hexval(char c)
{
	unsigned char u = (unsigned char)c;

	if (u == '0')
		return 0;
	return hexv[u] ? hexv[u] : -1;
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
		if (!*p)
			return -EINVAL;
	if (p == name)
		return -EINVAL;
	if (p < end) {
		*p++ = '\0';
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p < end) {
			if (*p != '[' || end[-1] != ']' || end - p < 3 ||
			    memchr(p, '\0', (size_t)(end - p)))
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
/*
 * Parse the complete lines in [p, end) (writable), keeping text symbols with
 * copies of their names.  With `final`, a last line without a newline counts
 * too.  Returns the bytes used, or -EINVAL on a malformed line (k->lineno is
 * its number).
 */
static ssize_t add_lines(struct fg_ksyms *k, char *p, char *end, bool final)
{
	char *start = p;

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *eol = nl ? nl : end;
		struct fg_ksym s;
		bool keep;

		if (!nl && !final)
			break;
		k->lineno++;
		if (eol > p && eol[-1] == '\r')
			eol--;
		if (eol > p) {
			if (parse_line(p, eol, &s, &keep) < 0)
				return -EINVAL;
			if (s.addr)
				k->any_nonzero = true;
			/*
			 * __pfx_NAME marks the padding before NAME (about half the
			 * symbols of a recent kernel): no code runs there, and perf
			 * leaves them out too
			 */
			if (keep && strncmp(s.name, "__pfx_", 6) == 0)
				keep = false;
			if (keep) {
				s.name = arena_dup(k, s.name);
				if (s.module)
					s.module = arena_dup(k, s.module);
				FG_ALLOC_GROW(k->syms, k->n + 1, k->alloc);
				if (k->n && k->syms[k->n - 1].addr > s.addr)
					k->sorted = false;
				k->syms[k->n++] = s;
			}
		}
		p = nl ? nl + 1 : end;
	}
	return p - start;
}

static struct fg_ksyms *ksyms_new(void)
{
	struct fg_ksyms *k = fg_xcalloc(1, sizeof(*k));

	k->sorted = true;
	return k;
}

static struct fg_ksyms *finish(struct fg_ksyms *k)
{
	k->hidden = k->n > 0 && !k->any_nonzero;
	if (k->hidden) {
		k->n = 0; /* every address zero: nothing can be looked up */
		return k;
	}
	/* the kernel lists its symbols in address order: sort only when needed */
	if (!k->sorted)
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

static struct fg_ksyms *refuse(struct fg_ksyms *k, uint64_t *bad_line, int err)
{
	if (bad_line && err == EINVAL)
		*bad_line = k->lineno;
	fg_ksyms_free(k);
	errno = err;
	return NULL;
}

struct fg_ksyms *fg_ksyms_parse(const char *data, size_t len, uint64_t *bad_line)
{
	struct fg_ksyms *k = ksyms_new();
	char *text = fg_xmalloc(len + 1);
	ssize_t r;

	if (bad_line)
		*bad_line = 0;
	memcpy(text, data, len);
	text[len] = '\0';
	r = add_lines(k, text, text + len, true);
	free(text);
	return r < 0 ? refuse(k, bad_line, EINVAL) : finish(k);
}

/*
 * Read in chunks, keeping only the text symbols: /proc/kallsyms is about
 * 10 MB, most of it data symbols, and fresh memory is not free.
 */
struct fg_ksyms *fg_ksyms_load(const char *path, uint64_t *bad_line)
{
	struct fg_ksyms *k;
	char *buf;
	size_t have = 0;
	uint64_t total = 0;
	int fd;

	if (bad_line)
		*bad_line = 0;
	fd = fg_open_regular(path, FG_KSYMS_MAX_BYTES, NULL);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	k = ksyms_new();
	/*
	 * Room for a kernel's worth of text symbols at once (pages not touched
	 * cost nothing): growing by copies would touch each page twice.
	 */
	k->alloc = 1u << 17;
	k->syms = fg_xmalloc(k->alloc * sizeof(*k->syms));
	buf = fg_xmalloc(READ_CHUNK + 1);
	for (;;) {
		ssize_t got = read(fd, buf + have, READ_CHUNK - have), used;
		int err;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 || (total += (uint64_t)(got > 0 ? got : 0)) > FG_KSYMS_MAX_BYTES) {
			err = got < 0 ? errno : EFBIG;
			free(buf);
			close(fd);
			return refuse(k, bad_line, err);
		}
		have += (size_t)got;
		buf[have] = '\0';
		used = add_lines(k, buf, buf + have, got == 0);
		/* a line longer than the whole buffer is not kallsyms either */
		if (used < 0 || (used == 0 && have == READ_CHUNK)) {
			if (used == 0)
				k->lineno++;
			free(buf);
			close(fd);
			return refuse(k, bad_line, EINVAL);
		}
		memmove(buf, buf + used, have - (size_t)used);
		have -= (size_t)used;
		if (got == 0)
			break;
	}
	free(buf);
	close(fd);
	return finish(k);
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
	while (k->chunks) {
		struct arena_chunk *next = k->chunks->next;

		free(k->chunks);
		k->chunks = next;
	}
	free(k->syms);
	free(k);
}
