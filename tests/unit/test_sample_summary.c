// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for what fg-sample says at the end of a run. */
#include <signal.h>

#include "fg/sample_summary.h"
#include "unit.h"

TEST(a_plain_run_with_every_counter)
{
	struct fg_sample_stats st = {
	    .verbose = true,
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
	    .verbose = true,
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
	    .late = 3,
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
			"3 records came after records of a later time had been written: written "
			"out of time order\n"
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

TEST(waits)
{
	struct fg_sample_stats st = {
	    .verbose = true,
	    .sum = {.start_ns = 0,
		    .end_ns = 2000000000,
		    .samples = 103,
		    .mappings = 13,
		    .command_status = -1},
	    .freq = 99,
	    .ncpus = 2,
	    .offcpu = true,
	    .waits = 101,
	    .wait_ns = 523456789,
	    .waits_open = 1,
	    .waits_open_ns = 10000000,
	    .waits_short = 4,
	    .wait_ring_bytes = 524288,
	    .wait_pages = 64,
	};
	struct fg_buf b = FG_BUF_INIT;

	/* --off-cpu: waits, no CPU samples */
	fg_sample_summary(&b, &st);
	CHECK_STR(b.data, "101 waits in 2.00 s (2 CPUs); kernel stacks failed 0; user stacks "
			  "failed 0, cut short 0, ended at a frame without frame pointer 0; events "
			  "lost 0; 13 mappings\n"
			  "101 waits, 0.523 s off the CPU; 1 of them still going on at the end "
			  "(0.010 s so far, flagged open); left out: 4 shorter than --min-block, 0 "
			  "longer than --max-block\n");
	/* --wall: the CPU samples are the samples that are not waits; losses of both kinds */
	fg_buf_reset(&b);
	st.wall = true;
	st.waits_lost = 5;
	st.waits_unseen = 6;
	st.waits_no_start = 7;
	st.waits_no_end = 8;
	st.wait_prog_missed = 3;
	st.wait_prog_runs = 10;
	st.wait_prog_run_ns = 10 * 1500;
	fg_sample_summary(&b, &st);
	CHECK(strncmp(b.data, "2 samples in 2.00 s (1.0/s; 99 Hz x 2 CPUs), lost 0;", 51) == 0);
	CHECK(strstr(b.data,
		     "\n5 waits lost: the ring buffer of waits of 512 KiB was full; raise "
		     "-m above 64 (pages per CPU) to keep them\n"
		     "6 waits not followed: the kernel had no memory to keep them\n"
		     "8 waits lost: the kernel did not report the switch that ended them\n"
		     "7 waits not recorded: the switch that began them was not seen (before the "
		     "run, on a CPU not sampled, or missed)\n"
		     "3 switches not seen: the kernel did not run the BPF program on "
		     "sched_switch (its recursion guard); a wait may be missing or too long for "
		     "each\n"
		     "the BPF program on sched_switch ran 10 times, 1500 ns each on average "
		     "(kernel.bpf_stats_enabled)\n") != NULL);
	fg_buf_release(&b);
}

/* with -e and no clock: no rate in the first line; the events' lines before the command's */
TEST(events_without_a_clock)
{
	struct fg_sample_stats st = {
	    .verbose = true,
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

/* without -v: one line, and only the lines that show a loss or call for action */
TEST(the_default_is_one_line)
{
	struct fg_sample_stats st = {
	    .sum = {.start_ns = 1000000000,
		    .end_ns = 3000000000,
		    .samples = 396,
		    .ustack_cut = 2,
		    .mappings = 13,
		    .command_status = 0},
	    .freq = 99,
	    .ncpus = 2,
	    .nofp = 5,
	    .user_stacks = 300,
	    .user_whole = 293,
	    .snapshot = 8192,
	    .snapshots = 4,
	    .prog_runs = 17,
	    .prog_run_ns = 17 * 900,
	    .command_done = true,
	};
	struct fg_buf b = FG_BUF_INIT;

	fg_sample_summary(&b, &st);
	CHECK_STR(b.data, "396 samples in 2.00 s (198.0/s; 99 Hz x 2 CPUs), lost 0; 293 of 300 "
			  "user stacks whole (97.7%)\n");
	/* frame pointers: the chains cut short (fg-sample cannot tell where one should end) */
	fg_buf_reset(&b);
	st.user_fp = true;
	fg_sample_summary(&b, &st);
	CHECK_STR(b.data, "396 samples in 2.00 s (198.0/s; 99 Hz x 2 CPUs), lost 0; 300 user "
			  "stacks by frame pointers, 7 cut short\n");
	/* no user stack (kernel threads, -k): no share; what went wrong shows */
	fg_buf_reset(&b);
	st.user_stacks = st.user_whole = 0;
	st.sum.lost = 4;
	st.sum.kstack_failed = 1;
	st.sum.sideband_lost = 2;
	st.ring_bytes = 65536;
	st.pages = 16;
	st.sum.command_status = 1 << 8;
	fg_sample_summary(&b, &st);
	CHECK_STR(b.data, "396 samples in 2.00 s (198.0/s; 99 Hz x 2 CPUs), lost 4; 1 kernel "
			  "stacks failed; 2 side-band events lost (mappings, exits)\n"
			  "4 samples lost: the ring buffer of 64 KiB was full; raise -m above 16 "
			  "(pages per CPU) to keep them\n"
			  "command exited with status 1\n");
	/* waits: the losses, not the counts */
	fg_buf_reset(&b);
	st = (struct fg_sample_stats){.sum = {.end_ns = 1000000000, .samples = 3},
				      .ncpus = 1,
				      .offcpu = true,
				      .waits = 3,
				      .waits_short = 9,
				      .waits_no_start = 2,
				      .waits_unseen = 1};
	fg_sample_summary(&b, &st);
	CHECK_STR(b.data, "3 waits in 1.00 s (1 CPUs)\n"
			  "1 waits not followed: the kernel had no memory to keep them\n");
	fg_buf_release(&b);
}

int main(void)
{
	RUN(a_plain_run_with_every_counter);
	RUN(the_default_is_one_line);
	RUN(every_line);
	RUN(waits);
	RUN(events_without_a_clock);
	return unit_done();
}
