/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Names that other users chose (process names, paths, symbols) written into
 * line-based text (perf-script output, messages on a terminal) so that they
 * can never break a line, forge a field or drive a terminal:
 *
 *  - control characters (C0: 0x00-0x1f, newline, tab and ESC among them;
 *    DEL 0x7f; the C1 controls U+0080-U+009F) become \xHH, one per byte;
 *  - bytes that are not valid UTF-8 (a stray byte >= 0x80, an overlong or
 *    cut-short sequence, a surrogate) become \xHH, one per byte;
 *  - a backslash becomes \\, so that the text reads back unambiguously;
 *  - valid UTF-8 and every other printable byte stays as it is.
 *
 * With FG_ESC_COMM, a space followed by a digit becomes \x20 too: in a
 * perf-script sample header "comm PID/TID ...", a reader takes the first
 * number after the comm's first word for the PID, so no word of a comm but
 * the first may start with a digit.
 */
#ifndef FG_ESCAPE_H
#define FG_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "fg/buf.h"

#define FG_ESC_COMM (1u << 0)

/* True when `s` (len bytes) would be written as it is. */
bool fg_escape_clean(const char *s, size_t len, unsigned flags);
/* Append `s` (len bytes), escaped, to b. */
void fg_buf_add_escaped(struct fg_buf *b, const char *s, size_t len, unsigned flags);
/*
 * Escape the C string `s` into buf (size bytes, at least 4), cut short with
 * "..." when it does not fit.  Returns buf, for messages.
 */
const char *fg_escape(const char *s, char *buf, size_t size);

#endif
