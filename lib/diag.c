// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/demangle.h"
#include "fg/diag.h"

static const char *progname;

void fg_set_progname(const char *name)
{
	const char *slash = strrchr(name, '/');

	progname = slash ? slash + 1 : name;
}

const char *fg_progname(void)
{
	return progname ? progname : program_invocation_short_name;
}

static void vwarn_common(int err, const char *fmt, va_list ap)
{
	/* one fprintf per message, so that lines from two tools in a pipeline do not interleave */
	char msg[4096];
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);

	if (n < 0)
		msg[0] = '\0';
	if (err)
		fprintf(stderr, "%s: %s: %s\n", fg_progname(), msg, strerror(err));
	else
		fprintf(stderr, "%s: %s\n", fg_progname(), msg);
}

void fg_warn(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vwarn_common(err, fmt, ap);
	va_end(ap);
	errno = err;
}

void fg_warne(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_common(err < 0 ? -err : err, fmt, ap);
	va_end(ap);
}

void fg_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_common(0, fmt, ap);
	va_end(ap);
}

void fg_usage_error(const char *usage, const char *fmt, const char *arg)
{
	if (fmt)
		fg_warnx(fmt, arg);
	fputs(usage, stderr);
	exit(FG_EXIT_USAGE);
}

void fg_usage_check(int err, const char *usage, const char *why)
{
	if (err < 0)
		fg_usage_error(usage, err == -ENOENT ? NULL : "%s", why);
}

void fg_log_warnx(void *ctx, const char *msg)
{
	(void)ctx;
	fg_warnx("%s", msg);
}

void fg_warn_names_cut(void)
{
	uint64_t n = fg_demangle_cut_count();

	if (n)
		fg_warnx("%llu demangled name%s cut at %d bytes (ending in '%s')",
			 (unsigned long long)n, n == 1 ? "" : "s", FG_DEMANGLE_MAX,
			 FG_DEMANGLE_CUT_MARK);
}

void fg_die(const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	vwarn_common(err, fmt, ap);
	va_end(ap);
	exit(FG_EXIT_FAIL);
}

void fg_diex(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vwarn_common(0, fmt, ap);
	va_end(ap);
	exit(FG_EXIT_FAIL);
}

int fg_close_stdout(void)
{
	int failed = fflush(stdout) != 0 || ferror(stdout);
	int err = errno;

	if (fclose(stdout) != 0 && !failed) {
		failed = 1;
		err = errno;
	}
	if (failed) {
		/* ferror() without an errno from fflush: the error came from an earlier write */
		fg_warne(err ? err : EIO, "write error");
		return FG_EXIT_FAIL;
	}
	return FG_EXIT_OK;
}

void fg_print_version(void)
{
	printf("%s %s\n", fg_progname(), FG_VERSION);
}

void fg_help_or_version(int c, const char *usage)
{
	if (c == 'h')
		fputs(usage, stdout);
	else if (c == 'V')
		fg_print_version();
	else
		return;
	exit(fg_close_stdout());
}

static noreturn void oom(size_t n)
{
	fprintf(stderr, "%s: out of memory (allocating %zu bytes)\n", fg_progname(), n);
	exit(FG_EXIT_FAIL);
}

void *fg_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom(n);
	return p;
}

void *fg_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom(n * size);
	return p;
}

void *fg_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom(n);
	return q;
}

void *fg_xreallocarray(void *p, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		oom(SIZE_MAX);
	return fg_xrealloc(p, n * size);
}

char *fg_xstrdup(const char *s)
{
	return fg_xstrndup(s, strlen(s));
}

char *fg_xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = fg_xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}
