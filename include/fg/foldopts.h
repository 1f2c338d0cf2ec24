/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The command-line options that the tools reading through fg_fold share
 * (fg-fold, fg-pprof, fg-top), parsed in one place, so that each means the
 * same in all of them and a bad argument is named the same way:
 *
 *	static const struct option longopts[] = {
 *	    {"event-filter", required_argument, NULL, FG_FOLD_OPT_EVENT_FILTER}, ...};
 *	while ((c = getopt_long(argc, argv, "...", longopts, NULL)) != -1)
 *		switch (c) {
 *		...	(the tool's own options)
 *		default:
 *			if (fg_fold_opt(c, optarg, &fold_opts, &every_ns, &why) != 0)
 *				usage_error(why, optarg);	(why NULL: not an option)
 *		}
 */
#ifndef FG_FOLDOPTS_H
#define FG_FOLDOPTS_H

#include <stddef.h>
#include <stdint.h>

#include "fg/fold.h"

enum {
	FG_FOLD_OPT_EVENT_FILTER = 0x1000, /* --event-filter EVENT: fold only EVENT */
	FG_FOLD_OPT_EVERY,		   /* --every SECONDS: a profile a window of time */
	FG_FOLD_OPT_INPUT,		   /* --input perf|folded|bpftrace */
	FG_FOLD_OPT_PID,		   /* --pid: the root frame comm-PID */
	FG_FOLD_OPT_SAMPLES,		   /* --samples: count samples, not their periods */
	FG_FOLD_OPT_TID,		   /* --tid: the root frame comm-PID/TID */
};

/*
 * Apply option `c` and its argument to `o` (--every to *every_ns, in
 * nanoseconds; every_ns NULL: the tool has no --every).  0; -EINVAL for a bad
 * argument, *why then a message with one "%s" for it; -ENOENT when `c` is
 * none of these options (*why NULL).
 */
int fg_fold_opt(int c, const char *arg, struct fg_fold_opts *o, uint64_t *every_ns,
		const char **why);
/*
 * The same, a refusal's reason formatted with its argument into why (len
 * bytes), as the *_args modules give it: "invalid event name ''".
 */
int fg_fold_opt_why(int c, const char *arg, struct fg_fold_opts *o, uint64_t *every_ns, char *why,
		    size_t len);

#endif
