// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for fg-sample's options: each value checked, then the combination. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fg/sample_opts.h"
#include "unit.h"

/* one option, refused: the reason */
static const char *refused(int c, const char *arg)
{
	static char why[256];
	struct fg_sample_opts o = FG_SAMPLE_OPTS_INIT;

	why[0] = '\0';
	if (fg_sample_opt(&o, c, arg, why, sizeof(why)) != -EINVAL)
		snprintf(why, sizeof(why), "(accepted)");
	fg_sample_opts_release(&o);
	return why;
}

TEST(values)
{
	struct fg_sample_opts o = FG_SAMPLE_OPTS_INIT;
	char why[256];

	CHECK_INT(o.freq, 99);
	CHECK_INT(o.depth, MAX_STACK_DEPTH);
	CHECK_INT(fg_sample_opt(&o, 'F', "999", why, sizeof(why)), 0);
	CHECK_INT(o.freq, 999);
	CHECK_INT(fg_sample_opt(&o, 'C', "0,2-3", why, sizeof(why)), 0);
	CHECK(o.ncpus == 3 && o.cpus[2] == 3);
	CHECK_INT(fg_sample_opt(&o, 'p', "42", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opt(&o, 'p', "43", why, sizeof(why)), 0);
	CHECK(o.npids == 2 && o.pids[1] == 43);
	CHECK_INT(fg_sample_opt(&o, 'm', "64", why, sizeof(why)), 0);
	CHECK_INT(o.pages, 64);
	CHECK_INT(fg_sample_opt(&o, 'd', "0.5", why, sizeof(why)), 0);
	CHECK(o.duration == 0.5);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CALL_GRAPH, "dwarf", why, sizeof(why)), 0);
	CHECK_INT(o.snapshot, FG_USTACK_SNAPSHOT_DEFAULT);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CALL_GRAPH, "dwarf,100", why, sizeof(why)), 0);
	CHECK_INT(o.snapshot, 104); /* rounded up to 8, as perf does */
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CALL_GRAPH, "fp", why, sizeof(why)), 0);
	CHECK_INT(o.snapshot, 0);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_MAX_DEPTH, "5", why, sizeof(why)), 0);
	CHECK_INT(o.depth, 5);
	CHECK_INT(fg_sample_opt(&o, 'h', NULL, why, sizeof(why)), -ENOENT);
	CHECK_INT(fg_sample_opt(&o, '?', NULL, why, sizeof(why)), -ENOENT);
	fg_sample_opts_release(&o);
	CHECK(o.pids == NULL && o.npids == 0);
}

TEST(bad_values_say_what)
{
	CHECK_STR(refused('F', "0"), "invalid frequency '0'");
	CHECK_STR(refused('F', "100001"), "invalid frequency '100001'");
	CHECK_STR(refused('d', "0"), "invalid duration '0'");
	CHECK_STR(refused('p', "-1"), "invalid pid '-1'");
	CHECK_STR(refused('t', "x"), "invalid tid 'x'");
	CHECK_STR(refused('C', "4096"), "invalid CPU list '4096'");
	CHECK_STR(refused('m', "3"), "invalid buffer size '3' (pages, a power of two)");
	CHECK_STR(refused(FG_SAMPLE_OPT_MAX_DEPTH, "128"), "invalid stack depth '128' (1 to 127)");
	CHECK_STR(refused(FG_SAMPLE_OPT_CALL_GRAPH, "lbr"),
		  "invalid --call-graph 'lbr' (fp, or dwarf[,bytes])");
	CHECK_STR(refused(FG_SAMPLE_OPT_CALL_GRAPH, "dwarfs"),
		  "invalid --call-graph 'dwarfs' (fp, or dwarf[,bytes])");
	CHECK_STR(refused(FG_SAMPLE_OPT_CALL_GRAPH, "dwarf,65529"),
		  "invalid stack dump size '65529' (1 to 65528 bytes)");
}

TEST(combinations)
{
	struct fg_sample_opts o = FG_SAMPLE_OPTS_INIT;
	char why[256], *cmd[] = {"true", NULL}, *none[] = {NULL};

	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(o.command == NULL);
	CHECK_INT(fg_sample_opts_check(&o, cmd, why, sizeof(why)), 0);
	CHECK(o.command == cmd);
	fg_sample_opt(&o, 'p', "1", why, sizeof(why));
	CHECK_INT(fg_sample_opts_check(&o, cmd, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "a command and -p/-t exclude each other");
	fg_sample_opts_release(&o);
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	o.user_only = o.kernel_only = true;
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--user-only and --kernel-only exclude each other");
	o.user_only = false;
	o.snapshot = 8192;
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--call-graph dwarf and --kernel-only exclude each other");
}

/* -e, -c, --list-events: the events parsed; -F for the clocks, -c for the others */
TEST(events)
{
	struct fg_sample_opts o = FG_SAMPLE_OPTS_INIT;
	char why[256], *none[] = {NULL}, *pattern[] = {"sched:*", NULL}, *two[] = {"a", "b", NULL};

	CHECK_INT(fg_sample_opt(&o, 'e', "page-faults", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opt(&o, 'e', "syscalls:sys_enter_write", why, sizeof(why)), 0);
	CHECK(o.nevents == 2 && o.events[0].kind == FG_EVENT_SOFTWARE &&
	      o.events[1].kind == FG_EVENT_TRACEPOINT);
	CHECK_INT(fg_sample_opts_period(&o), 1);
	CHECK_INT(fg_sample_opt(&o, 'c', "10", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_period(&o), 10);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	/* -F without a clock */
	CHECK_INT(fg_sample_opt(&o, 'F', "999", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "-F applies to cpu-clock and task-clock: for the other events, -c n takes "
		       "a sample every n events");
	CHECK_INT(fg_sample_opt(&o, 'e', "cpu-clock", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	fg_sample_opts_release(&o);
	CHECK(o.events == NULL && o.nevents == 0);

	/* -c with the default clock alone */
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	CHECK_INT(fg_sample_opt(&o, 'c', "2", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why,
		  "-c applies to events other than cpu-clock and task-clock, which -F samples");
	/* a uprobe has no kernel stack */
	CHECK_INT(fg_sample_opt(&o, 'e', "uprobe:/bin/true:main", why, sizeof(why)), 0);
	o.kernel_only = true;
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--kernel-only and uprobes exclude each other: a uprobe has only a user "
		       "stack");
	fg_sample_opts_release(&o);

	/* --list-events takes its pattern from the operands, one at most */
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_LIST_EVENTS, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, pattern, why, sizeof(why)), 0);
	CHECK_STR(o.list_pattern, "sched:*");
	CHECK(o.command == NULL);
	CHECK_INT(fg_sample_opts_check(&o, two, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--list-events takes one pattern at most");
	fg_sample_opts_release(&o);

	/* a list, as perf takes it; a probe whole, its path may hold a comma */
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	CHECK_INT(fg_sample_opt(&o, 'e', "page-faults,cs,sched:sched_switch", why, sizeof(why)), 0);
	CHECK(o.nevents == 3 && o.events[1].kind == FG_EVENT_SOFTWARE &&
	      o.events[2].kind == FG_EVENT_TRACEPOINT);
	CHECK_INT(fg_sample_opt(&o, 'e', "uprobe:/opt/a,b/prog:main", why, sizeof(why)), 0);
	CHECK(o.nevents == 4 && o.events[3].kind == FG_EVENT_UPROBE);
	fg_sample_opts_release(&o);
	CHECK_STR(refused('e', "page-faults,,cs"),
		  "invalid event list 'page-faults,,cs': an empty event");
	CHECK_STR(refused('e', "cs,"), "invalid event list 'cs,': an empty event");
	CHECK_STR(refused('e', "cs,page-fault"),
		  "unknown event 'page-fault' (fg-sample --list-events lists them)");
	CHECK_STR(refused('e', "page-fault"),
		  "unknown event 'page-fault' (fg-sample --list-events lists them)");
	CHECK_STR(refused('c', "0"), "invalid count '0' (a sample every N events)");
	CHECK_STR(refused('c', "4294967296"),
		  "invalid count '4294967296' (a sample every N events)");
}

int main(void)
{
	RUN(values);
	RUN(bad_values_say_what);
	RUN(combinations);
	RUN(events);
	return unit_done();
}
