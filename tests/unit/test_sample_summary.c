// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for what fg-sample says at the end of a run. */
#include <signal.h>

#include "fg/sample_summary.h"
#include "unit.h"

TEST(a_plain_run_in_one_line)
{
	struct fg_sample_stats st = {
	    .sum = {.start_ns = 1000000000,
		    .end_ns = 3000000000,
		    .samples = 396,
		    .ustack_failed = 1,
		    .ustack_cut = 2,
		    .mappings = 13,
		    .command_status = -1},
	    .freq = 99,
	    .ncpus = 2,
	    .nofp = 5,
	};
	struct fg_buf b = FG_BUF_INIT;

	fg_sample_summary(&b, &st);
	CHECK_STR(b.data, "396 samples in 2.00 s (198.0/s; 99 Hz x 2 CPUs), lost 0; kernel stacks "
			  "failed 0; user stacks failed 1, cut short 2, ended at a frame without "
			  "frame pointer 5; events lost 0; 13 mappings\n");
	/* a run of no time has no rate */
	fg_buf_reset(&b);
	st.sum.end_ns = st.sum.start_ns;
	fg_sample_summary(&b, &st);
	CHECK(strstr(b.data, " in 0.00 s (0.0/s; ") != NULL);
	fg_buf_release(&b);
}

TEST(every_line)
{
	struct fg_sample_stats st = {
	    .sum = {.start_ns = 0,
		    .end_ns = 1000000000,
		    .samples = 10,
		    .lost = 7,
		    .command_status = 3 << 8},
	    .freq = 999,
	    .ncpus = 1,
	    .snapshot = 8192,
	    .snapshots = 4,
	    .snapshot_bytes = 4 * 6000 + 3,
	    .snapshot_whole = 1,
	    .ring_bytes = 65536,
	    .pages = 16,
	    .prog_runs = 17,
	    .prog_run_ns = 17 * 900 + 5,
	    .bad_events = 2,
	    .command_done = true,
	};
	struct fg_buf b = FG_BUF_INIT;
	const char *rest;

	fg_sample_summary(&b, &st);
	rest = strchr(b.data, '\n') + 1;
	CHECK_STR(rest, "4 user stack snapshots, 6000 bytes each on average (at most 8192), 1 of "
			"them whole stacks (the stack ended first)\n"
			"7 samples lost: the ring buffer of 64 KiB was full; raise -m above 16 "
			"(pages per CPU) to keep them\n"
			"the BPF program ran 17 times, 900 ns each on average "
			"(kernel.bpf_stats_enabled)\n"
			"2 malformed events from the BPF program dropped\n"
			"command exited with status 3\n");
	/* no snapshot taken: no division */
	fg_buf_reset(&b);
	st.snapshots = 0;
	st.sum.command_status = SIGKILL;
	fg_sample_summary(&b, &st);
	CHECK(strstr(b.data, "\n0 user stack snapshots, 0 bytes each on average") != NULL);
	CHECK(strstr(b.data, "\ncommand killed by signal 9 (Killed)\n") != NULL);
	fg_buf_release(&b);
}

/* with -e and no clock: no rate in the first line; the events' lines before the command's */
TEST(events_without_a_clock)
{
	struct fg_sample_stats st = {
	    .sum = {.start_ns = 0, .end_ns = 1000000000, .samples = 10, .command_status = 0},
	    .ncpus = 2,
	    .events = "samples by event: page-faults 10 (each event)\n",
	    .command_done = true,
	};
	struct fg_buf b = FG_BUF_INIT;

	fg_sample_summary(&b, &st);
	CHECK(strncmp(b.data, "10 samples in 1.00 s (10.0/s; 2 CPUs), lost 0;", 46) == 0);
	CHECK_STR(strchr(b.data, '\n') + 1, "samples by event: page-faults 10 (each event)\n"
					    "command exited with status 0\n");
	fg_buf_release(&b);
}

int main(void)
{
	RUN(a_plain_run_in_one_line);
	RUN(every_line);
	RUN(events_without_a_clock);
	return unit_done();
}
