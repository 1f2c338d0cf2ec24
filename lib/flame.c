// SPDX-License-Identifier: BSD-2-Clause
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fg/diag.h"
#include "fg/flame.h"
#include "fg/folded.h"

/* One line with a count: the key it sorts by, its stack and counts. */
struct rec {
	const char *key;
	const char *stack;
	uint32_t key_len, stack_len;
	double count, before;
	bool diff;
};

/* Blocks that never move, for the reversed lines. */
struct block {
	struct block *next;
	size_t used, cap;
	char data[];
};

struct fg_flame_priv {
	struct fg_flame_opts opts;
	size_t ninputs;
	struct rec *recs;
	size_t nrecs, recs_alloc;
	struct block *blocks;
	size_t frames_alloc;
};

static char *arena_alloc(struct fg_flame_priv *p, size_t n)
{
	struct block *b = p->blocks;

	if (!b || b->cap - b->used < n) {
		size_t cap = n > (1u << 20) ? n : (1u << 20);

		b = fg_xmalloc(sizeof(*b) + cap);
		b->next = p->blocks;
		b->used = 0;
		b->cap = cap;
		p->blocks = b;
	}
	b->used += n;
	return b->data + b->used - n;
}

struct fg_flame *fg_flame_new(const struct fg_flame_opts *o)
{
	struct fg_flame *f = fg_xcalloc(1, sizeof(*f));

	f->priv = fg_xcalloc(1, sizeof(*f->priv));
	if (o)
		f->priv->opts = *o;
	f->maxdelta = 1;
	return f;
}

void fg_flame_free(struct fg_flame *f)
{
	struct block *b, *next;

	if (!f)
		return;
	free(f->priv->recs);
	for (b = f->priv->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	free(f->priv);
	free(f->frames);
	free(f);
}

/* "c;b;a COUNT[ COUNT2]" for "a;b;c": the line --reverse sorts by. */
static void reverse_rec(struct fg_flame_priv *p, struct rec *r, const struct fg_folded *fl)
{
	size_t slen = fg_folded_trim(fl->stack, fl->stack_len);
	size_t n = slen + 2 + fl->count_text_len + (fl->diff ? fl->before_text_len + 1 : 0);
	char *out = arena_alloc(p, n), *o = out;
	size_t end = slen;
	const char *semi;

	/* the frames from the last to the first ("", the root, is the first) */
	while (slen > 0) {
		size_t start;

		semi = end ? memrchr(fl->stack, ';', end) : NULL;
		start = semi ? (size_t)(semi - fl->stack) + 1 : 0;
		if (end < slen)
			*o++ = ';';
		memcpy(o, fl->stack + start, end - start);
		o += end - start;
		if (!semi)
			break;
		end = start - 1;
	}
	r->stack = out;
	r->stack_len = (uint32_t)(o - out);
	*o++ = ' ';
	if (fl->diff) {
		memcpy(o, fl->before_text, fl->before_text_len);
		o += fl->before_text_len;
		*o++ = ' ';
	}
	memcpy(o, fl->count_text, fl->count_text_len);
	o += fl->count_text_len;
	r->key = out;
	r->key_len = (uint32_t)(o - out);
}

static bool is_base(const struct fg_flame_opts *o, const char *name, size_t len);

/*
 * Start the stack at its first base frame; false when it has none.  The
 * stack stands at the start of the key, so the key, shortened the same way,
 * sorts the stacks by their new roots.
 */
static bool rebase(struct fg_flame_priv *p, struct rec *r)
{
	size_t pos = 0, flen, off;
	const char *fname;

	while (fg_folded_next_frame(r->stack, r->stack_len, &pos, &fname, &flen)) {
		if (!is_base(&p->opts, fname, flen))
			continue;
		off = (size_t)(fname - r->stack);
		r->stack += off;
		r->stack_len -= (uint32_t)off;
		r->key += off;
		r->key_len -= (uint32_t)off;
		return true;
	}
	return false;
}

void fg_flame_add_input(struct fg_flame *f, const char *data, size_t len)
{
	struct fg_flame_priv *p = f->priv;
	uint64_t lineno = 0;
	size_t pos = 0;

	p->ninputs++;
	while (pos < len) {
		const char *line = data + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		struct fg_folded fl;
		struct rec *r;

		pos += n + 1;
		lineno++;
		if (n > UINT32_MAX || fg_folded_parse(line, n, &fl) < 0) {
			if (!f->ignored++) {
				f->first_ignored_input = p->ninputs;
				f->first_ignored_line = lineno;
			}
			continue;
		}
		f->lines++;
		FG_ALLOC_GROW(p->recs, p->nrecs + 1, p->recs_alloc);
		r = &p->recs[p->nrecs++];
		r->count = fl.count;
		r->before = fl.before;
		r->diff = fl.diff;
		f->diff |= fl.diff;
		if (p->opts.reverse) {
			reverse_rec(p, r, &fl);
		} else {
			/* the line without a final '\r' */
			r->key = line;
			r->key_len = (uint32_t)((fl.count_text + fl.count_text_len) - line);
			r->stack = fl.stack;
			r->stack_len = (uint32_t)fl.stack_len;
		}
		if (p->opts.nbase && !rebase(p, r)) {
			f->off_base++;
			f->off_base_samples += r->count;
			p->nrecs--;
			continue;
		}
		f->total += r->count;
	}
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	size_t n = x->key_len < y->key_len ? x->key_len : y->key_len;
	int c = memcmp(x->key, y->key, n);

	if (c)
		return c;
	return (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

struct part {
	const char *name;
	uint32_t len;
	uint32_t flags;
};

static bool is_base(const struct fg_flame_opts *o, const char *name, size_t len)
{
	size_t stripped = fg_flame_strip(name, len);

	for (size_t i = 0; i < o->nbase; i++) {
		size_t bl = strlen(o->base[i]);

		if ((bl == len || bl == stripped) && memcmp(name, o->base[i], bl) == 0)
			return true;
	}
	return false;
}

static uint32_t open_frame(struct fg_flame *f, const struct part *pt, uint32_t depth,
			   int32_t parent, double time)
{
	struct fg_frame *fr;

	FG_ALLOC_GROW(f->frames, f->nframes + 1, f->priv->frames_alloc);
	fr = &f->frames[f->nframes];
	memset(fr, 0, sizeof(*fr));
	fr->name = pt->name;
	fr->name_len = pt->len;
	fr->depth = depth;
	fr->parent = parent;
	fr->flags = pt->flags;
	fr->start = time;
	return (uint32_t)f->nframes++;
}

/*
 * Close frame `idx` at `time`.  A frame narrower than `min`
 * goes, with its subtree (the frames after it: it is the last open), and
 * its width stays with its parent as hidden weight.
 */
static void close_frame(struct fg_flame *f, uint32_t idx, double time, double min)
{
	struct fg_frame *fr = &f->frames[idx];

	fr->end = time;
	if (fr->end - fr->start < min && fr->parent >= 0) {
		f->frames[fr->parent].hidden += fr->end - fr->start;
		f->nframes = idx;
	}
}

void fg_flame_build(struct fg_flame *f, double min)
{
	struct fg_flame_priv *p = f->priv;
	struct part *parts = NULL;
	size_t parts_alloc = 0;
	uint32_t *open = NULL; /* open[d]: the frame open at depth d */
	size_t open_alloc = 0, nopen = 0;
	double time = 0;

	if (!p->opts.flamechart && p->nrecs > 1)
		qsort(p->recs, p->nrecs, sizeof(*p->recs), cmp_rec);
	for (size_t i = 0; i < p->nrecs; i++) {
		const struct rec *r = &p->recs[i];
		size_t nparts = 0, pos = 0, same, flen;
		uint32_t waker = 0;
		const char *fname;

		FG_ALLOC_GROW(parts, 1, parts_alloc);
		parts[nparts++] = (struct part){"", 0, 0};
		while (fg_folded_next_frame(r->stack, r->stack_len, &pos, &fname, &flen)) {
			FG_ALLOC_GROW(parts, nparts + 1, parts_alloc);
			parts[nparts++] = (struct part){fname, (uint32_t)flen, waker};
			if (p->opts.chain && flen == 2 && memcmp(fname, "--", 2) == 0)
				waker = FG_FRAME_WAKER;
		}
		/* how many frames, from the root, this stack shares with the open ones */
		for (same = 0; same < nopen && same < nparts; same++) {
			const struct fg_frame *fr = &f->frames[open[same]];

			if (fr->name_len != parts[same].len || fr->flags != parts[same].flags ||
			    memcmp(fr->name, parts[same].name, fr->name_len) != 0)
				break;
		}
		while (nopen > same) {
			nopen--;
			close_frame(f, open[nopen], time, min);
		}
		FG_ALLOC_GROW(open, nparts, open_alloc);
		for (; nopen < nparts; nopen++)
			open[nopen] = open_frame(f, &parts[nopen], (uint32_t)nopen,
						 nopen ? (int32_t)open[nopen - 1] : -1, time);
		if (r->diff)
			f->frames[open[nopen - 1]].delta += r->count - r->before;
		time += r->count;
	}
	while (nopen > 0) {
		nopen--;
		close_frame(f, open[nopen], time, min);
	}
	f->total = time;
	f->maxdepth = 0;
	for (size_t i = 0; i < f->nframes; i++) {
		if (fabs(f->frames[i].delta) > f->maxdelta)
			f->maxdelta = fabs(f->frames[i].delta);
		if (f->frames[i].depth > f->maxdepth)
			f->maxdepth = f->frames[i].depth;
	}
	free(parts);
	free(open);
}

size_t fg_flame_strip(const char *name, size_t len)
{
	if (len >= 4 && name[len - 4] == '_' && name[len - 3] == '[' && name[len - 1] == ']' &&
	    strchr("kwij", name[len - 2]) && name[len - 2])
		return len - 4;
	return len;
}
