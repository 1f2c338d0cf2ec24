// SPDX-License-Identifier: BSD-2-Clause
/* Messages of the text readers: formatted, and bad lines named with their file and line. */
#include <stdarg.h>

#include "fg/badline.h"
#include "fg/buf.h"

#define MAX_LOGGED 10

void fg_logf(fg_log_fn log, void *ctx, const char *fmt, ...)
{
	struct fg_buf b = FG_BUF_INIT;
	va_list ap;

	if (!log)
		return;
	va_start(ap, fmt);
	fg_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	log(ctx, b.data);
	fg_buf_release(&b);
}

void fg_badline(struct fg_badlines *b, const char *name, uint64_t lineno, const char *what,
		const char *line, size_t len)
{
	struct fg_buf x = FG_BUF_INIT;
	size_t n = len > 80 ? 80 : len;

	b->count++;
	if (b->count == MAX_LOGGED + 1)
		fg_logf(b->log, b->ctx, "%s:%llu: more bad lines; not showing them", name,
			(unsigned long long)lineno);
	if (b->count > MAX_LOGGED || !b->log)
		return;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)line[i];

		if (c == '\t')
			fg_buf_addstr(&x, "\\t");
		else if (c < 0x20 || c == 0x7f)
			fg_buf_addf(&x, "\\x%02x", c);
		else
			fg_buf_addch(&x, (char)c);
	}
	fg_logf(b->log, b->ctx, "%s:%llu: %s skipped: '%s%s'", name, (unsigned long long)lineno,
		what, x.data ? x.data : "", n < len ? "..." : "");
	fg_buf_release(&x);
}
