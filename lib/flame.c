// SPDX-License-Identifier: BSD-2-Clause
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/flame.h"
#include "fg/folded.h"
#include "fg/hash.h"
#include "fg/lines.h"

/*
 * A sum of fractional counts that does not depend on their order more than
 * it must (Neumaier's compensated summation): whole counts add up exactly
 * either way, and fractional ones come out as if added exactly, then rounded.
 */
struct sum {
	double s, c;
};

static void sum_add(struct sum *a, double v)
{
	double t = a->s + v;

	if (fabs(a->s) >= fabs(v))
		a->c += (a->s - t) + v;
	else
		a->c += (v - t) + a->s;
	a->s = t;
}

static double sum_get(const struct sum *a)
{
	return a->s + a->c;
}

/*
 * One distinct stack of a flame graph, or one run of equal neighbouring
 * stacks of a flame chart, with the sums of its lines' counts.
 *
 * flamegraph.pl sorts whole lines, "STACK COUNT", as byte strings and merges
 * the frames neighbouring lines share.  The lines of one stack differ only
 * after the stack, so they sort together unless another stack's line falls
 * between them, which takes a stack that extends this one with a blank and
 * more ("a;b" and "a;b 1x"): a stack sorts here by its stack and the least of
 * its lines' suffixes (the blank and the count or counts, as written), as its
 * first line would, and its lines are drawn as one.
 */
struct rec {
	const char *stack; /* the stack map's copy */
	uint32_t stack_len;
	uint32_t sfx_len, sfx_cap;
	char *sfx;			     /* the least suffix seen (sorted graphs only) */
	struct sum count;		     /* the lines' counts */
	struct sum delta;		     /* (after - before) of the lines with two counts */
	struct fg_count exact, exact_before; /* the same sums, exactly: each fits in 64 bits */
	bool diff;			     /* some line had two counts */
};

struct fg_flame_priv {
	struct fg_flame_opts opts;
	size_t ninputs;
	struct fg_hash *stacks; /* stack -> rec index + 1 (flame chart: interned stacks only) */
	struct rec *recs;
	size_t nrecs, recs_alloc;
	struct fg_buf rstack, rsfx; /* a reversed line */
	size_t frames_alloc;
};

struct fg_flame *fg_flame_new(const struct fg_flame_opts *o)
{
	struct fg_flame *f = fg_xcalloc(1, sizeof(*f));

	f->priv = fg_xcalloc(1, sizeof(*f->priv));
	if (o)
		f->priv->opts = *o;
	f->priv->stacks = fg_hash_new(0);
	f->maxdelta = 1;
	return f;
}

void fg_flame_free(struct fg_flame *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->priv->nrecs; i++)
		free(f->priv->recs[i].sfx);
	free(f->priv->recs);
	fg_hash_free(f->priv->stacks);
	fg_buf_release(&f->priv->rstack);
	fg_buf_release(&f->priv->rsfx);
	free(f->priv);
	free(f->frames);
	free(f);
}

/* "c;b;a" for "a;b;c" (empty frames at the end dropped first), into b. */
static void reverse_stack(struct fg_buf *b, const char *stack, size_t len)
{
	size_t end = fg_folded_trim(stack, len), slen = end;

	fg_buf_reset(b);
	fg_buf_grow(b, slen);
	/* the frames from the last to the first ("", the root, is the first) */
	while (slen > 0) {
		const char *semi = end ? memrchr(stack, ';', end) : NULL;
		size_t start = semi ? (size_t)(semi - stack) + 1 : 0;

		if (end < slen)
			fg_buf_addch(b, ';');
		fg_buf_add(b, stack + start, end - start);
		if (!semi)
			break;
		end = start - 1;
	}
}

static bool is_base(const struct fg_flame_opts *o, const char *name, size_t len);

/* The stack from its first base frame; false when it has none. */
static bool rebase(const struct fg_flame_opts *o, const char **stack, size_t *len)
{
	size_t pos = 0, flen;
	const char *fname;

	while (fg_folded_next_frame(*stack, *len, &pos, &fname, &flen)) {
		if (!is_base(o, fname, flen))
			continue;
		*len -= (size_t)(fname - *stack);
		*stack = fname;
		return true;
	}
	return false;
}

/* Compare the byte strings a1 a2 and b1 b2 (each the concatenation of two parts). */
static int cmp2(const char *a1, size_t n1, const char *a2, size_t n2, const char *b1, size_t m1,
		const char *b2, size_t m2)
{
	while (n1 + n2 > 0 && m1 + m2 > 0) {
		size_t k;
		int c;

		if (n1 == 0) {
			a1 = a2, n1 = n2, n2 = 0;
			continue;
		}
		if (m1 == 0) {
			b1 = b2, m1 = m2, m2 = 0;
			continue;
		}
		k = n1 < m1 ? n1 : m1;
		c = memcmp(a1, b1, k);
		if (c)
			return c;
		a1 += k, n1 -= k, b1 += k, m1 -= k;
	}
	return (n1 + n2 > 0) - (m1 + m2 > 0);
}

/* What sorts a stack's line after the stack: " COUNT", " BEFORE COUNT", as written. */
static void set_suffix(struct rec *r, const char *sfx, size_t len)
{
	if (len > r->sfx_cap) {
		r->sfx = fg_xrealloc(r->sfx, len);
		r->sfx_cap = (uint32_t)len;
	}
	memcpy(r->sfx, sfx, len);
	r->sfx_len = (uint32_t)len;
}

static struct rec *new_rec(struct fg_flame_priv *p, const struct fg_hash_entry *e)
{
	struct rec *r;

	FG_ALLOC_GROW(p->recs, p->nrecs + 1, p->recs_alloc);
	r = &p->recs[p->nrecs++];
	memset(r, 0, sizeof(*r));
	r->stack = e->key;
	r->stack_len = e->len;
	return r;
}

/* a line left out for its count: counted, the first one's place kept */
static void refuse(struct fg_flame *f, int why, uint64_t lineno)
{
	if (!f->refused++) {
		f->first_refused_input = f->priv->ninputs;
		f->first_refused_line = lineno;
		f->first_refused_why = why;
	}
}

/* Add one line (without its newline) of input p->ninputs. */
static void add_line(struct fg_flame *f, const char *line, size_t n, uint64_t lineno)
{
	struct fg_flame_priv *p = f->priv;
	const char *stack, *sfx;
	size_t stack_len, sfx_len;
	struct fg_folded fl;
	struct fg_hash_entry *e;
	struct rec *r;
	bool inserted;

	if (n > UINT32_MAX || fg_folded_parse(line, n, &fl) < 0) {
		if (!f->ignored++) {
			f->first_ignored_input = p->ninputs;
			f->first_ignored_line = lineno;
		}
		return;
	}
	/* as fg-fold: a count past 2^64-1 leaves its line out */
	struct fg_count c = {0}, cb = {0};
	if (fg_count_parse(fl.count_text, fl.count_text_len, &c) != 0 ||
	    (fl.diff && fg_count_parse(fl.before_text, fl.before_text_len, &cb) != 0)) {
		refuse(f, FG_FLAME_TOO_BIG, lineno);
		return;
	}
	f->lines++;
	f->diff |= fl.diff;
	stack = fl.stack;
	stack_len = fl.stack_len;
	/* the suffix: what follows the stack on the line, up to the end of the count */
	sfx = stack + stack_len;
	sfx_len = (size_t)(fl.count_text + fl.count_text_len - sfx);
	if (p->opts.reverse) {
		/* sorted as the line "c;b;a[ BEFORE] COUNT" */
		struct fg_buf *b = &p->rsfx;

		reverse_stack(&p->rstack, stack, stack_len);
		stack = p->rstack.data ? p->rstack.data : "";
		stack_len = p->rstack.len;
		fg_buf_reset(b);
		fg_buf_addch(b, ' ');
		if (fl.diff) {
			fg_buf_add(b, fl.before_text, fl.before_text_len);
			fg_buf_addch(b, ' ');
		}
		fg_buf_add(b, fl.count_text, fl.count_text_len);
		sfx = b->data;
		sfx_len = b->len;
	}
	if (p->opts.nbase && !rebase(&p->opts, &stack, &stack_len)) {
		f->off_base++;
		f->off_base_samples += fl.count;
		return;
	}
	e = fg_hash_upsert(p->stacks, stack, stack_len, &inserted);
	if (p->opts.flamechart) {
		/* the input order: merge only with the line before */
		r = p->nrecs ? &p->recs[p->nrecs - 1] : NULL;
		if (!r || r->stack != e->key)
			r = new_rec(p, e);
	} else if (inserted) {
		r = new_rec(p, e);
		e->val.u = p->nrecs;
		set_suffix(r, sfx, sfx_len);
	} else {
		r = &p->recs[e->val.u - 1];
	}
	/* as fg-fold: a line that would take its stack's count past 2^64-1 is left out */
	struct fg_count sum = r->exact, sumb = r->exact_before;
	if (fg_count_add(&sum, &c) != 0 || fg_count_add(&sumb, &cb) != 0) {
		refuse(f, FG_FLAME_SUM_TOO_BIG, lineno);
		return;
	}
	r->exact = sum;
	r->exact_before = sumb;
	if (!p->opts.flamechart && !inserted &&
	    cmp2(sfx, sfx_len, "", 0, r->sfx, r->sfx_len, "", 0) < 0)
		set_suffix(r, sfx, sfx_len);
	f->total += fl.count;
	sum_add(&r->count, fl.count);
	if (fl.diff) {
		r->diff = true;
		sum_add(&r->delta, fl.count - fl.before);
	}
	f->stacks = p->nrecs;
}

void fg_flame_add_input(struct fg_flame *f, const char *data, size_t len)
{
	uint64_t lineno = 0;
	size_t pos = 0;

	f->priv->ninputs++;
	while (pos < len) {
		const char *line = data + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;

		pos += n + 1;
		add_line(f, line, n, ++lineno);
	}
}

int fg_flame_read(struct fg_flame *f, int fd)
{
	struct fg_lines l;
	const char *line;
	size_t n;
	int r;

	f->priv->ninputs++;
	fg_lines_init_fd(&l, fd, NULL);
	while ((r = fg_lines_next(&l, &line, &n)) > 0)
		add_line(f, line, n, l.lineno);
	fg_lines_release(&l);
	return r;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	return cmp2(x->stack, x->stack_len, x->sfx, x->sfx_len, y->stack, y->stack_len, y->sfx,
		    y->sfx_len);
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
	struct fg_flame_frame *fr;

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
	struct fg_flame_frame *fr = &f->frames[idx];

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
			const struct fg_flame_frame *fr = &f->frames[open[same]];

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
			f->frames[open[nopen - 1]].delta += sum_get(&r->delta);
		time += sum_get(&r->count);
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
