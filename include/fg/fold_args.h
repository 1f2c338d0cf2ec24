/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-fold's command line: each option's value checked as getopt_long()
 * hands it out, then the options together, into the fold engine's options
 * (struct fg_fold_opts, fg/fold.h; those fg-pprof and fg-top share come
 * through fg/foldopts.h).  The tool keeps the option table, the usage text
 * and what touches the system (the directory of --every, the output file).
 * A refusal is -EINVAL with the reason in `why` ("invalid pid 'x'"), which
 * the tool prints before its usage, exit status 2.
 *
 *	struct fg_fold_args a = FG_FOLD_ARGS_INIT;
 *	while ((c = getopt_long(argc, argv, FG_FOLD_SHORTOPTS, longopts, NULL)) != -1)
 *		if (fg_fold_arg(&a, c, optarg, why, sizeof(why)) < 0) usage_error(why);
 *	if (fg_fold_args_check(&a, why, sizeof(why)) < 0) usage_error(why);
 *	f = fg_fold_new(&a.fold, ...);
 *	...
 *	fg_fold_args_release(&a);
 */
#ifndef FG_FOLD_ARGS_H
#define FG_FOLD_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/fold.h"

struct fg_fold_args {
	struct fg_fold_opts fold; /* its lists point into those below once checked */
	uint64_t every_ns;	  /* --every; 0: one profile */
	const char *output;	  /* -o FILE; NULL: standard output (and with --every) */
	const char *dir;	  /* --every: -o's directory of windows */
	bool verbose;		  /* -v */
	/* --skip-after, --only-comm, --state, --only-pid: arrays this module owns */
	const char **skip_after, **comms, **states;
	size_t n_skip_after, a_skip_after, n_comms, a_comms, n_states, a_states;
	char **copies; /* the --state arguments, cut at their commas */
	size_t n_copies, a_copies;
	uint64_t *pids;
	size_t n_pids, a_pids;
};

#define FG_FOLD_ARGS_INIT                                                                          \
	{                                                                                          \
		.fold = {.input = FG_FOLD_AUTO }                                                   \
	}

#define FG_FOLD_SHORTOPTS "ho:vV"

/* fg-fold's own options without a short form (the shared ones are FG_FOLD_OPT_*) */
enum {
	FG_FOLD_ARG_KERNEL = 256,
	FG_FOLD_ARG_JIT,
	FG_FOLD_ARG_ALL,
	FG_FOLD_ARG_ADDRS,
	FG_FOLD_ARG_SRCLINE,
	FG_FOLD_ARG_INLINE,
	FG_FOLD_ARG_CONTEXT,
	FG_FOLD_ARG_SKIP_AFTER,
	FG_FOLD_ARG_ONLY_PID,
	FG_FOLD_ARG_ONLY_COMM,
	FG_FOLD_ARG_WALL,
	FG_FOLD_ARG_STATE,
};

/*
 * Option `c` with its argument (getopt_long's optarg), into *a: those of
 * FG_FOLD_SHORTOPTS, FG_FOLD_ARG_* and FG_FOLD_OPT_*.  0, or -EINVAL with
 * the reason in why; -ENOENT for a `c` this module does not take (-h, -V
 * and getopt's '?' are the tool's).
 */
int fg_fold_arg(struct fg_fold_args *a, int c, const char *arg, char *why, size_t len);
/*
 * The options together, once all are in: the lists into a->fold; --every
 * needs -o (then a->dir, and a->output NULL) and perf script text.  0, or
 * -EINVAL with the reason in why.
 */
int fg_fold_args_check(struct fg_fold_args *a, char *why, size_t len);
/* Free the lists. */
void fg_fold_args_release(struct fg_fold_args *a);

#endif
