// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-top's model: a tree of stacks with counts that move with time, and the
 * snapshots (views) a terminal draws: the top functions, the processes, the
 * flame graph laid out on a grid, the search.  See include/fg/top.h.
 */
#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "fg/diag.h"
#include "fg/folded.h"
#include "fg/hash.h"
#include "fg/perfscript.h"
#include "fg/top.h"
#include "fg/util.h"

#define NONE UINT32_MAX
#define MAX_IDS (UINT32_C(1) << 31)

/*
 * A node's children are two lists: those a view has put in order (`child`, by
 * name) and those made since (`fresh`, newest first), merged into the first
 * by the next view.  A new frame costs no walk of its siblings: a process
 * with 200k distinct functions arriving in order took minutes when each was
 * put in its place as it came.
 */
struct node {
	uint32_t parent, name;
	uint32_t child, sibling; /* first child, by name; next sibling (in either list) */
	uint32_t fresh;		 /* first child not in order yet */
	double cur;		 /* this second */
	double all, win, rst;	 /* since the start, the window, since the reset */
	double dec;		 /* decayed */
	bool touched;		 /* on the list of this second's nodes */
};

struct name {
	const char *s; /* the map's copy, annotation included */
	uint32_t flen; /* with it */
	uint32_t len;  /* without the annotation */
	uint8_t kind;
};

struct entry {
	uint32_t id;
	double w;
};

struct slot {
	struct entry *v;
	size_t n, alloc;
};

struct fg_top {
	unsigned secs;
	double decay; /* factor a second */
	struct node *nodes;
	size_t nnodes, anodes;
	struct fg_hash *names; /* name -> index in namev */
	struct name *namev;
	size_t nnames, anames;
	struct fg_hash *kids; /* (parent, name) -> node */
	uint32_t *unsorted;   /* nodes with fresh children */
	size_t nunsorted, aunsorted;
	uint32_t *touched; /* nodes with samples this second */
	size_t ntouched, atouched;
	struct slot *ring; /* the window, a slot a second */
	struct fg_top_stats st;
	void (*flush)(void *ctx); /* weights held elsewhere: fg_top_set_flush */
	void *flush_ctx;
};

static const char *const mode_names[] = {"window", "accumulate", "reset", "decay"};

const char *fg_top_mode_name(enum fg_top_mode m)
{
	return (unsigned)m < FG_ARRAY_SIZE(mode_names) ? mode_names[m] : "?";
}

int fg_top_mode_parse(const char *name)
{
	for (size_t i = 0; i < FG_ARRAY_SIZE(mode_names); i++)
		if (strcmp(name, mode_names[i]) == 0)
			return (int)i;
	return -1;
}

struct fg_top *fg_top_new(unsigned seconds)
{
	struct fg_top *t = fg_xcalloc(1, sizeof(*t));

	if (seconds < 1)
		seconds = 1;
	if (seconds > 3600)
		seconds = 3600;
	t->secs = seconds;
	t->decay = exp2(-1.0 / seconds);
	t->names = fg_hash_new(1024);
	t->kids = fg_hash_new(1024);
	t->ring = fg_xcalloc(seconds, sizeof(*t->ring));
	FG_ALLOC_GROW(t->nodes, 1, t->anodes);
	t->nodes[0] = (struct node){
	    .parent = NONE, .name = NONE, .child = NONE, .sibling = NONE, .fresh = NONE};
	t->nnodes = 1;
	return t;
}

void fg_top_free(struct fg_top *t)
{
	if (!t)
		return;
	for (unsigned i = 0; i < t->secs; i++)
		free(t->ring[i].v);
	free(t->ring);
	free(t->nodes);
	free(t->namev);
	free(t->touched);
	free(t->unsorted);
	fg_hash_free(t->names);
	fg_hash_free(t->kids);
	free(t);
}

unsigned fg_top_seconds(const struct fg_top *t)
{
	return t->secs;
}

enum fg_top_kind fg_top_kind(const char *name, size_t len, size_t *stripped)
{
	static const char ann[] = {'k', 'j', 'i'};
	static const enum fg_top_kind kinds[] = {FG_TOP_KERNEL, FG_TOP_JIT, FG_TOP_INLINED};

	*stripped = len;
	if (len > 4 && name[len - 4] == '_' && name[len - 3] == '[' && name[len - 1] == ']') {
		for (size_t i = 0; i < FG_ARRAY_SIZE(ann); i++) {
			if (name[len - 2] == ann[i]) {
				*stripped = len - 4;
				return kinds[i];
			}
		}
	}
	return FG_TOP_USER;
}

static int intern(struct fg_top *t, const char *s, size_t len, uint32_t *out)
{
	bool ins;
	struct fg_hash_entry *e;

	if (t->nnames >= MAX_IDS && !fg_hash_get(t->names, s, len))
		return -E2BIG;
	e = fg_hash_upsert(t->names, s, len, &ins);
	if (ins) {
		struct name *n;
		size_t stripped;

		FG_ALLOC_GROW(t->namev, t->nnames + 1, t->anames);
		n = &t->namev[t->nnames];
		n->s = e->key;
		n->flen = e->len;
		n->kind = (uint8_t)fg_top_kind(e->key, e->len, &stripped);
		n->len = (uint32_t)stripped;
		e->val.u = t->nnames++;
	}
	*out = (uint32_t)e->val.u;
	return 0;
}

/* bytewise order of two names, as flamegraph.pl sorts frames */
static int name_cmp(const struct fg_top *t, uint32_t a, uint32_t b)
{
	const struct name *x = &t->namev[a], *y = &t->namev[b];
	size_t lx = x->flen, ly = y->flen;
	int c = memcmp(x->s, y->s, lx < ly ? lx : ly);

	return c ? c : (lx > ly) - (lx < ly);
}

static int child(struct fg_top *t, uint32_t parent, uint32_t name, uint32_t *out)
{
	uint32_t key[2] = {parent, name};
	bool ins;
	struct fg_hash_entry *e;

	if (t->nnodes >= MAX_IDS && !fg_hash_get(t->kids, key, sizeof(key)))
		return -E2BIG;
	e = fg_hash_upsert(t->kids, key, sizeof(key), &ins);
	if (ins) {
		uint32_t id = (uint32_t)t->nnodes;
		struct node *p;

		FG_ALLOC_GROW(t->nodes, t->nnodes + 1, t->anodes);
		p = &t->nodes[parent];
		if (p->fresh == NONE) {
			FG_ALLOC_GROW(t->unsorted, t->nunsorted + 1, t->aunsorted);
			t->unsorted[t->nunsorted++] = parent;
		}
		t->nodes[id] = (struct node){.parent = parent,
					     .name = name,
					     .child = NONE,
					     .sibling = p->fresh,
					     .fresh = NONE};
		p->fresh = id;
		t->nnodes++;
		e->val.u = id;
	}
	*out = (uint32_t)e->val.u;
	return 0;
}

static int id_cmp(const void *x, const void *y, void *ctx)
{
	const struct fg_top *t = ctx;

	return name_cmp(t, t->nodes[*(const uint32_t *)x].name,
			t->nodes[*(const uint32_t *)y].name);
}

/* the fresh children of each node that has some: sorted, and merged into its children */
static void order_children(struct fg_top *t)
{
	uint32_t *v = NULL;
	size_t av = 0;

	for (size_t i = 0; i < t->nunsorted; i++) {
		struct node *p = &t->nodes[t->unsorted[i]];
		uint32_t *link = &p->child, old = p->child;
		size_t n = 0;

		for (uint32_t c = p->fresh; c != NONE; c = t->nodes[c].sibling) {
			FG_ALLOC_GROW(v, n + 1, av);
			v[n++] = c;
		}
		p->fresh = NONE;
		qsort_r(v, n, sizeof(*v), id_cmp, t);
		/* both lists in order, and no name in both */
		for (size_t k = 0; k < n;) {
			if (old != NONE &&
			    name_cmp(t, t->nodes[old].name, t->nodes[v[k]].name) < 0) {
				*link = old;
				link = &t->nodes[old].sibling;
				old = *link;
			} else {
				*link = v[k++];
				link = &t->nodes[*link].sibling;
			}
		}
		*link = old;
	}
	t->nunsorted = 0;
	free(v);
}

int fg_top_stack(struct fg_top *t, const char *stack, size_t len, uint32_t *id)
{
	size_t pos = 0, n;
	const char *f;
	uint32_t cur = 0;

	len = fg_folded_trim(stack, len);
	while (fg_folded_next_frame(stack, len, &pos, &f, &n)) {
		uint32_t name;
		int r = intern(t, f, n, &name);

		if (r == 0)
			r = child(t, cur, name, &cur);
		if (r < 0)
			return r;
	}
	*id = cur;
	return 0;
}

int fg_top_add(struct fg_top *t, uint32_t id, double weight)
{
	struct node *n = &t->nodes[id];

	if (!(weight >= 0) || weight > 1e300)
		return -EINVAL;
	if (weight == 0)
		return 0;
	if (!n->touched) {
		FG_ALLOC_GROW(t->touched, t->ntouched + 1, t->atouched);
		t->touched[t->ntouched++] = id;
		n->touched = true;
	}
	n->cur += weight;
	return 0;
}

int fg_top_add_folded(struct fg_top *t, const char *text, size_t len, size_t *nstacks,
		      uint32_t *last, double *last_weight)
{
	size_t n = 0;
	uint32_t id = 0;
	double w = 0;
	int r = 0;

	for (const char *p = text, *end = text + len; p < end && r == 0;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *sp;
		struct fg_count c;

		nl = nl ? nl : end;
		sp = nl;
		while (sp > p && sp[-1] != ' ')
			sp--;
		if (sp <= p || fg_count_parse(sp, (size_t)(nl - sp), &c) != 0)
			return -EINVAL;
		w = (double)c.whole + (c.dec ? (double)c.frac / pow(10, c.dec) : 0);
		r = fg_top_stack(t, p, (size_t)(sp - 1 - p), &id);
		if (r == 0)
			r = fg_top_add(t, id, w);
		n += r == 0;
		p = nl + 1;
	}
	if (nstacks)
		*nstacks = n;
	if (last)
		*last = id;
	if (last_weight)
		*last_weight = w;
	return r;
}

void fg_top_set_flush(struct fg_top *t, void (*flush)(void *ctx), void *ctx)
{
	t->flush = flush;
	t->flush_ctx = ctx;
}

void fg_top_tick(struct fg_top *t)
{
	struct slot *s = &t->ring[t->st.ticks % t->secs];

	if (t->flush)
		t->flush(t->flush_ctx);

	/* the second that leaves the window (what rounding leaves of a sum is nothing) */
	for (size_t i = 0; i < s->n; i++) {
		struct node *n = &t->nodes[s->v[i].id];

		n->win -= s->v[i].w;
		if (n->win < 1e-9 * s->v[i].w)
			n->win = 0;
	}
	s->n = 0;
	for (size_t i = 0; i < t->nnodes; i++) {
		struct node *n = &t->nodes[i];

		if (n->dec != 0)
			n->dec = n->dec * t->decay < 1e-9 ? 0 : n->dec * t->decay;
	}
	if (t->st.ticks % t->secs == 0)
		for (size_t i = 0; i < t->nnodes; i++)
			t->nodes[i].rst = 0;
	FG_ALLOC_GROW(s->v, t->ntouched, s->alloc);
	for (size_t i = 0; i < t->ntouched; i++) {
		struct node *n = &t->nodes[t->touched[i]];
		double w = n->cur;

		n->all += w;
		n->win += w;
		n->rst += w;
		n->dec += w;
		n->cur = 0;
		n->touched = false;
		s->v[s->n++] = (struct entry){t->touched[i], w};
	}
	t->ntouched = 0;
	t->st.ticks++;
}

const struct fg_top_stats *fg_top_stats(const struct fg_top *t)
{
	struct fg_top_stats *st = (struct fg_top_stats *)&t->st;
	size_t ring = 0;

	for (unsigned i = 0; i < t->secs; i++)
		ring += t->ring[i].alloc * sizeof(struct entry);
	st->nodes = t->nnodes;
	st->names = t->nnames;
	st->memory = t->anodes * sizeof(struct node) + t->anames * sizeof(struct name) +
		     (t->atouched + t->aunsorted) * sizeof(uint32_t) + ring +
		     fg_hash_memory(t->names) + fg_hash_memory(t->kids);
	return st;
}

/* --- views --- */

static double value(const struct node *n, enum fg_top_mode m)
{
	switch (m) {
	case FG_TOP_ACCUMULATE:
		return n->all + n->cur;
	case FG_TOP_RESET:
		return n->rst + n->cur;
	case FG_TOP_DECAY:
		return n->dec + n->cur;
	default:
		return n->win + n->cur;
	}
}

/* heaviest first by one share, then by the other, then by name and kind */
static int func_cmp(const void *x, const void *y, void *by)
{
	const struct fg_top_func *a = x, *b = y;
	bool total = *(const enum fg_top_sort *)by == FG_TOP_BY_TOTAL;
	double a1 = total ? a->total : a->self, b1 = total ? b->total : b->self;
	double a2 = total ? a->self : a->total, b2 = total ? b->self : b->total;
	int c;

	if (a1 != b1)
		return a1 > b1 ? -1 : 1;
	if (a2 != b2)
		return a2 > b2 ? -1 : 1;
	c = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);
	if (c)
		return c;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return (int)a->kind - (int)b->kind;
}

void fg_top_view_sort(struct fg_top_view *v, enum fg_top_sort by)
{
	qsort_r(v->funcs, v->nfuncs, sizeof(*v->funcs), func_cmp, &by);
}

/* the functions: self and total by name, a recursive function's samples counted once */
static void make_funcs(struct fg_top_view *v, const struct fg_top *t)
{
	int32_t *at = fg_xmalloc((t->nnames ? t->nnames : 1) * sizeof(*at));
	uint32_t *onpath = fg_xcalloc(t->nnames ? t->nnames : 1, sizeof(*onpath));
	uint32_t *path = fg_xmalloc((v->maxdepth + 1) * sizeof(*path));
	uint32_t depth = 0; /* entries on path: the names of depths 1..depth */

	memset(at, -1, (t->nnames ? t->nnames : 1) * sizeof(*at));
	v->funcs = fg_xcalloc(t->nnames ? t->nnames : 1, sizeof(*v->funcs));
	for (size_t i = 1; i < v->nnodes; i++) {
		const struct fg_top_vnode *vn = &v->nodes[i];
		uint32_t name = t->nodes[vn->id].name;
		struct fg_top_func *fn;

		while (depth >= vn->depth)
			if (path[depth--] != NONE)
				onpath[path[depth + 1]]--;
		if (vn->depth == 1) {
			path[++depth] = NONE; /* a process, not a function */
			continue;
		}
		onpath[name]++;
		path[++depth] = name;
		if (at[name] < 0) {
			at[name] = (int32_t)v->nfuncs;
			fn = &v->funcs[v->nfuncs++];
			fn->name = vn->name;
			fn->len = vn->len;
			fn->kind = vn->kind;
		}
		fn = &v->funcs[at[name]];
		fn->self += vn->self;
		if (onpath[name] == 1)
			fn->total += vn->total;
	}
	free(at);
	free(onpath);
	free(path);
	fg_top_view_sort(v, FG_TOP_BY_SELF);
}

static void make_procs(struct fg_top_view *v)
{
	size_t n = 0;

	for (size_t i = 1; i < v->nnodes; i++)
		n += v->nodes[i].depth == 1;
	v->procs = fg_xcalloc(n ? n : 1, sizeof(*v->procs));
	for (size_t i = 1; i < v->nnodes; i++) {
		const struct fg_top_vnode *vn = &v->nodes[i];

		if (vn->depth != 1)
			continue;
		v->procs[v->nprocs++] = (struct fg_top_func){
		    .name = vn->name,
		    .len = vn->len,
		    .kind = vn->kind,
		    .self = vn->self,
		    .total = vn->total,
		};
	}
	enum fg_top_sort by = FG_TOP_BY_TOTAL;

	qsort_r(v->procs, v->nprocs, sizeof(*v->procs), func_cmp, &by);
}

struct fg_top_view *fg_top_view_new(struct fg_top *t, enum fg_top_mode mode)
{
	if (t->flush)
		t->flush(t->flush_ctx);

	struct fg_top_view *v = fg_xcalloc(1, sizeof(*v));
	size_t n = t->nnodes, top = 0;
	double *self = fg_xmalloc(n * sizeof(*self)), *tot = fg_xmalloc(n * sizeof(*tot));
	uint32_t *stack = fg_xmalloc(n * sizeof(*stack));
	double *next = fg_xmalloc(n * sizeof(*next)); /* where a view node's next child starts */

	order_children(t);
	v->mode = mode;
	for (size_t i = 0; i < n; i++)
		self[i] = tot[i] = value(&t->nodes[i], mode);
	/* a parent is made before its children: its index is smaller */
	for (size_t i = n; i-- > 1;)
		tot[t->nodes[i].parent] += tot[i];
	v->total = tot[0];
	v->nby_id = n;
	v->by_id = fg_xmalloc(n * sizeof(*v->by_id));
	memset(v->by_id, -1, n * sizeof(*v->by_id));
	v->nodes = fg_xmalloc(n * sizeof(*v->nodes));

	/* pre-order, children by name, leaving out what has no weight */
	stack[top++] = 0;
	while (top) {
		uint32_t id = stack[--top];
		const struct node *mn = &t->nodes[id];
		int32_t vi = (int32_t)v->nnodes++, vp = id ? v->by_id[mn->parent] : -1;
		struct fg_top_vnode *vn = &v->nodes[vi];
		uint32_t kids = 0;

		v->by_id[id] = vi;
		*vn = (struct fg_top_vnode){
		    .id = id, .parent = vp, .self = self[id], .total = tot[id]};
		if (id) {
			const struct name *nm = &t->namev[mn->name];

			vn->name = nm->s;
			vn->len = nm->len;
			vn->kind = nm->kind;
			vn->depth = v->nodes[vp].depth + 1;
			vn->start = next[vp];
			next[vp] += tot[id];
			v->nodes[vp].nchildren++;
		} else {
			vn->name = "all";
			vn->len = 3;
		}
		next[vi] = vn->start;
		if (vn->depth > v->maxdepth)
			v->maxdepth = vn->depth;
		/* push the children in reverse, so that the first comes out first */
		for (uint32_t c = mn->child; c != NONE; c = t->nodes[c].sibling)
			if (tot[c] > 0)
				kids++;
		size_t at = top + kids;
		for (uint32_t c = mn->child; c != NONE; c = t->nodes[c].sibling)
			if (tot[c] > 0)
				stack[--at] = c;
		top += kids;
	}
	free(self);
	free(tot);
	free(stack);
	free(next);
	make_funcs(v, t);
	make_procs(v);
	return v;
}

void fg_top_view_free(struct fg_top_view *v)
{
	if (!v)
		return;
	free(v->nodes);
	free(v->funcs);
	free(v->procs);
	free(v->by_id);
	free(v);
}

int fg_top_view_write_folded(const struct fg_top_view *v, FILE *out)
{
	struct fg_buf path = FG_BUF_INIT;
	size_t *at = fg_xmalloc((v->maxdepth + 1) * sizeof(*at)); /* path length by depth */

	at[0] = 0;
	for (size_t i = 1; i < v->nnodes; i++) {
		const struct fg_top_vnode *vn = &v->nodes[i];

		fg_buf_truncate(&path, at[vn->depth - 1]);
		if (vn->depth > 1)
			fg_buf_addch(&path, ';');
		fg_buf_add(&path, vn->name, vn->len + (vn->kind != FG_TOP_USER ? 4 : 0));
		at[vn->depth] = path.len;
		if (vn->self > 0) {
			fwrite(path.data, 1, path.len, out);
			fprintf(out, " %.15g\n", vn->self);
		}
	}
	fg_buf_release(&path);
	free(at);
	return ferror(out) ? -EIO : 0;
}

int32_t fg_top_view_find(const struct fg_top_view *v, uint32_t id)
{
	if (id < v->nby_id && v->by_id[id] >= 0)
		return v->by_id[id];
	return 0;
}

/* --- search --- */

static bool name_matches(const regex_t *re, const char *s, size_t len, struct fg_buf *tmp)
{
	fg_buf_reset(tmp);
	fg_buf_add(tmp, s, len);
	return regexec(re, tmp->data ? tmp->data : "", 0, NULL, 0) == 0;
}

int fg_top_view_search(struct fg_top_view *v, const char *pattern, char *err, size_t errlen)
{
	regex_t re;
	struct fg_buf tmp = FG_BUF_INIT;
	bool *cover;
	int r;

	for (size_t i = 0; i < v->nnodes; i++)
		v->nodes[i].matched = false;
	for (size_t i = 0; i < v->nfuncs; i++)
		v->funcs[i].matched = false;
	for (size_t i = 0; i < v->nprocs; i++)
		v->procs[i].matched = false;
	v->searching = false;
	v->matched = 0;
	if (!pattern || !*pattern)
		return 0;
	r = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
	if (r != 0) {
		if (err && errlen)
			regerror(r, &re, err, errlen);
		return -EINVAL;
	}
	v->searching = true;
	/* a frame under a matched frame is marked, but its samples count once */
	cover = fg_xcalloc(v->nnodes ? v->nnodes : 1, sizeof(*cover));
	for (size_t i = 1; i < v->nnodes; i++) {
		struct fg_top_vnode *vn = &v->nodes[i];
		int32_t p = vn->parent;

		cover[i] = p > 0 && (cover[p] || v->nodes[p].matched);
		vn->matched = name_matches(&re, vn->name, vn->len, &tmp);
		if (vn->matched && !cover[i])
			v->matched += vn->total;
	}
	for (size_t i = 0; i < v->nfuncs; i++)
		v->funcs[i].matched = name_matches(&re, v->funcs[i].name, v->funcs[i].len, &tmp);
	for (size_t i = 0; i < v->nprocs; i++)
		v->procs[i].matched = name_matches(&re, v->procs[i].name, v->procs[i].len, &tmp);
	free(cover);
	fg_buf_release(&tmp);
	regfree(&re);
	return 0;
}

double fg_top_view_matched_in(const struct fg_top_view *v, int32_t idx)
{
	const struct fg_top_vnode *z = &v->nodes[idx];
	double zs = z->start, ze = z->start + z->total, sum = 0;

	if (!v->searching)
		return 0;
	/* a matched ancestor covers the whole frame */
	for (int32_t a = idx; a > 0; a = v->nodes[a].parent)
		if (v->nodes[a].matched)
			return z->total;
	/* else the outermost matches below it */
	for (size_t i = (size_t)idx + 1; i < v->nnodes && v->nodes[i].depth > z->depth; i++) {
		const struct fg_top_vnode *vn = &v->nodes[i];

		if (!vn->matched)
			continue;
		double s = vn->start > zs ? vn->start : zs;
		double e = vn->start + vn->total < ze ? vn->start + vn->total : ze;

		if (e > s)
			sum += e - s;
		/* skip what it covers */
		uint32_t d = vn->depth;
		while (i + 1 < v->nnodes && v->nodes[i + 1].depth > d)
			i++;
	}
	return sum;
}

/* --- the grid --- */

static int cell_cmp(const void *x, const void *y)
{
	const struct fg_top_cell *a = x, *b = y;

	if (a->row != b->row)
		return a->row < b->row ? -1 : 1;
	return (a->col > b->col) - (a->col < b->col);
}

static void put_cell(struct fg_top_cell **cells, size_t *alloc, size_t *n, uint32_t row,
		     uint32_t col, uint32_t width, int32_t node)
{
	FG_ALLOC_GROW(*cells, *n + 1, *alloc);
	(*cells)[(*n)++] = (struct fg_top_cell){row, col, width, node};
}

size_t fg_top_layout(const struct fg_top_view *v, int32_t zoom, unsigned cols,
		     struct fg_top_cell **cells, size_t *alloc)
{
	size_t n = 0;

	if (cols == 0 || v->nnodes == 0)
		return 0;
	if (zoom < 0 || (size_t)zoom >= v->nnodes)
		zoom = 0;
	const struct fg_top_vnode *z = &v->nodes[zoom];
	for (int32_t a = zoom; a >= 0; a = v->nodes[a].parent)
		put_cell(cells, alloc, &n, v->nodes[a].depth, 0, cols, a);
	if (z->total <= 0)
		goto out;
	double scale = cols / z->total;
	for (size_t i = (size_t)zoom + 1; i < v->nnodes && v->nodes[i].depth > z->depth; i++) {
		const struct fg_top_vnode *vn = &v->nodes[i];
		double x0 = (vn->start - z->start) * scale, x1 = x0 + vn->total * scale;
		long c0 = lround(x0), c1 = lround(x1);

		if (c0 < 0)
			c0 = 0;
		if (c1 > (long)cols)
			c1 = (long)cols;
		if (c1 <= c0) {
			/* too narrow: so is everything above it */
			uint32_t d = vn->depth;
			while (i + 1 < v->nnodes && v->nodes[i + 1].depth > d)
				i++;
			continue;
		}
		put_cell(cells, alloc, &n, vn->depth, (uint32_t)c0, (uint32_t)(c1 - c0),
			 (int32_t)i);
	}
out:
	qsort(*cells, n, sizeof(**cells), cell_cmp);
	return n;
}

static long cell_of(const struct fg_top_cell *cells, size_t n, int32_t node)
{
	for (size_t i = 0; i < n; i++)
		if (cells[i].node == node)
			return (long)i;
	return -1;
}

int32_t fg_top_nav(const struct fg_top_view *v, const struct fg_top_cell *cells, size_t ncells,
		   int32_t sel, enum fg_top_dir dir)
{
	long at;

	if (sel < 0 || (size_t)sel >= v->nnodes)
		return 0;
	/* a frame without a cell: its nearest ancestor that has one */
	while ((at = cell_of(cells, ncells, sel)) < 0 && sel > 0)
		sel = v->nodes[sel].parent;
	if (at < 0)
		return sel;
	switch (dir) {
	case FG_TOP_STAY:
		return sel;
	case FG_TOP_LEFT:
		if (at > 0 && cells[at - 1].row == cells[at].row)
			return cells[at - 1].node;
		return sel;
	case FG_TOP_RIGHT:
		if ((size_t)at + 1 < ncells && cells[at + 1].row == cells[at].row)
			return cells[at + 1].node;
		return sel;
	case FG_TOP_UP:
		return sel > 0 ? v->nodes[sel].parent : sel;
	case FG_TOP_DOWN: {
		int32_t best = sel;
		uint32_t bw = 0;

		for (size_t i = (size_t)at + 1; i < ncells; i++) {
			if (cells[i].row > cells[at].row + 1)
				break;
			if (v->nodes[cells[i].node].parent == sel && cells[i].width > bw) {
				best = cells[i].node;
				bw = cells[i].width;
			}
		}
		return best;
	}
	}
	return sel;
}

/* --- names on a terminal --- */

/* a valid UTF-8 sequence at s: its length and code point, or 0 */
static size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
	uint32_t c = s[0], min;
	size_t len;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

size_t fg_top_printable(struct fg_buf *out, const char *name, size_t len, bool utf8, size_t maxcols)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t start = out->len, cols = 0;
	size_t fit_len = out->len, fit_cols = 0; /* the longest prefix leaving room for ".." */
	char esc[16];

	for (size_t i = 0; i < len;) {
		uint32_t cp = 0;
		size_t n = 1, w;
		int k = 0;

		if (s[i] >= 0x20 && s[i] < 0x7f) {
			w = 1;
		} else if (utf8 && s[i] >= 0x80 && (n = utf8_char(s + i, len - i, &cp)) > 0) {
			int cw = wcwidth((wchar_t)cp);

			if (cw > 0) {
				w = (size_t)cw;
			} else {
				k = snprintf(esc, sizeof(esc), "\\u{%x}", (unsigned)cp);
				w = (size_t)k;
			}
		} else {
			n = 1;
			k = snprintf(esc, sizeof(esc), "\\x%02x", s[i]);
			w = (size_t)k;
		}
		if (cols + w > maxcols) {
			/* does not fit: the prefix that leaves room for "..", if any */
			fg_buf_truncate(out, fit_len);
			if (maxcols >= 3) {
				fg_buf_add(out, "..", 2);
				return fit_cols + 2;
			}
			fg_buf_truncate(out, start);
			return 0;
		}
		if (k)
			fg_buf_add(out, esc, (size_t)k);
		else
			fg_buf_add(out, name + i, n);
		cols += w;
		if (cols + 2 <= maxcols) {
			fit_len = out->len;
			fit_cols = cols;
		}
		i += n;
	}
	return cols;
}

struct fg_rgb fg_top_color(const char *name, size_t len, enum fg_top_kind kind)
{
	static const char *const ann[] = {"", "_[k]", "_[j]", "_[i]"};
	char small[256];
	size_t alen = strlen(ann[kind]);
	char *tmp = len + alen <= sizeof(small) ? small : fg_xmalloc(len + alen);
	uint64_t rng = 1;
	struct fg_rgb c;

	memcpy(tmp, name, len);
	memcpy(tmp + len, ann[kind], alen);
	c = fg_palette_color(FG_PAL_JAVA, FG_PICK_HASH, tmp, len + alen, &rng);
	if (tmp != small)
		free(tmp);
	return c;
}

int fg_top_xterm256(struct fg_rgb c)
{
	static const int level[6] = {0, 95, 135, 175, 215, 255};
	int v[3] = {c.r, c.g, c.b}, idx[3];
	long cube = 0, grey, best_grey = -1;

	for (int i = 0; i < 3; i++) {
		int best = 0;

		for (int l = 1; l < 6; l++)
			if (abs(level[l] - v[i]) < abs(level[best] - v[i]))
				best = l;
		idx[i] = best;
		cube += (long)(level[best] - v[i]) * (level[best] - v[i]);
	}
	/* the grey ramp 232-255: 8, 18, ..., 238 */
	int avg = (v[0] + v[1] + v[2]) / 3, k = (avg - 8 + 5) / 10;
	if (k < 0)
		k = 0;
	if (k > 23)
		k = 23;
	int g = 8 + 10 * k;
	grey = 0;
	for (int i = 0; i < 3; i++)
		grey += (long)(g - v[i]) * (g - v[i]);
	if (grey < cube)
		best_grey = 232 + k;
	return best_grey >= 0 ? (int)best_grey : 16 + 36 * idx[0] + 6 * idx[1] + idx[2];
}
