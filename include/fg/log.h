/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How the library says something: it never prints; a module that has
 * something to report (a bad line skipped, a file it cannot read) hands the
 * message, already formatted and escaped, to a function of the tool's, with
 * the tool's context.  Every module that logs takes this one type.  The
 * message has no program name and no final newline.
 */
#ifndef FG_LOG_H
#define FG_LOG_H

typedef void (*fg_log_fn)(void *ctx, const char *msg);

#endif
