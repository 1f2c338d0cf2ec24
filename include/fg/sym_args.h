/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-sym's command line: each option's value checked as getopt_long()
 * hands it out, then the operands, into the symbolizer's options (struct
 * fg_sym_opts, fg/symbolize.h) and the tool's.  The tool keeps the option
 * table, the usage text and what touches the system (the input and its
 * owner, the output, the kallsyms cache, debuginfod and the environment
 * that names its servers).  A refusal is -EINVAL with the reason in `why`
 * ("invalid unwinder 'x' (table, libdw or none)"), which the tool prints
 * before its usage, exit status 2.
 *
 *	struct fg_sym_args a = FG_SYM_ARGS_INIT;
 *	while ((c = getopt_long(argc, argv, FG_SYM_SHORTOPTS, longopts, NULL)) != -1)
 *		if (fg_sym_arg(&a, c, optarg, why, sizeof(why)) < 0) usage_error(why);
 *	if (fg_sym_args_check(&a, argv + optind, why, sizeof(why)) < 0) usage_error(why);
 *	s = fg_symbolizer_new(&a.sym);
 */
#ifndef FG_SYM_ARGS_H
#define FG_SYM_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/debuginfod.h"
#include "fg/symbolize.h"

struct fg_sym_args {
	struct fg_sym_opts sym;	       /* the symbolizer's (its `warn` is the tool's to set) */
	const char *debuginfod_urls;   /* --debuginfod URLS; NULL: $DEBUGINFOD_URLS */
	bool no_debuginfod;	       /* --no-debuginfod */
	uint64_t debuginfod_budget_ms; /* --debuginfod-budget */
	const char *input;	       /* the operand; NULL: standard input */
	const char *output;	       /* -o FILE; NULL: standard output */
	bool force, header, no_cache, quiet; /* -f, --header, --no-cache, -q */
};

#define FG_SYM_ARGS_INIT                                                                           \
	{                                                                                          \
		.debuginfod_budget_ms = FG_DEBUGINFOD_BUDGET_MS                                    \
	}

#define FG_SYM_SHORTOPTS "fho:qvV"

/* the options without a short form */
enum {
	FG_SYM_ARG_DEBUGINFOD = 256,
	FG_SYM_ARG_DEBUGINFOD_BUDGET,
	FG_SYM_ARG_INLINE,
	FG_SYM_ARG_SRCLINE,
	FG_SYM_ARG_NO_DEMANGLE,
	FG_SYM_ARG_KALLSYMS,
	FG_SYM_ARG_NO_CACHE,
	FG_SYM_ARG_NO_DEBUGINFOD,
	FG_SYM_ARG_PROC_ROOT,
	FG_SYM_ARG_SYMFS,
	FG_SYM_ARG_HEADER,
	FG_SYM_ARG_UNWINDER,
	FG_SYM_ARG_PY_LINES,
};

/*
 * Option `c` with its argument (getopt_long's optarg), into *a: those of
 * FG_SYM_SHORTOPTS and FG_SYM_ARG_*.  0, or -EINVAL with the reason in
 * why; -ENOENT for a `c` this module does not take (-h, -V and getopt's '?'
 * are the tool's).
 */
int fg_sym_arg(struct fg_sym_args *a, int c, const char *arg, char *why, size_t len);
/*
 * The operands (NULL-ended), once the options are in: one input at most,
 * "-" for standard input.  0, or -EINVAL with the reason in why.
 */
int fg_sym_args_check(struct fg_sym_args *a, char *const *rest, char *why, size_t len);

#endif
