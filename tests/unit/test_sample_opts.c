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
	CHECK_INT(o.kernel_unwind, FG_KUNWIND_ORC);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_KERNEL_UNWIND, "check", why, sizeof(why)), 0);
	CHECK_INT(o.kernel_unwind, FG_KUNWIND_CHECK);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_KERNEL_UNWIND, "helper", why, sizeof(why)), 0);
	CHECK_INT(o.kernel_unwind, FG_KUNWIND_HELPER);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_KERNEL_UNWIND, "orc", why, sizeof(why)), 0);
	CHECK_INT(o.kernel_unwind, FG_KUNWIND_ORC);
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
		  "invalid --call-graph 'lbr' (fp, dwarf[,bytes] or cfi[,bytes])");
	CHECK_STR(refused(FG_SAMPLE_OPT_CALL_GRAPH, "dwarfs"),
		  "invalid --call-graph 'dwarfs' (fp, dwarf[,bytes] or cfi[,bytes])");
	CHECK_STR(refused(FG_SAMPLE_OPT_CALL_GRAPH, "dwarf,65529"),
		  "invalid stack dump size '65529' (1 to 65528 bytes)");
	CHECK_STR(refused(FG_SAMPLE_OPT_KERNEL_UNWIND, "fp"),
		  "invalid kernel unwinder 'fp' (orc, helper or check)");
}

/* --no-python, --no-jvm-maps, and no Python frames without user stacks */
TEST(python)
{
	struct fg_sample_opts o = FG_SAMPLE_OPTS_INIT, k = FG_SAMPLE_OPTS_INIT;
	char why[256], *none[] = {NULL};

	CHECK(!o.no_jvm_maps);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_NO_PYTHON, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_NO_JVM_MAPS, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(!o.python && o.no_jvm_maps);
	CHECK_INT(fg_sample_opt(&k, FG_SAMPLE_OPT_KERNEL_ONLY, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&k, none, why, sizeof(why)), 0);
	CHECK(!k.python);
	fg_sample_opts_release(&o);
	fg_sample_opts_release(&k);
}

TEST(combinations)
{
	struct fg_sample_opts o = FG_SAMPLE_OPTS_INIT;
	char why[256], *cmd[] = {"true", NULL}, *none[] = {NULL};

	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(o.command == NULL);
#ifdef __x86_64__
	CHECK(o.python); /* Python frames by default */
#endif
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
	o.call_graph_given = true;
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--call-graph dwarf and --kernel-only exclude each other");
	o.kernel_only = false;
	o.snapshot = 0;
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CFI_CHECK, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--cfi-check needs --call-graph cfi");
}

/* no --call-graph: cfi where it can be, fp where the other options exclude it */
TEST(call_graph_default)
{
	struct fg_sample_opts o = FG_SAMPLE_OPTS_INIT;
	char why[256], *none[] = {NULL};

	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(o.cfi && o.snapshot == FG_USTACK_SNAPSHOT_DEFAULT && !o.call_graph_given);
	/* --cfi-check alone: the default's */
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CFI_CHECK, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(o.cfi && o.cfi_check);
	/* --kernel-only, --off-cpu, --wall: fp, which they take */
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	o.kernel_only = true;
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(!o.cfi && o.snapshot == 0);
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_OFF_CPU, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(!o.cfi && o.snapshot == 0);
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_WALL, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(!o.cfi && o.snapshot == 0);
	/* clocks: cfi; an event counted, alone or beside a clock: fp */
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	CHECK_INT(fg_sample_opt(&o, 'e', "cpu-clock,task-clock", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(o.cfi && o.snapshot == FG_USTACK_SNAPSHOT_DEFAULT);
	fg_sample_opts_release(&o);
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	CHECK_INT(fg_sample_opt(&o, 'e', "cpu-clock,page-faults", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(!o.cfi && o.snapshot == 0);
	fg_sample_opts_release(&o);
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	CHECK_INT(fg_sample_opt(&o, 'e', "tracepoint:sched:sched_switch", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(!o.cfi && o.snapshot == 0);
	fg_sample_opts_release(&o);
	/* asked for: kept, and still refused where it is excluded */
	o = (struct fg_sample_opts)FG_SAMPLE_OPTS_INIT;
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CALL_GRAPH, "fp", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK(!o.cfi && o.snapshot == 0 && o.call_graph_given);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CALL_GRAPH, "cfi", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_OFF_CPU, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--call-graph cfi and --off-cpu exclude each other: waits carry "
		       "frame-pointer stacks only");
}

TEST(call_graph_cfi)
{
	struct fg_sample_opts o = FG_SAMPLE_OPTS_INIT;
	char why[256], *none[] = {NULL};

	/* cfi: a snapshot of 8192 bytes for the samples that fall back, or BYTES */
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CALL_GRAPH, "cfi", why, sizeof(why)), 0);
	CHECK(o.cfi && o.snapshot == 8192);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CALL_GRAPH, "cfi,1001", why, sizeof(why)), 0);
	CHECK(o.cfi && o.snapshot == 1008);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CFI_CHECK, NULL, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CFI_MAX_MIB, "64", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CFI_MAX_ROWS, "1000", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CFI_MAX_FILES, "10", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CFI_MAX_PROCS, "20", why, sizeof(why)), 0);
	CHECK(o.cfi_max_mib == 64 && o.cfi_max_rows == 1000 && o.cfi_max_files == 10 &&
	      o.cfi_max_procs == 20);
	CHECK_STR(refused(FG_SAMPLE_OPT_CFI_MAX_MIB, "0"),
		  "invalid limit '0' (1 to 65536 MiB of tables)");
	CHECK_STR(refused(FG_SAMPLE_OPT_CFI_MAX_ROWS, "1"),
		  "invalid limit '1' (2 to 16777216 rows)");
	CHECK_STR(refused(FG_SAMPLE_OPT_CALL_GRAPH, "cfi,0"),
		  "invalid stack dump size '0' (1 to 65528 bytes)");
	CHECK_STR(refused(FG_SAMPLE_OPT_CALL_GRAPH, "cfis"),
		  "invalid --call-graph 'cfis' (fp, dwarf[,bytes] or cfi[,bytes])");
	/* fp and dwarf undo it */
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CALL_GRAPH, "dwarf", why, sizeof(why)), 0);
	CHECK(!o.cfi && o.snapshot == 8192);
	o.kernel_only = true;
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_CALL_GRAPH, "cfi", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--call-graph cfi and --kernel-only exclude each other");
}

TEST(offcpu_options)
{
	struct fg_sample_opts o = FG_SAMPLE_OPTS_INIT;
	char why[256], *none[] = {NULL};

	/* offcputime's defaults */
	CHECK(!o.offcpu && !o.wall && !o.kernel_threads);
	CHECK(o.min_block_ns == 1000 && o.max_block_ns == UINT64_MAX);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_OFF_CPU, NULL, why, sizeof(why)), 0);
	CHECK(o.offcpu && !o.wall);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_WALL, NULL, why, sizeof(why)), 0);
	CHECK(o.offcpu && o.wall);
	/* microseconds in, nanoseconds kept */
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_MIN_BLOCK, "250", why, sizeof(why)), 0);
	CHECK(o.min_block_ns == 250000);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_MAX_BLOCK, "0", why, sizeof(why)), 0);
	CHECK(o.max_block_ns == 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--min-block 250 is above --max-block 0");
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_MAX_BLOCK, "18446744073709551", why, sizeof(why)),
		  0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opt(&o, FG_SAMPLE_OPT_KERNEL_THREADS, NULL, why, sizeof(why)), 0);
	CHECK(o.kernel_threads);
	CHECK(!o.pages_given);
	CHECK_INT(fg_sample_opt(&o, 'm', "128", why, sizeof(why)), 0);
	CHECK(o.pages_given && o.pages == 128);
	/* waits carry frame-pointer stacks only */
	o.snapshot = 8192;
	o.call_graph_given = true;
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--call-graph dwarf and --wall exclude each other: waits carry "
		       "frame-pointer stacks only");
	o.wall = false;
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "--call-graph dwarf and --off-cpu exclude each other: waits carry "
		       "frame-pointer stacks only");
	/* events are counted, waits timed */
	o.snapshot = 0;
	CHECK_INT(fg_sample_opt(&o, 'e', "page-faults", why, sizeof(why)), 0);
	CHECK_INT(fg_sample_opts_check(&o, none, why, sizeof(why)), -EINVAL);
	CHECK_STR(why, "-e and --off-cpu exclude each other: waits weigh their time, and --wall "
		       "samples the CPU clock");
	fg_sample_opts_release(&o);
	/* bad values */
	CHECK_STR(refused(FG_SAMPLE_OPT_MIN_BLOCK, "-1"),
		  "invalid --min-block '-1' (microseconds)");
	CHECK_STR(refused(FG_SAMPLE_OPT_MAX_BLOCK, "18446744073709552"),
		  "invalid --max-block '18446744073709552' (microseconds)");
	/* a CPU sample's weight with --wall: the period the kernel samples at */
	CHECK(fg_sample_period_ns(99) == 10101010);
	CHECK(fg_sample_period_ns(999) == 1001001);
	CHECK(fg_sample_period_ns(1000) == 1000000);
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
	RUN(python);
	RUN(call_graph_default);
	RUN(call_graph_cfi);
	RUN(offcpu_options);
	RUN(events);
	return unit_done();
}
