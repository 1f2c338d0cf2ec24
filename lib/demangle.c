// SPDX-License-Identifier: BSD-2-Clause
#include <libiberty/demangle.h>
#include <setjmp.h>
#include <stdbool.h>
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
	while (n > 0 && ((unsigned char)o->buf[n] & 0xc0) == 0x80)
		n--;
	memcpy(o->buf + n, FG_DEMANGLE_CUT_MARK, sizeof(FG_DEMANGLE_CUT_MARK));
	o->len = n + sizeof(FG_DEMANGLE_CUT_MARK) - 1;
	__atomic_fetch_add(&names_cut, 1, __ATOMIC_RELAXED);
}

/* One demangler: 1 when it took the name (o holds it, maybe cut), 0 when not. */
static int run(struct out *o, const char *name, int opts, bool rust)
{
	int ok;

	o->len = 0;
	o->calls = 0;
	o->cut = false;
	o->rust = rust;
	if (setjmp(o->stop) != 0)
		return 1;
	ok = rust ? rust_demangle_callback(name, opts, gather, o)
		  : cplus_demangle_v3_callback(name, opts, gather, o);
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
