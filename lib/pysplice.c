// SPDX-License-Identifier: BSD-2-Clause
/* fg-sym's Python frames, named and spliced into native stacks: see include/fg/pysplice.h. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/escape.h"
#include "fg/hash.h"
#include "fg/pyline.h"
#include "fg/pysplice.h"

/* A code object's name: "NAME:FILE", its first line, and its line table (after the text). */
struct pyname {
	int32_t line;
	uint32_t tlen;	/* bytes of the table, 0: none */
	uint8_t format; /* enum fg_pyline_format */
	char text[];
};

static const uint8_t *table_of(const struct pyname *n)
{
	return (const uint8_t *)n->text + strlen(n->text) + 1;
}

struct fg_pysplice {
	bool lines;
	struct fg_hash *names; /* {pid, code} -> struct pyname * */
	uint64_t bytes;
	struct fg_buf seg; /* the user frames being rewritten */
	struct fg_pysplice_stats st;
};

struct key {
	uint32_t pid;
	uint32_t pad;
	uint64_t code;
};

struct fg_pysplice *fg_pysplice_new(bool lines)
{
	struct fg_pysplice *p = fg_xcalloc(1, sizeof(*p));

	p->lines = lines;
	p->names = fg_hash_new(0);
	return p;
}

void fg_pysplice_free(struct fg_pysplice *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < fg_hash_count(p->names); i++)
		free(fg_hash_at(p->names, i)->val.p);
	fg_hash_free(p->names);
	fg_buf_release(&p->seg);
	free(p);
}

void fg_pysplice_name(struct fg_pysplice *p, const struct fg_rec_pycode *c, const char *name,
		      const char *file, const uint8_t *table, uint32_t tlen, uint8_t format)
{
	struct key k = {.pid = c->pid, .code = c->code & ~FG_PY_ENTRY};
	size_t nl = strlen(name), fl = strlen(file);
	struct fg_hash_entry *e = fg_hash_get(p->names, &k, sizeof(k));
	struct pyname *n;

	if (!table)
		tlen = 0;
	if ((!e && fg_hash_count(p->names) >= FG_PYSPLICE_NAMES_MAX) ||
	    p->bytes + nl + fl + tlen > FG_PYSPLICE_BYTES_MAX) {
		p->st.names_dropped++;
		return;
	}
	n = fg_xmalloc(sizeof(*n) + nl + fl + 2 + tlen);
	n->line = c->firstlineno;
	n->tlen = tlen;
	n->format = format;
	memcpy(n->text, name, nl);
	n->text[nl] = ':';
	memcpy(n->text + nl + 1, file, fl + 1);
	if (tlen)
		memcpy(n->text + nl + fl + 2, table, tlen);
	if (!e)
		e = fg_hash_upsert(p->names, &k, sizeof(k), NULL);
	if (e->val.p) {
		const struct pyname *old = e->val.p;

		p->bytes -= strlen(old->text) + old->tlen;
	}
	free(e->val.p); /* a later record replaces it: another object at the address */
	e->val.p = n;
	p->bytes += nl + fl + 1 + tlen;
}

/* the end of the frame's text that starts at s[at] (a '\t'): the next line starting with one */
static size_t frame_end(const char *s, size_t at, size_t len)
{
	for (size_t i = at + 1; i < len; i++)
		if (s[i] == '\t' && s[i - 1] == '\n')
			return i;
	return len;
}

/* whether a frame's text ("\t   ADDR SYMBOL+0xOFF (MODULE)") is the eval loop's */
static bool is_eval(const char *s, size_t len)
{
	static const char fn[] = "_PyEval_EvalFrameDefault";
	size_t i = 1, fl = sizeof(fn) - 1;

	while (i < len && s[i] == ' ')
		i++;
	while (i < len && s[i] != ' ' && s[i] != '\n')
		i++;
	if (i >= len || s[i] != ' ')
		return false;
	i++;
	return len - i > fl && !memcmp(s + i, fn, fl) &&
	       (s[i + fl] == '+' || s[i + fl] == ' ' || s[i + fl] == '.');
}

/* the module of a frame's first line, "(...)" at its end, into *m, *ml */
static void module_of(const char *s, size_t len, const char **m, size_t *ml)
{
	const char *nl = memchr(s, '\n', len), *open;
	size_t end = nl ? (size_t)(nl - s) : len;

	for (size_t i = end; i > 0; i--) {
		if (s[i - 1] == '(' && i >= 2 && s[i - 2] == ' ') {
			open = s + i - 1;
			*m = open;
			*ml = end - (size_t)(open - s);
			return;
		}
	}
}

/* the line frame n runs, its instruction at byte `off` of its bytecode: else its first, counted */
static int32_t line_of(struct fg_pysplice *p, const struct pyname *n, uint32_t off)
{
	size_t bad;
	int line;

	if (off == FG_PY_NO_OFFSET) {
		p->st.lines_no_offset++;
		return n->line;
	}
	if (!n->tlen) {
		p->st.lines_no_table++;
		return n->line;
	}
	if (fg_pyline_line(n->format, table_of(n), n->tlen, n->line, off, &line, &bad) < 0) {
		p->st.lines_not_found++;
		return n->line;
	}
	return line;
}

/* one Python frame's line */
static void add_frame(struct fg_pysplice *p, struct fg_buf *b, uint32_t pid, uint64_t frame,
		      uint32_t off, const char *mod, size_t ml)
{
	struct key k = {.pid = pid, .code = frame & ~FG_PY_ENTRY};
	struct fg_hash_entry *e = fg_hash_get(p->names, &k, sizeof(k));
	const struct pyname *n = e ? e->val.p : NULL;

	fg_buf_addf(b, "\t%16" PRIx64 " py::", k.code);
	if (n) {
		fg_buf_add_escaped(b, n->text, strlen(n->text), 0);
		if (p->lines)
			fg_buf_addf(b, ":%" PRId32, line_of(p, n, off));
	} else {
		fg_buf_add(b, "[unknown]", 9);
		p->st.unnamed++;
	}
	fg_buf_addch(b, ' ');
	fg_buf_add(b, mod, ml);
	fg_buf_addch(b, '\n');
	p->st.frames++;
}

/* frame i's instruction offset, from the record's unaligned array, or FG_PY_NO_OFFSET */
static uint32_t offset_at(const uint8_t *offsets, size_t i)
{
	uint32_t off;

	if (!offsets)
		return FG_PY_NO_OFFSET;
	memcpy(&off, offsets + 4 * i, sizeof(off));
	return off;
}

void fg_pysplice_stack(struct fg_pysplice *p, struct fg_buf *b, size_t from, uint32_t pid,
		       const uint64_t *frames, const uint8_t *offsets, size_t n, uint32_t flags)
{
	const char *s, *mod = "(python)";
	size_t len, i = 0, ml = 8;

	if (!n || from > b->len)
		return;
	p->st.stacks++;
	if (flags & FG_PYSTACK_F_CUT)
		p->st.cut++;
	fg_buf_reset(&p->seg);
	fg_buf_add(&p->seg, b->data + from, b->len - from);
	fg_buf_truncate(b, from);
	s = p->seg.data;
	len = p->seg.len;
	for (size_t at = 0; at < len;) {
		size_t end = s[at] == '\t' ? frame_end(s, at, len) : len;
		bool eval = s[at] == '\t' && is_eval(s + at, end - at);

		if (eval)
			module_of(s + at, end - at, &mod, &ml);
		if (eval && i < n) {
			/* this call's run: up to and with its entry frame */
			do
				add_frame(p, b, pid, frames[i], offset_at(offsets, i), mod, ml);
			while (!(frames[i++] & FG_PY_ENTRY) && i < n);
		} else {
			p->st.evals_unused += eval;
			fg_buf_add(b, s + at, end - at);
		}
		at = end;
	}
	/* runs whose eval-loop frame the native stack lacks: outermost, in their order */
	if (i < n) {
		p->st.runs_unplaced++;
		for (; i < n; i++)
			add_frame(p, b, pid, frames[i], offset_at(offsets, i), mod, ml);
	}
}

void fg_pysplice_skip(struct fg_pysplice *p)
{
	p->st.not_spliced++;
}

void fg_pysplice_stats(const struct fg_pysplice *p, struct fg_pysplice_stats *st)
{
	*st = p->st;
}
