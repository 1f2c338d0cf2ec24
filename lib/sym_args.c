// SPDX-License-Identifier: BSD-2-Clause
/* fg-sym's command line, checked.  See include/fg/sym_args.h. */
#include <errno.h>
#include <string.h>

#include "fg/sym_args.h"
#include "fg/util.h"

/* the options that take a value to check */
static int checked_arg(struct fg_sym_args *a, int c, const char *arg, char *why, size_t len)
{
	double secs;
	int i;

	switch (c) {
	case FG_SYM_ARG_DEBUGINFOD:
		if (!*arg)
			return fg_refuse(why, len, "--debuginfod needs the URL of a server");
		a->debuginfod_urls = arg;
		a->no_debuginfod = false;
		return 0;
	case FG_SYM_ARG_DEBUGINFOD_BUDGET:
		if (fg_parse_double(arg, 0.001, 3600, &secs) < 0)
			return fg_refuse(
			    why, len, "invalid debuginfod budget '%s' (seconds, up to 3600)", arg);
		a->debuginfod_budget_ms = (uint64_t)(secs * 1000 + 0.5);
		return 0;
	case FG_SYM_ARG_UNWINDER:
		for (i = 0; i < FG_SYM_UNWIND_COUNT; i++)
			if (strcmp(arg, fg_sym_unwinder_names[i]) == 0)
				break;
		if (i == FG_SYM_UNWIND_COUNT)
			return fg_refuse(why, len, "invalid unwinder '%s' (table, libdw or none)",
					 arg);
		a->sym.unwinder = (enum fg_sym_unwinder)i;
		return 0;
	}
	return -ENOENT;
}

int fg_sym_arg(struct fg_sym_args *a, int c, const char *arg, char *why, size_t len)
{
	switch (c) {
	case 'f':
		a->force = true;
		return 0;
	case 'o':
		a->output = arg;
		return 0;
	case 'q':
		a->quiet = true;
		return 0;
	case 'v':
		a->sym.verbose = true;
		return 0;
	case FG_SYM_ARG_HEADER:
		a->header = true;
		return 0;
	case FG_SYM_ARG_INLINE:
		a->sym.inline_frames = true;
		return 0;
	case FG_SYM_ARG_KALLSYMS:
		a->sym.kallsyms = arg;
		return 0;
	case FG_SYM_ARG_NO_CACHE:
		a->no_cache = true;
		return 0;
	case FG_SYM_ARG_NO_DEBUGINFOD:
		a->no_debuginfod = true;
		a->debuginfod_urls = NULL;
		return 0;
	case FG_SYM_ARG_NO_DEMANGLE:
		a->sym.no_demangle = true;
		return 0;
	case FG_SYM_ARG_PROC_ROOT:
		a->sym.proc_root = arg;
		return 0;
	case FG_SYM_ARG_SRCLINE:
		a->sym.srcline = true;
		return 0;
	case FG_SYM_ARG_PY_LINES:
		a->sym.py_lines = true;
		return 0;
	case FG_SYM_ARG_SYMFS:
		a->sym.symfs = arg;
		return 0;
	}
	return checked_arg(a, c, arg, why, len);
}

int fg_sym_args_check(struct fg_sym_args *a, char *const *rest, char *why, size_t len)
{
	if (rest[0] && rest[1])
		return fg_refuse(why, len, "too many operands");
	if (rest[0] && strcmp(rest[0], "-") != 0)
		a->input = rest[0];
	return 0;
}
