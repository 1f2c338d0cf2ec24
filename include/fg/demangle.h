/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Demangling of C++ (Itanium ABI) and Rust (legacy and v0) symbol names with
 * libiberty, the demangler of binutils and gdb.  Names are shown as perf
 * shows them by default: without the function's parameter list, with
 * template arguments, and Rust's legacy hash suffix dropped.
 *
 * Every name is bounded.  A few hundred bytes of mangled name can nest
 * templates by substitution into gigabytes of text, so the demangler is
 * stopped as soon as its output passes FG_DEMANGLE_MAX bytes (or it has
 * handed over FG_DEMANGLE_MAX_CALLS pieces, most of them empty): the name is
 * then its first bytes, cut at a character's start, and FG_DEMANGLE_CUT_MARK,
 * FG_DEMANGLE_MAX bytes in all.  Names cut are counted for the tools'
 * summaries (fg_demangle_cut_count).
 */
#ifndef FG_DEMANGLE_H
#define FG_DEMANGLE_H

#include <stdint.h>

/* The longest demangled name, its cut mark included; its NUL is not counted. */
#define FG_DEMANGLE_MAX 4096
/* What ends a name that was cut. */
#define FG_DEMANGLE_CUT_MARK "[...]"
/* Pieces of output the demangler may hand over for one name: its work, bounded. */
#define FG_DEMANGLE_MAX_CALLS (4 * FG_DEMANGLE_MAX)
/*
 * Nodes of a C++ name's tree, its shared parts counted each time they are
 * reached, that it may have to be demangled: libiberty walks parts of the
 * tree without printing.  A larger one gives the mangled name, cut as a
 * demangled one would be.
 */
#define FG_DEMANGLE_MAX_NODES (8 * FG_DEMANGLE_MAX)
/* Longer mangled names are not demangled (shown as they are). */
#define FG_DEMANGLE_MAX_MANGLED 16384

/* A new string with the demangled name, or NULL when `name` is not mangled. */
char *fg_demangle(const char *name);
/*
 * The same with the parameter list (and a template function's return type),
 * as `perf script -v` and `addr2line -C` show it: "int ns::f<int>(int)".
 */
char *fg_demangle_params(const char *name);

/* How many names this process has cut at FG_DEMANGLE_MAX bytes (all threads). */
uint64_t fg_demangle_cut_count(void);

#endif
