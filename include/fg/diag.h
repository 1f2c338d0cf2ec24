/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Diagnostics, exit statuses and checked allocation shared by every fg tool.
 *
 * Messages follow one format: "PROGRAM: what failed 'subject': why", lowercase,
 * no final period.  The tools speak through these functions; the rest of lib/
 * returns 0 or -errno and leaves the talking to its caller.  The one exception
 * is running out of memory, which the fg_x* allocators report and exit on, as
 * git's xmalloc does: no tool has anything useful to do after that.
 */
#ifndef FG_DIAG_H
#define FG_DIAG_H

#include <stddef.h>
#include <stdnoreturn.h>

#define FG_VERSION "0.1.0"

enum {
	FG_EXIT_OK = 0,	   /* success */
	FG_EXIT_FAIL = 1,  /* runtime failure, including a failed write */
	FG_EXIT_USAGE = 2, /* bad command line */
};

#define FG_PRINTF(f, a) __attribute__((format(printf, f, a)))

/* The name diagnostics start with; defaults to program_invocation_short_name. */
void fg_set_progname(const char *name);
const char *fg_progname(void);

/* "prog: MESSAGE: strerror(errno)" */
void fg_warn(const char *fmt, ...) FG_PRINTF(1, 2);
/* "prog: MESSAGE" */
void fg_warnx(const char *fmt, ...) FG_PRINTF(1, 2);
/* "prog: MESSAGE: strerror(err)" for an explicit error number (err > 0) */
void fg_warne(int err, const char *fmt, ...) FG_PRINTF(2, 3);
noreturn void fg_die(const char *fmt, ...) FG_PRINTF(1, 2);
noreturn void fg_diex(const char *fmt, ...) FG_PRINTF(1, 2);
/*
 * A bad command line: "prog: MESSAGE" (`fmt` formatted with `arg`; nothing
 * when fmt is NULL), then the tool's usage text, on standard error; exits
 * with FG_EXIT_USAGE.
 */
noreturn void fg_usage_error(const char *usage, const char *fmt, const char *arg);
/*
 * What an fg_*_arg or fg_*_args_check function returned for the command
 * line: 0 returns; -ENOENT (an option getopt has already complained of) is
 * the usage alone, any other error its reason `why` then the usage, as
 * fg_usage_error.
 */
void fg_usage_check(int err, const char *usage, const char *why);
/*
 * The tools' log callback for the library's messages (an fg_log_fn,
 * fg/log.h): each printed as fg_warnx prints it.  `ctx` is unused.
 */
void fg_log_warnx(void *ctx, const char *msg);
/*
 * The summary's line for the names lib/demangle cut at FG_DEMANGLE_MAX bytes
 * in this process: "prog: N demangled names cut at 4096 bytes (ending in
 * '[...]')"; nothing when there were none.
 */
void fg_warn_names_cut(void);

/*
 * Flush and close standard output.  On failure prints
 * "prog: write error: REASON" and returns FG_EXIT_FAIL, else FG_EXIT_OK.
 */
int fg_close_stdout(void);

/* "prog VERSION" on standard output. */
void fg_print_version(void);
/*
 * -h and -V, as every tool takes them, from getopt_long's `c`: the tool's
 * usage text or its version on standard output, then exit (0, or 1 for a
 * write error).  Any other option returns.
 */
void fg_help_or_version(int c, const char *usage);

void *fg_xmalloc(size_t n);
void *fg_xcalloc(size_t n, size_t size);
void *fg_xrealloc(void *p, size_t n);
/* realloc of an array, checking n * size for overflow */
void *fg_xreallocarray(void *p, size_t n, size_t size);
char *fg_xstrdup(const char *s);
char *fg_xstrndup(const char *s, size_t n);

/*
 * Grow an array so that it holds at least `need` elements (git's ALLOC_GROW):
 *	FG_ALLOC_GROW(v, n + 1, alloc); v[n++] = x;
 */
#define FG_ALLOC_GROW(p, need, alloc)                                                              \
	do {                                                                                       \
		if ((size_t)(need) > (alloc)) {                                                    \
			size_t fg_ag_new = (alloc) ? (alloc)*2 : 16;                               \
			if (fg_ag_new < (size_t)(need))                                            \
				fg_ag_new = (need);                                                \
			(p) = fg_xreallocarray((p), fg_ag_new, sizeof(*(p)));                      \
			(alloc) = fg_ag_new;                                                       \
		}                                                                                  \
	} while (0)

#endif
