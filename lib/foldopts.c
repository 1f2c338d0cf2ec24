// SPDX-License-Identifier: BSD-2-Clause
/* The options the tools that read through fg_fold share.  See include/fg/foldopts.h. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>

#include "fg/foldopts.h"
#include "fg/util.h"

int fg_fold_opt(int c, const char *arg, struct fg_fold_opts *o, uint64_t *every_ns,
		const char **why)
{
	double secs;
	int in;

	*why = NULL;
	switch (c) {
	case FG_FOLD_OPT_EVENT_FILTER:
		if (!*arg) {
			*why = "invalid event name '%s'";
			return -EINVAL;
		}
		o->event_filter = arg;
		return 0;
	case FG_FOLD_OPT_EVERY:
		if (!every_ns)
			return -ENOENT;
		if (fg_parse_double(arg, 1e-3, 1e9, &secs) != 0) {
			*why = "invalid window length '%s' (seconds, at least 0.001)";
			return -EINVAL;
		}
		*every_ns = (uint64_t)llround(secs * 1e9);
		return 0;
	case FG_FOLD_OPT_INPUT:
		in = fg_fold_input_parse(arg);
		if (in <= 0) {
			*why = "unknown input format '%s' (perf, folded or bpftrace)";
			return -EINVAL;
		}
		o->input = (enum fg_fold_input)in;
		return 0;
	case FG_FOLD_OPT_PID:
		o->include_pid = true;
		return 0;
	case FG_FOLD_OPT_SAMPLES:
		o->count_samples = true;
		return 0;
	case FG_FOLD_OPT_TID:
		o->include_tid = true;
		return 0;
	default:
		return -ENOENT;
	}
}

int fg_fold_opt_why(int c, const char *arg, struct fg_fold_opts *o, uint64_t *every_ns, char *why,
		    size_t len)
{
	const char *fmt;
	int err = fg_fold_opt(c, arg, o, every_ns, &fmt);

	return err == -EINVAL ? fg_refuse(why, len, fmt, arg) : err;
}
