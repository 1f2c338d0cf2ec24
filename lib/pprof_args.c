// SPDX-License-Identifier: BSD-2-Clause
/* fg-pprof's command line, checked.  See include/fg/pprof_args.h. */
#include <errno.h>

#include "fg/foldopts.h"
#include "fg/pprof_args.h"
#include "fg/util.h"

int fg_pprof_arg(struct fg_pprof_args *a, int c, const char *arg, char *why, size_t len)
{
	switch (c) {
	case 'F':
		if (fg_parse_double(arg, 1e-3, 1e9, &a->reader.freq) != 0 || a->reader.freq <= 0)
			return fg_refuse(why, len, "invalid frequency '%s'", arg);
		return 0;
	case 'o':
		a->output = arg;
		return 0;
	case 'v':
		a->verbose = true;
		return 0;
	default:
		return fg_fold_opt_why(c, arg, &a->fold, &a->reader.every_ns, why, len);
	}
}

int fg_pprof_args_check(struct fg_pprof_args *a, char *why, size_t len)
{
	a->reader.input = a->fold.input;
	a->reader.event_filter = a->fold.event_filter;
	a->windows = a->reader.every_ns > 0;
	if (a->windows && !a->output)
		return fg_refuse(why, len, "--every needs -o DIR, the directory of the windows");
	return 0;
}
