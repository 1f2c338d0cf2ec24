// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for fg-pprof's command line: each value checked, then the combination. */
#include <errno.h>
#include <string.h>

#include "fg/foldopts.h"
#include "fg/pprof_args.h"
#include "unit.h"

/* one option, refused: the reason */
static const char *refused(int c, const char *arg)
{
	static char why[256];
	struct fg_pprof_args a = FG_PPROF_ARGS_INIT;

	why[0] = '\0';
	if (fg_pprof_arg(&a, c, arg, why, sizeof(why)) != -EINVAL)
		snprintf(why, sizeof(why), "(accepted)");
	return why;
}

TEST(values)
{
	struct fg_pprof_args a = FG_PPROF_ARGS_INIT;
	char why[256];

	CHECK_INT(a.reader.input, FG_FOLD_AUTO);
	CHECK_INT(fg_pprof_arg(&a, 'F', "99", why, sizeof(why)), 0);
	CHECK(a.reader.freq == 99);
	CHECK_INT(fg_pprof_arg(&a, 'F', "0.5", why, sizeof(why)), 0);
	CHECK(a.reader.freq == 0.5);
	CHECK_INT(fg_pprof_arg(&a, 'o', "out.pb.gz", why, sizeof(why)), 0);
	CHECK_STR(a.output, "out.pb.gz");
	CHECK_INT(fg_pprof_arg(&a, 'v', NULL, why, sizeof(why)), 0);
	CHECK(a.verbose);
	CHECK_INT(fg_pprof_arg(&a, FG_FOLD_OPT_INPUT, "folded", why, sizeof(why)), 0);
	CHECK_INT(fg_pprof_arg(&a, FG_FOLD_OPT_EVENT_FILTER, "cycles", why, sizeof(why)), 0);
	CHECK_INT(fg_pprof_arg(&a, FG_FOLD_OPT_EVERY, "2", why, sizeof(why)), 0);
	CHECK_INT(a.reader.every_ns, 2000000000);
	CHECK_INT(fg_pprof_args_check(&a, why, sizeof(why)), 0);
	/* the shared options reach the reader */
	CHECK_INT(a.reader.input, FG_FOLD_FOLDED);
	CHECK_STR(a.reader.event_filter, "cycles");
	CHECK(a.windows);
	CHECK_INT(fg_pprof_arg(&a, 'h', NULL, why, sizeof(why)), -ENOENT);
	CHECK_INT(fg_pprof_arg(&a, 'V', NULL, why, sizeof(why)), -ENOENT);
	CHECK_INT(fg_pprof_arg(&a, '?', NULL, why, sizeof(why)), -ENOENT);
}

TEST(bad_values_say_what)
{
	CHECK_STR(refused('F', "0"), "invalid frequency '0'");
	CHECK_STR(refused('F', "x"), "invalid frequency 'x'");
	CHECK_STR(refused('F', "2e9"), "invalid frequency '2e9'");
	CHECK_STR(refused(FG_FOLD_OPT_INPUT, "json"),
		  "unknown input format 'json' (perf, folded or bpftrace)");
	CHECK_STR(refused(FG_FOLD_OPT_EVENT_FILTER, ""), "invalid event name ''");
	CHECK_STR(refused(FG_FOLD_OPT_EVERY, "0"),
		  "invalid window length '0' (seconds, at least 0.001)");
}

TEST(combinations)
{
	struct fg_pprof_args a = FG_PPROF_ARGS_INIT;
	char why[256];

	CHECK_INT(fg_pprof_args_check(&a, why, sizeof(why)), 0);
	CHECK(!a.windows && a.output == NULL);
	CHECK_INT(fg_pprof_arg(&a, FG_FOLD_OPT_EVERY, "1", why, sizeof(why)), 0);
	CHECK_INT(fg_pprof_args_check(&a, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--every needs -o DIR, the directory of the windows");
	CHECK_INT(fg_pprof_arg(&a, 'o', "dir", why, sizeof(why)), 0);
	CHECK_INT(fg_pprof_args_check(&a, why, sizeof(why)), 0);
}

int main(void)
{
	RUN(values);
	RUN(bad_values_say_what);
	RUN(combinations);
	return unit_done();
}
