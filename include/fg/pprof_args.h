/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-pprof's command line: each option's value checked as getopt_long()
 * hands it out, then the options together.  The tool keeps the option
 * table, the usage text and what touches the system (the directory of
 * --every, a terminal on standard output).  A refusal is -EINVAL with the
 * reason in `why` ("invalid frequency '0'"), which the tool prints before
 * its usage, exit status 2.
 *
 *	struct fg_pprof_args a = FG_PPROF_ARGS_INIT;
 *	while ((c = getopt_long(argc, argv, FG_PPROF_SHORTOPTS, longopts, NULL)) != -1)
 *		if (fg_pprof_arg(&a, c, optarg, why, sizeof(why)) < 0) usage_error(why);
 *	if (fg_pprof_args_check(&a, why, sizeof(why)) < 0) usage_error(why);
 *	r = fg_pprof_reader_new(&a.reader, ...);
 */
#ifndef FG_PPROF_ARGS_H
#define FG_PPROF_ARGS_H

#include <stdbool.h>
#include <stddef.h>

#include "fg/fold.h"
#include "fg/pprof_read.h"

struct fg_pprof_args {
	/* -F, --every, and from `fold`: --input, --event-filter */
	struct fg_pprof_reader_opts reader;
	struct fg_fold_opts fold; /* the options shared with fg-fold (fg/foldopts.h) */
	const char *output;	  /* -o: the file, or with --every the directory */
	bool verbose;		  /* -v */
	bool windows;		  /* --every: a profile a window of time */
};

#define FG_PPROF_ARGS_INIT                                                                         \
	{                                                                                          \
		.reader = {.input = FG_FOLD_AUTO}, .fold = {.input = FG_FOLD_AUTO }                \
	}

#define FG_PPROF_SHORTOPTS "F:ho:vV"

/*
 * Option `c` with its argument (getopt_long's optarg), into *a: those of
 * FG_PPROF_SHORTOPTS and the FG_FOLD_OPT_* of fg/foldopts.h.  0, or -EINVAL
 * with the reason in why; -ENOENT for a `c` this module does not take (-h,
 * -V and getopt's '?' are the tool's).
 */
int fg_pprof_arg(struct fg_pprof_args *a, int c, const char *arg, char *why, size_t len);
/* The options together, once all are in: --every needs -o.  0, or -EINVAL with the reason in why.
 */
int fg_pprof_args_check(struct fg_pprof_args *a, char *why, size_t len);

#endif
