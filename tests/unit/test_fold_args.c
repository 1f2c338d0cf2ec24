// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for fg-fold's command line: each value checked, then the combination. */
#include <errno.h>
#include <string.h>

#include "fg/fold_args.h"
#include "fg/foldopts.h"
#include "unit.h"

/* one option, refused: the reason */
static const char *refused(int c, const char *arg)
{
	static char why[256];
	struct fg_fold_args a = FG_FOLD_ARGS_INIT;

	why[0] = '\0';
	if (fg_fold_arg(&a, c, arg, why, sizeof(why)) != -EINVAL)
		snprintf(why, sizeof(why), "(accepted)");
	fg_fold_args_release(&a);
	return why;
}

TEST(flags)
{
	struct fg_fold_args a = FG_FOLD_ARGS_INIT;
	char why[256];

	CHECK_INT(a.fold.input, FG_FOLD_AUTO);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_ARG_ALL, NULL, why, sizeof(why)), 0);
	CHECK(a.fold.annotate_kernel && a.fold.annotate_jit);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_ARG_CONTEXT, NULL, why, sizeof(why)), 0);
	CHECK(a.fold.inline_context && a.fold.inline_frames);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_ARG_ADDRS, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_ARG_SRCLINE, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_ARG_WALL, NULL, why, sizeof(why)), 0);
	CHECK(a.fold.include_addrs && a.fold.srcline && a.fold.wall);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_OPT_TID, NULL, why, sizeof(why)), 0);
	CHECK(a.fold.include_tid);
	CHECK_INT(fg_fold_arg(&a, 'o', "out.folded", why, sizeof(why)), 0);
	CHECK_INT(fg_fold_arg(&a, 'v', NULL, why, sizeof(why)), 0);
	CHECK(a.verbose && strcmp(a.output, "out.folded") == 0);
	CHECK_INT(fg_fold_arg(&a, 'h', NULL, why, sizeof(why)), -ENOENT);
	CHECK_INT(fg_fold_arg(&a, 'V', NULL, why, sizeof(why)), -ENOENT);
	CHECK_INT(fg_fold_arg(&a, '?', NULL, why, sizeof(why)), -ENOENT);
	CHECK_INT(fg_fold_args_check(&a, why, sizeof(why)), 0);
	CHECK_STR(a.output, "out.folded");
	CHECK(a.dir == NULL);
	fg_fold_args_release(&a);
}

/* the repeatable options gather into lists, which the check hands the fold */
TEST(lists)
{
	struct fg_fold_args a = FG_FOLD_ARGS_INIT;
	char why[256];

	CHECK_INT(fg_fold_arg(&a, FG_FOLD_ARG_ONLY_PID, "1,2", why, sizeof(why)), 0);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_ARG_ONLY_PID, "3", why, sizeof(why)), 0);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_ARG_ONLY_COMM, "bash", why, sizeof(why)), 0);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_ARG_SKIP_AFTER, "main", why, sizeof(why)), 0);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_ARG_STATE, "S,R+", why, sizeof(why)), 0);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_ARG_STATE, "D", why, sizeof(why)), 0);
	CHECK_INT(fg_fold_args_check(&a, why, sizeof(why)), 0);
	CHECK_INT(a.fold.n_only_pids, 3);
	CHECK_INT(a.fold.only_pids[2], 3);
	CHECK_INT(a.fold.n_only_comms, 1);
	CHECK_STR(a.fold.only_comms[0], "bash");
	CHECK_INT(a.fold.n_skip_after, 1);
	CHECK_STR(a.fold.skip_after[0], "main");
	CHECK_INT(a.fold.n_states, 3);
	CHECK_STR(a.fold.states[1], "R+");
	CHECK_STR(a.fold.states[2], "D");
	fg_fold_args_release(&a);
	CHECK(a.pids == NULL && a.n_states == 0);
}

TEST(bad_values_say_what)
{
	CHECK_STR(refused(FG_FOLD_ARG_ONLY_PID, "1,x"), "invalid pid 'x'");
	CHECK_STR(refused(FG_FOLD_ARG_ONLY_PID, "4294967296"), "invalid pid '4294967296'");
	CHECK_STR(refused(FG_FOLD_ARG_STATE, "S,Q"),
		  "invalid task state 'Q' (R, R+, S, D, T, t, X, Z, P or I)");
	CHECK_STR(refused(FG_FOLD_ARG_STATE, "SS"),
		  "invalid task state 'SS' (R, R+, S, D, T, t, X, Z, P or I)");
	CHECK_STR(refused(FG_FOLD_ARG_STATE, ","), "invalid task state list ','");
	CHECK_STR(refused(FG_FOLD_OPT_INPUT, "json"),
		  "unknown input format 'json' (perf, folded or bpftrace)");
	CHECK_STR(refused(FG_FOLD_OPT_EVERY, "0"),
		  "invalid window length '0' (seconds, at least 0.001)");
	CHECK_STR(refused(FG_FOLD_OPT_EVENT_FILTER, ""), "invalid event name ''");
}

/* --every: windows into -o's directory, from perf script text only */
TEST(every)
{
	struct fg_fold_args a = FG_FOLD_ARGS_INIT;
	char why[256];

	CHECK_INT(fg_fold_arg(&a, FG_FOLD_OPT_EVERY, "0.5", why, sizeof(why)), 0);
	CHECK_INT(a.every_ns, 500000000);
	CHECK_INT(fg_fold_args_check(&a, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--every needs -o DIR, the directory of the windows");
	CHECK_INT(fg_fold_arg(&a, 'o', "dir", why, sizeof(why)), 0);
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_OPT_INPUT, "folded", why, sizeof(why)), 0);
	CHECK_INT(fg_fold_args_check(&a, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--every reads perf script text, not folded input");
	CHECK_INT(fg_fold_arg(&a, FG_FOLD_OPT_INPUT, "perf", why, sizeof(why)), 0);
	CHECK_INT(fg_fold_args_check(&a, why, sizeof(why)), 0);
	CHECK_STR(a.dir, "dir");
	CHECK(a.output == NULL);
	CHECK_INT(a.fold.input, FG_FOLD_PERF);
	fg_fold_args_release(&a);
}

int main(void)
{
	RUN(flags);
	RUN(lists);
	RUN(bad_values_say_what);
	RUN(every);
	return unit_done();
}
