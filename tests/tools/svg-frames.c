// SPDX-License-Identifier: BSD-2-Clause
/*
 * svg-frames [--inverted] FILE.svg: the frames of a flame graph SVG as a
 * table, "depth<TAB>samples<TAB>name" a line, so that two renderings of the
 * same folded input (ours, flamegraph.pl's, inferno's) can be compared with
 * diff(1) whatever their geometry, fonts or colours.
 *
 * A frame is an element with a <title> child reading "NAME (N UNIT, ...)" or
 * "NAME (N UNIT)" and a <rect> child (the last of each, when there are
 * several).  The name is everything before the last " (" that such a count
 * follows; N loses its thousands separators.  Depth is the rank of the rect's
 * y among all the frames' y values, the bottom first (the top first with
 * --inverted); rows are sorted by depth, then x, then document order.
 *
 * The SVG is parsed as XML (elements, attributes, text, entities and
 * character references, CDATA, comments, processing instructions, a
 * DOCTYPE); a document that is not well-formed is an error, exit 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/safeio.h"
#include "fg/util.h"

enum kind { K_OTHER, K_TITLE, K_RECT };

struct el {
	enum kind kind;
	const char *tag; /* the name in the start tag, prefix included */
	size_t tag_len;
	int parent;
	int title, rect; /* the last child of each kind, -1 when none */
	bool had_child;	 /* the text after the first child is not the element's .text */
	bool has_x, has_y;
	double x, y;
	struct fg_buf text; /* the text before the first child */
};

struct row {
	double y, x;
	size_t order;
	int depth;
	char *samples, *name;
};

struct parser {
	const char *path;
	const char *s, *p, *end;
	struct el *els;
	size_t nels, alloc;
	int *stack; /* open elements */
	size_t depth, stack_alloc;
	struct fg_buf tmp;
};

static noreturn void fail(struct parser *ps, const char *what)
{
	fg_diex("'%s': not well-formed XML at byte %zu: %s", ps->path, (size_t)(ps->p - ps->s),
		what);
}

static bool starts(const struct parser *ps, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, lit, n) == 0;
}

/* Move past the first `lit` at or after the position. */
static void skip_past(struct parser *ps, const char *lit, const char *what)
{
	const char *q = memmem(ps->p, (size_t)(ps->end - ps->p), lit, strlen(lit));

	if (!q)
		fail(ps, what);
	ps->p = q + strlen(lit);
}

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_name_char(char c)
{
	return c && !is_ws(c) && !strchr("/>=<\"'&", c);
}

static void put_utf8(struct fg_buf *b, uint32_t c)
{
	char u[4];
	size_t n;

	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | c >> 12);
		u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | c >> 18);
		u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
		u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	fg_buf_add(b, u, n);
}

/* An entity or character reference at ps->p ('&'), decoded into b. */
static void entity(struct parser *ps, struct fg_buf *b)
{
	static const struct {
		const char *name, *text;
	} named[] = {{"lt", "<"}, {"gt", ">"}, {"amp", "&"}, {"quot", "\""}, {"apos", "'"}};
	const char *semi = memchr(ps->p, ';', (size_t)(ps->end - ps->p));
	const char *name = ps->p + 1;
	size_t n;

	if (!semi || semi - name > 16)
		fail(ps, "an '&' that starts no reference");
	n = (size_t)(semi - name);
	if (n > 1 && name[0] == '#') {
		bool hex = name[1] == 'x';
		uint64_t c = 0;
		size_t i = hex ? 2 : 1;

		if (i == n)
			fail(ps, "an empty character reference");
		for (; i < n; i++) {
			char d = name[i];
			int v = d >= '0' && d <= '9'	      ? d - '0'
				: hex && d >= 'a' && d <= 'f' ? d - 'a' + 10
				: hex && d >= 'A' && d <= 'F' ? d - 'A' + 10
							      : -1;

			if (v < 0)
				fail(ps, "a bad character reference");
			c = c * (hex ? 16 : 10) + (uint64_t)v;
			if (c > 0x10ffff)
				fail(ps, "a character reference out of range");
		}
		if (c == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') ||
		    (c >= 0xd800 && c <= 0xdfff) || c == 0xfffe || c == 0xffff)
			fail(ps, "a reference to a character XML forbids");
		put_utf8(b, (uint32_t)c);
	} else {
		size_t i;

		for (i = 0; i < FG_ARRAY_SIZE(named); i++)
			if (strlen(named[i].name) == n && memcmp(name, named[i].name, n) == 0)
				break;
		if (i == FG_ARRAY_SIZE(named))
			fail(ps, "an undefined entity");
		fg_buf_addstr(b, named[i].text);
	}
	ps->p = semi + 1;
}

/* Character data up to the next '<', line ends normalized, into b (NULL: dropped). */
static void text(struct parser *ps, struct fg_buf *b)
{
	while (ps->p < ps->end && *ps->p != '<') {
		char c = *ps->p;

		if (c == '&') {
			entity(ps, b ? b : &ps->tmp);
			continue;
		}
		if (c == '\r') {
			/* \r\n and a lone \r read as \n */
			c = '\n';
			if (ps->p + 1 < ps->end && ps->p[1] == '\n')
				ps->p++;
		}
		if (b)
			fg_buf_addch(b, c);
		ps->p++;
	}
	fg_buf_reset(&ps->tmp);
}

static struct el *current(struct parser *ps)
{
	return ps->depth ? &ps->els[ps->stack[ps->depth - 1]] : NULL;
}

/* The text buffer character data goes to now, or NULL. */
static struct fg_buf *text_sink(struct parser *ps)
{
	struct el *e = current(ps);

	return e && e->kind == K_TITLE && !e->had_child ? &e->text : NULL;
}

static const char *local_name(const char *name, size_t *len)
{
	const char *colon = memchr(name, ':', *len);

	if (colon) {
		*len -= (size_t)(colon + 1 - name);
		return colon + 1;
	}
	return name;
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end && is_ws(*ps->p))
		ps->p++;
}

static size_t name(struct parser *ps)
{
	const char *start = ps->p;

	while (ps->p < ps->end && is_name_char(*ps->p))
		ps->p++;
	if (ps->p == start)
		fail(ps, "a name expected");
	return (size_t)(ps->p - start);
}

/* An attribute value (quoted), decoded into ps->tmp. */
static void attr_value(struct parser *ps)
{
	char q;

	fg_buf_reset(&ps->tmp);
	if (ps->p >= ps->end || (*ps->p != '"' && *ps->p != '\''))
		fail(ps, "an attribute value without quotes");
	q = *ps->p++;
	while (ps->p < ps->end && *ps->p != q) {
		if (*ps->p == '<')
			fail(ps, "'<' in an attribute value");
		if (*ps->p == '&') {
			entity(ps, &ps->tmp);
			continue;
		}
		fg_buf_addch(&ps->tmp, is_ws(*ps->p) ? ' ' : *ps->p);
		ps->p++;
	}
	if (ps->p >= ps->end)
		fail(ps, "an attribute value without its closing quote");
	ps->p++;
	if (!ps->tmp.data)
		fg_buf_addstr(&ps->tmp, "");
}

static double number(struct parser *ps, const char *what)
{
	char *end;
	double v = strtod(ps->tmp.data, &end);

	while (is_ws(*end))
		end++;
	if (end == ps->tmp.data || *end)
		fg_diex("'%s': a rect's %s is not a number: '%s'", ps->path, what, ps->tmp.data);
	return v;
}

static void start_tag(struct parser *ps)
{
	const char *full, *tag;
	size_t full_len, len;
	struct el *e, *parent = current(ps);
	int idx = (int)ps->nels;

	ps->p++;
	full = ps->p;
	full_len = len = name(ps);
	tag = local_name(full, &len);
	FG_ALLOC_GROW(ps->els, ps->nels + 1, ps->alloc);
	parent = current(ps);
	e = &ps->els[ps->nels++];
	memset(e, 0, sizeof(*e));
	e->tag = full;
	e->tag_len = full_len;
	e->kind = len == 5 && memcmp(tag, "title", 5) == 0  ? K_TITLE
		  : len == 4 && memcmp(tag, "rect", 4) == 0 ? K_RECT
							    : K_OTHER;
	e->parent = ps->depth ? ps->stack[ps->depth - 1] : -1;
	e->title = e->rect = -1;
	if (parent) {
		parent->had_child = true;
		if (e->kind == K_TITLE)
			parent->title = idx;
		else if (e->kind == K_RECT)
			parent->rect = idx;
	} else if (ps->nels > 1) {
		fail(ps, "a second root element");
	}
	for (;;) {
		const char *an;
		size_t alen;

		skip_ws(ps);
		if (ps->p >= ps->end)
			fail(ps, "a start tag without its end");
		if (*ps->p == '>' || starts(ps, "/>"))
			break;
		an = ps->p;
		alen = name(ps);
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != '=')
			fail(ps, "an attribute without a value");
		ps->p++;
		skip_ws(ps);
		attr_value(ps);
		if (ps->els[idx].kind == K_RECT && alen == 1 && (an[0] == 'x' || an[0] == 'y')) {
			e = &ps->els[idx];
			if (an[0] == 'x') {
				e->x = number(ps, "x");
				e->has_x = true;
			} else {
				e->y = number(ps, "y");
				e->has_y = true;
			}
		}
	}
	if (*ps->p == '>') {
		ps->p++;
		FG_ALLOC_GROW(ps->stack, ps->depth + 1, ps->stack_alloc);
		ps->stack[ps->depth++] = idx;
	} else {
		ps->p += 2;
	}
}

static void end_tag(struct parser *ps)
{
	const char *tag;
	size_t len;
	struct el *e = current(ps);

	ps->p += 2;
	tag = ps->p;
	len = name(ps);
	skip_ws(ps);
	if (!e || ps->p >= ps->end || *ps->p != '>')
		fail(ps, "a stray end tag");
	if (len != e->tag_len || memcmp(tag, e->tag, len) != 0)
		fail(ps, "an end tag that does not match its start tag");
	ps->p++;
	ps->depth--;
}

static void parse(struct parser *ps)
{
	bool root_seen = false;

	if (starts(ps, "\xef\xbb\xbf"))
		ps->p += 3;
	while (ps->p < ps->end) {
		if (*ps->p != '<') {
			const char *t = ps->p;

			text(ps, text_sink(ps));
			if (!ps->depth)
				for (; t < ps->p; t++)
					if (!is_ws(*t))
						fail(ps, "text outside the root element");
			continue;
		}
		if (starts(ps, "<?")) {
			skip_past(ps, "?>", "an unterminated processing instruction");
		} else if (starts(ps, "<!--")) {
			ps->p += 4;
			skip_past(ps, "-->", "an unterminated comment");
		} else if (starts(ps, "<![CDATA[")) {
			const char *start = ps->p + 9;
			struct fg_buf *b = text_sink(ps);

			if (!ps->depth)
				fail(ps, "CDATA outside the root element");
			ps->p = start;
			skip_past(ps, "]]>", "an unterminated CDATA section");
			if (b)
				fg_buf_add(b, start, (size_t)(ps->p - 3 - start));
		} else if (starts(ps, "<!DOCTYPE")) {
			int brackets = 0;

			if (root_seen || ps->depth)
				fail(ps, "a DOCTYPE inside the document");
			for (ps->p += 9; ps->p < ps->end; ps->p++) {
				char c = *ps->p;

				if (c == '"' || c == '\'') {
					const char *q =
					    memchr(ps->p + 1, c, (size_t)(ps->end - ps->p - 1));

					if (!q)
						fail(ps, "an unterminated DOCTYPE");
					ps->p = q;
				} else if (c == '[') {
					brackets++;
				} else if (c == ']') {
					brackets--;
				} else if (c == '>' && brackets == 0) {
					break;
				}
			}
			if (ps->p >= ps->end)
				fail(ps, "an unterminated DOCTYPE");
			ps->p++;
		} else if (starts(ps, "</")) {
			end_tag(ps);
		} else {
			if (root_seen && !ps->depth)
				fail(ps, "a second root element");
			root_seen = true;
			start_tag(ps);
		}
	}
	if (ps->depth)
		fail(ps, "elements left open at the end");
	if (!root_seen)
		fail(ps, "no root element");
}

/*
 * "NAME (N UNIT," or "NAME (N UNIT)": the last " (" followed by digits,
 * commas and points, one space, then anything up to a ',' or ')' that comes
 * before any '('.  False when there is none.
 */
static bool title_match(const char *t, size_t n, size_t *name_len, const char **num,
			size_t *num_len)
{
	for (size_t i = n; i-- > 0;) {
		size_t j, k;

		if (i + 2 >= n || t[i] != ' ' || t[i + 1] != '(' || t[i + 2] < '0' ||
		    t[i + 2] > '9')
			continue;
		for (j = i + 2;
		     j < n && ((t[j] >= '0' && t[j] <= '9') || t[j] == ',' || t[j] == '.'); j++)
			;
		if (j >= n || t[j] != ' ')
			continue;
		for (k = j + 1; k < n && !strchr(",()", t[k]); k++)
			;
		if (k >= n || t[k] == '(')
			continue;
		*name_len = i;
		*num = t + i + 2;
		*num_len = j - (i + 2);
		return true;
	}
	return false;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth - y->depth;
	if (x->x != y->x)
		return x->x < y->x ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

int main(int argc, char **argv)
{
	struct parser ps = {0};
	const char *path = NULL;
	bool inverted = false;
	struct row *rows = NULL;
	size_t nrows = 0, rows_alloc = 0, nys = 0;
	double *ys;
	char *data;
	size_t len;
	int fd, err;

	fg_set_progname("svg-frames");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--inverted") == 0)
			inverted = true;
		else if (!path)
			path = argv[i];
		else
			path = "";
	}
	if (!path || !*path) {
		fputs("usage: svg-frames [--inverted] FILE.svg\n", stderr);
		return FG_EXIT_USAGE;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	err = fd < 0 ? -errno : fg_safeio_read_all(fd, SIZE_MAX / 2, &data, &len);
	if (fd >= 0)
		close(fd);
	if (err < 0)
		fg_diex("cannot read '%s': %s", path, strerror(-err));
	ps.path = path;
	ps.s = ps.p = data;
	ps.end = data + len;
	parse(&ps);

	for (size_t i = 0; i < ps.nels; i++) {
		const struct el *e = &ps.els[i], *t, *r;
		const char *num;
		size_t name_len, num_len;
		struct row *row;

		if (e->title < 0 || e->rect < 0)
			continue;
		t = &ps.els[e->title];
		r = &ps.els[e->rect];
		if (!title_match(t->text.data ? t->text.data : "", t->text.len, &name_len, &num,
				 &num_len))
			continue;
		if (!r->has_x || !r->has_y)
			fg_diex("'%s': a frame's rect without %s", path, r->has_x ? "y" : "x");
		FG_ALLOC_GROW(rows, nrows + 1, rows_alloc);
		row = &rows[nrows++];
		row->x = r->x;
		row->y = r->y;
		row->order = nrows;
		row->name = fg_xstrndup(t->text.data, name_len);
		row->samples = fg_xmalloc(num_len + 1);
		for (size_t k = 0, o = 0; k <= num_len; k++)
			if (k == num_len)
				row->samples[o] = '\0';
			else if (num[k] != ',')
				row->samples[o++] = num[k];
	}

	/* depth: the rank of y, the bottom (largest y) first unless inverted */
	ys = fg_xcalloc(nrows ? nrows : 1, sizeof(*ys));
	for (size_t i = 0; i < nrows; i++)
		ys[i] = rows[i].y;
	qsort(ys, nrows, sizeof(*ys), cmp_double);
	for (size_t i = 0; i < nrows; i++)
		if (nys == 0 || ys[nys - 1] != ys[i])
			ys[nys++] = ys[i];
	for (size_t i = 0; i < nrows; i++) {
		const double *at = bsearch(&rows[i].y, ys, nys, sizeof(*ys), cmp_double);
		int rank = (int)(at - ys);

		rows[i].depth = inverted ? rank : (int)nys - 1 - rank;
	}
	qsort(rows, nrows, sizeof(*rows), cmp_row);
	for (size_t i = 0; i < nrows; i++) {
		printf("%d\t%s\t%s\n", rows[i].depth, rows[i].samples, rows[i].name);
		free(rows[i].samples);
		free(rows[i].name);
	}
	for (size_t i = 0; i < ps.nels; i++)
		fg_buf_release(&ps.els[i].text);
	free(ps.els);
	free(ps.stack);
	fg_buf_release(&ps.tmp);
	free(rows);
	free(ys);
	free(data);
	return fg_close_stdout();
}
