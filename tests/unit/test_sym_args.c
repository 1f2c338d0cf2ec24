// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for fg-sym's command line: each value checked, then the operands. */
#include <errno.h>
#include <string.h>

#include "fg/sym_args.h"
#include "unit.h"

/* one option, refused: the reason */
static const char *refused(int c, const char *arg)
{
	static char why[256];
	struct fg_sym_args a = FG_SYM_ARGS_INIT;

	why[0] = '\0';
	if (fg_sym_arg(&a, c, arg, why, sizeof(why)) != -EINVAL)
		snprintf(why, sizeof(why), "(accepted)");
	return why;
}

TEST(values)
{
	struct fg_sym_args a = FG_SYM_ARGS_INIT;
	char why[256];

	CHECK_INT(a.debuginfod_budget_ms, FG_DEBUGINFOD_BUDGET_MS);
	CHECK_INT(a.sym.unwinder, FG_SYM_UNWIND_TABLE);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_DEBUGINFOD_BUDGET, "0.25", why, sizeof(why)), 0);
	CHECK_INT(a.debuginfod_budget_ms, 250);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_UNWINDER, "libdw", why, sizeof(why)), 0);
	CHECK_INT(a.sym.unwinder, FG_SYM_UNWIND_LIBDW);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_UNWINDER, "none", why, sizeof(why)), 0);
	CHECK_INT(a.sym.unwinder, FG_SYM_UNWIND_NONE);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_KALLSYMS, "ks", why, sizeof(why)), 0);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_PROC_ROOT, "proc", why, sizeof(why)), 0);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_SYMFS, "root", why, sizeof(why)), 0);
	CHECK(strcmp(a.sym.kallsyms, "ks") == 0 && strcmp(a.sym.proc_root, "proc") == 0 &&
	      strcmp(a.sym.symfs, "root") == 0);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_INLINE, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_SRCLINE, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_NO_DEMANGLE, NULL, why, sizeof(why)), 0);
	CHECK(a.sym.inline_frames && a.sym.srcline && a.sym.no_demangle && !a.sym.py_lines);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_PY_LINES, NULL, why, sizeof(why)), 0);
	CHECK(a.sym.py_lines);
	CHECK_INT(fg_sym_arg(&a, 'f', NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sym_arg(&a, 'q', NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sym_arg(&a, 'v', NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_HEADER, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_NO_CACHE, NULL, why, sizeof(why)), 0);
	CHECK(a.force && a.quiet && a.sym.verbose && a.header && a.no_cache);
	CHECK_INT(fg_sym_arg(&a, 'o', "out.txt", why, sizeof(why)), 0);
	CHECK_STR(a.output, "out.txt");
	CHECK_INT(fg_sym_arg(&a, 'h', NULL, why, sizeof(why)), -ENOENT);
	CHECK_INT(fg_sym_arg(&a, 'V', NULL, why, sizeof(why)), -ENOENT);
	CHECK_INT(fg_sym_arg(&a, '?', NULL, why, sizeof(why)), -ENOENT);
}

/* --debuginfod and --no-debuginfod: the last one given counts */
TEST(debuginfod)
{
	struct fg_sym_args a = FG_SYM_ARGS_INIT;
	char why[256];

	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_DEBUGINFOD, "https://d", why, sizeof(why)), 0);
	CHECK(strcmp(a.debuginfod_urls, "https://d") == 0 && !a.no_debuginfod);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_NO_DEBUGINFOD, NULL, why, sizeof(why)), 0);
	CHECK(a.debuginfod_urls == NULL && a.no_debuginfod);
	CHECK_INT(fg_sym_arg(&a, FG_SYM_ARG_DEBUGINFOD, "https://e", why, sizeof(why)), 0);
	CHECK(strcmp(a.debuginfod_urls, "https://e") == 0 && !a.no_debuginfod);
}

TEST(bad_values_say_what)
{
	CHECK_STR(refused(FG_SYM_ARG_DEBUGINFOD, ""), "--debuginfod needs the URL of a server");
	CHECK_STR(refused(FG_SYM_ARG_DEBUGINFOD_BUDGET, "0"),
		  "invalid debuginfod budget '0' (seconds, up to 3600)");
	CHECK_STR(refused(FG_SYM_ARG_DEBUGINFOD_BUDGET, "3601"),
		  "invalid debuginfod budget '3601' (seconds, up to 3600)");
	CHECK_STR(refused(FG_SYM_ARG_UNWINDER, "fp"),
		  "invalid unwinder 'fp' (table, libdw or none)");
}

TEST(operands)
{
	struct fg_sym_args a = FG_SYM_ARGS_INIT;
	char why[256], *none[] = {NULL}, *dash[] = {"-", NULL}, *one[] = {"run.fgr", NULL},
		       *two[] = {"a", "b", NULL};

	CHECK_INT(fg_sym_args_check(&a, none, why, sizeof(why)), 0);
	CHECK(a.input == NULL);
	CHECK_INT(fg_sym_args_check(&a, dash, why, sizeof(why)), 0);
	CHECK(a.input == NULL);
	CHECK_INT(fg_sym_args_check(&a, one, why, sizeof(why)), 0);
	CHECK_STR(a.input, "run.fgr");
	CHECK_INT(fg_sym_args_check(&a, two, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "too many operands");
}

int main(void)
{
	RUN(values);
	RUN(debuginfod);
	RUN(bad_values_say_what);
	RUN(operands);
	return unit_done();
}
