/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Demangling of C++ (Itanium ABI) and Rust (legacy and v0) symbol names with
 * libiberty, the demangler of binutils and gdb.  Names are shown as perf
 * shows them by default: without the function's parameter list, with
 * template arguments, and Rust's legacy hash suffix dropped.
 */
#ifndef FG_DEMANGLE_H
#define FG_DEMANGLE_H

/* A new string with the demangled name, or NULL when `name` is not mangled. */
char *fg_demangle(const char *name);
/*
 * The same with the parameter list (and a template function's return type),
 * as `perf script -v` and `addr2line -C` show it: "int ns::f<int>(int)".
 */
char *fg_demangle_params(const char *name);

#endif
