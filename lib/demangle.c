// SPDX-License-Identifier: BSD-2-Clause
#include <ctype.h>
#include <libiberty/demangle.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fg/demangle.h"

static uint64_t names_cut;

/*
 * The demangler's output, gathered by its callback.  libiberty hands the
 * name over in pieces and cannot be told to stop, so once the name is too
 * long (or the pieces too many) the callback jumps out of it.  That is safe
 * because the callback interfaces allocate nothing on the heap (their state
 * lives in the frames the jump discards), with one exception: Rust v0's
 * Punycode identifiers, decoded into a heap buffer and handed over from it.
 * That piece is the only one holding a byte >= 0x80 (a Rust symbol is ASCII,
 * and so is what the demangler adds to it), so the jump waits for the next.
 */
struct out {
	char buf[FG_DEMANGLE_MAX + 1];
	size_t len;
	size_t calls;
	bool cut;
	bool rust;
	jmp_buf stop;
};

static bool has_high_byte(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] >= 0x80)
			return true;
	return false;
}

static void gather(const char *s, size_t len, void *opaque)
{
	struct out *o = opaque;
	size_t room = sizeof(o->buf) - 1 - o->len;

	if (!o->cut) {
		if (len) /* the Rust demangler may hand over (NULL, 0) */
			memcpy(o->buf + o->len, s, len < room ? len : room);
		o->len += len < room ? len : room;
		o->cut = len > room || ++o->calls > FG_DEMANGLE_MAX_CALLS;
		if (!o->cut)
			return;
	}
	if (!(o->rust && has_high_byte(s, len)))
		longjmp(o->stop, 1);
}

/* Cut the name to FG_DEMANGLE_MAX bytes with the mark, at a UTF-8 character's start. */
static void cut(struct out *o)
{
	size_t n = FG_DEMANGLE_MAX - (sizeof(FG_DEMANGLE_CUT_MARK) - 1);

	if (o->len < n)
		n = o->len;
	/* back to a character's first byte (o->buf[o->len] is not written) */
	while (n > 0 && n < o->len && ((unsigned char)o->buf[n] & 0xc0) == 0x80)
		n--;
	memcpy(o->buf + n, FG_DEMANGLE_CUT_MARK, sizeof(FG_DEMANGLE_CUT_MARK));
	o->len = n + sizeof(FG_DEMANGLE_CUT_MARK) - 1;
	__atomic_fetch_add(&names_cut, 1, __ATOMIC_RELAXED);
}

/*
 * Before it prints a pack expansion, libiberty walks the expansion's pattern
 * for a pack, printing nothing; substitutions make the pattern a graph, so
 * the walk can take exponential time on a short name (90 bytes took 40 s),
 * and stopping the output does not stop it.  So the parsed tree is checked
 * first: each pattern's size, its shared parts counted each time they are
 * reached, must be at most FG_DEMANGLE_MAX_NODES.  The nodes with children
 * are those libiberty's d_make_comp gives them to; the others hold names,
 * numbers and operators.
 */
struct tree_memo {
	const struct demangle_component **node;
	uint64_t *size;
	size_t mask;
	bool too_large;
};

static bool has_children(enum demangle_component_type t)
{
	switch (t) {
	case DEMANGLE_COMPONENT_NAME:
	case DEMANGLE_COMPONENT_TEMPLATE_PARAM:
	case DEMANGLE_COMPONENT_FUNCTION_PARAM:
	case DEMANGLE_COMPONENT_CTOR:
	case DEMANGLE_COMPONENT_DTOR:
	case DEMANGLE_COMPONENT_SUB_STD:
	case DEMANGLE_COMPONENT_BUILTIN_TYPE:
	case DEMANGLE_COMPONENT_EXTENDED_BUILTIN_TYPE:
	case DEMANGLE_COMPONENT_FIXED_TYPE:
	case DEMANGLE_COMPONENT_OPERATOR:
	case DEMANGLE_COMPONENT_EXTENDED_OPERATOR:
	case DEMANGLE_COMPONENT_CHARACTER:
	case DEMANGLE_COMPONENT_NUMBER:
	case DEMANGLE_COMPONENT_LAMBDA:
	case DEMANGLE_COMPONENT_DEFAULT_ARG:
	case DEMANGLE_COMPONENT_UNNAMED_TYPE:
	case DEMANGLE_COMPONENT_TEMPLATE_TYPE_PARM:
	case DEMANGLE_COMPONENT_TEMPLATE_NON_TYPE_PARM:
	case DEMANGLE_COMPONENT_TEMPLATE_TEMPLATE_PARM:
	case DEMANGLE_COMPONENT_TEMPLATE_PACK_PARM:
	case DEMANGLE_COMPONENT_TEMPLATE_HEAD:
	case DEMANGLE_COMPONENT_MODULE_NAME:
	case DEMANGLE_COMPONENT_MODULE_PARTITION:
	case DEMANGLE_COMPONENT_STRUCTURED_BINDING:
		return false;
	default:
		return true;
	}
}

/* the size of the tree at dc, up to FG_DEMANGLE_MAX_NODES + 1; each node visited once */
static uint64_t tree_size(struct tree_memo *m, const struct demangle_component *dc, int depth)
{
	const uint64_t over = FG_DEMANGLE_MAX_NODES + 1;
	size_t h;
	uint64_t n, left;

	if (!dc)
		return 0;
	if (!has_children(dc->type))
		return 1;
	if (depth > DEMANGLE_RECURSION_LIMIT) {
		m->too_large = true;
		return over;
	}
	h = (size_t)(((uintptr_t)dc >> 4) * 0x9e3779b97f4a7c15ull) & m->mask;
	while (m->node[h] && m->node[h] != dc)
		h = (h + 1) & m->mask;
	if (m->node[h])
		return m->size[h];
	left = tree_size(m, dc->u.s_binary.left, depth + 1);
	n = 1 + left + tree_size(m, dc->u.s_binary.right, depth + 1);
	if (dc->type == DEMANGLE_COMPONENT_PACK_EXPANSION && left > FG_DEMANGLE_MAX_NODES)
		m->too_large = true;
	m->node[h] = dc;
	m->size[h] = n < over ? n : over;
	return m->size[h];
}

/* Whether libiberty can print the tree without a walk of more than FG_DEMANGLE_MAX_NODES. */
static bool tree_small(const struct demangle_component *dc, size_t len)
{
	struct tree_memo m = {0};
	size_t cap = 64;

	/* a node is made from a byte or more of the name: the memo at most half full */
	while (cap < 4 * len)
		cap *= 2;
	m.node = calloc(cap, sizeof(*m.node));
	m.size = malloc(cap * sizeof(*m.size));
	m.mask = cap - 1;
	if (m.node && m.size)
		tree_size(&m, dc, 0);
	else
		m.too_large = true;
	free(m.node);
	free(m.size);
	return !m.too_large;
}

/* The mangled name cut to fit, when its tree is too large to print. */
static void mangled_cut(struct out *o, const char *name)
{
	o->len = strnlen(name, sizeof(o->buf) - 1);
	memcpy(o->buf, name, o->len);
	o->cut = true;
}

/*
 * Whether a Rust v0 name binds an absurd number of lifetimes.  A binder
 * ("G" and a base-62 count, after the "F" of a function type or the "D" of
 * a trait object) makes libiberty loop once per lifetime; where it prints
 * nothing (a trait impl's path, which it skips) the loop calls nothing of
 * ours, so no bound on the output stops it: "_RXYFGFFFB3_" (12 bytes) ran
 * for minutes.  A real binder binds a few lifetimes: three base-62 digits
 * or more (3,844 and up) is taken for such a name, whose tree is then too
 * large to print.  (An identifier with "FG" or "DG" and three letters or
 * digits before an underscore is taken for one too, and left mangled.)
 */
static bool rust_binder_large(const char *name)
{
	for (const char *p = name + 2; (p = strchr(p, 'G')) != NULL; p++) {
		size_t n = 0;

		if (p[-1] != 'F' && p[-1] != 'D')
			continue;
		while (isalnum((unsigned char)p[1 + n]))
			n++;
		if (n >= 3 && p[1 + n] == '_')
			return true;
	}
	return false;
}

/* One demangler: 1 when it took the name (o holds it, maybe cut), 0 when not. */
static int run(struct out *o, const char *name, int opts, bool rust)
{
	struct demangle_component *volatile tree = NULL;
	void *volatile mem = NULL;
	void *m = NULL;
	int ok = 0;

	o->len = 0;
	o->calls = 0;
	o->cut = false;
	o->rust = rust;
	if (rust && name[1] == 'R' && rust_binder_large(name)) {
		mangled_cut(o, name);
		return 1;
	}
	if (!rust) {
		tree = cplus_demangle_v3_components(name, opts, &m);
		mem = m;
		if (!tree)
			return 0;
		if (!tree_small(tree, strlen(name))) {
			free(mem);
			mangled_cut(o, name);
			return 1;
		}
	}
	if (setjmp(o->stop) == 0)
		ok = rust ? rust_demangle_callback(name, opts, gather, o)
			  : cplus_demangle_print_callback(opts, tree, gather, o);
	free(mem);
	return ok || o->cut;
}

static char *demangle(const char *name, int opts)
{
	struct out *o;
	char *r = NULL;

	/* only names that claim to be mangled: "_Z..." (C++, legacy Rust), "_R..." (Rust v0) */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	if (strnlen(name, FG_DEMANGLE_MAX_MANGLED + 1) > FG_DEMANGLE_MAX_MANGLED)
		return NULL;
	o = malloc(sizeof(*o));
	if (!o)
		return NULL;
	/* as cplus_demangle(DMGL_AUTO) does: Rust first (legacy Rust looks like C++), then C++ */
	if (run(o, name, opts, true) || run(o, name, opts, false)) {
		if (o->cut)
			cut(o);
		o->buf[o->len] = '\0';
		r = strdup(o->buf);
	}
	free(o);
	return r;
}

char *fg_demangle(const char *name)
{
	return demangle(name, DMGL_AUTO);
}

char *fg_demangle_params(const char *name)
{
	return demangle(name, DMGL_AUTO | DMGL_PARAMS | DMGL_ANSI);
}

uint64_t fg_demangle_cut_count(void)
{
	return __atomic_load_n(&names_cut, __ATOMIC_RELAXED);
}
