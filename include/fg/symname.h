/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Tidying function names for display, the way the FlameGraph collapsers do:
 * a C++ argument list cut off, and a Rust name that perf left half-demangled
 * decoded.  Pure functions on byte ranges: nothing is allocated or printed.
 */
#ifndef FG_SYMNAME_H
#define FG_SYMNAME_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Where the argument list of a function name starts: its first '(' outside
 * template brackets <...>, or `len` when there is none.  "(anonymous
 * namespace)" and Go's method receivers ("net/http.(*Client).Do") are parts
 * of the name, not argument lists; "operator<", "operator<<=" and
 * "operator->" hold no brackets.
 *
 *	fg_symname_args_start("ns::f<int>(char)", 16) == 11	("ns::f<int>")
 */
size_t fg_symname_args_start(const char *s, size_t len);

/*
 * Whether `s` is a legacy-mangled Rust name that the demangler left half done:
 * it ends with "::h" and 16 hexadecimal digits (the hash).
 */
bool fg_symname_is_rust_legacy(const char *s, size_t len);

/*
 * Decode such a name into `out` (room for `len` bytes; the result is never
 * longer) and return its length: the hash and the "::" before it dropped, a
 * leading "_$" made "$", ".." made "::", and the escapes $SP$ @, $BP$ *,
 * $RF$ &, $LT$ <, $GT$ >, $LP$ (, $RP$ ), $C$ , and $uXX$ (the character of
 * code XX, printable ASCII only) decoded.  An escape it does not know is kept
 * as it is, with the rest of the name.  For a name that is not
 * fg_symname_is_rust_legacy, `s` is copied unchanged.  `out` may be `s`.
 *
 *	gc::gc::GcBox$LT$T$GT$::new::_$u7b$$u7b$closure$u7d$$u7d$::ha2ed0674a1c3dc9f
 *	-> gc::gc::GcBox<T>::new::_{{closure}}
 */
size_t fg_symname_rust_tidy(const char *s, size_t len, char *out);

#endif
