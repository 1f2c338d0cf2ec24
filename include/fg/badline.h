/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Messages of the text readers (fg-pprof's, fg-diff's), through their log
 * callback: formatted messages, and bad lines counted and named with their
 * file and line, the first few with a printable excerpt:
 *
 *	in.txt:12: unrecognized line skipped: 'not\x01 a frame'
 */
#ifndef FG_BADLINE_H
#define FG_BADLINE_H

#include <stddef.h>
#include <stdint.h>

#include "fg/diag.h"
#include "fg/fold.h"

/* Format a message and hand it to `log` (nothing when log is NULL). */
void fg_logf(fg_log_fn log, void *ctx, const char *fmt, ...) FG_PRINTF(3, 4);

struct fg_badlines {
	fg_log_fn log;
	void *ctx;
	uint64_t count; /* bad lines so far */
};

/*
 * Count a bad line and report it ("NAME:LINENO: WHAT skipped: 'EXCERPT'"); after
 * the first ten, one message says that more are not shown.
 */
void fg_badline(struct fg_badlines *b, const char *name, uint64_t lineno, const char *what,
		const char *line, size_t len);

#endif
