// SPDX-License-Identifier: BSD-2-Clause
/* What fg-sample says at the end of a run. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "fg/sample_summary.h"

/* --off-cpu, --wall: the waits, what was left out and what was lost */
static void waits(struct fg_buf *b, const struct fg_sample_stats *st)
{
	if (st->verbose)
		fg_buf_addf(
		    b,
		    "%" PRIu64 " waits, %.3f s off the CPU; %" PRIu64
		    " of them still going on at the end (%.3f s so far, flagged open); left "
		    "out: %" PRIu64 " shorter than --min-block, %" PRIu64
		    " longer than --max-block\n",
		    st->waits, (double)st->wait_ns / 1e9, st->waits_open,
		    (double)st->waits_open_ns / 1e9, st->waits_short, st->waits_long);
	if (st->waits_lost)
		fg_buf_addf(b,
			    "%" PRIu64 " waits lost: the ring buffer of waits of %u KiB was full; "
			    "raise -m above %u (pages per CPU) to keep them\n",
			    st->waits_lost, st->wait_ring_bytes >> 10, st->wait_pages);
	if (st->waits_unseen)
		fg_buf_addf(b,
			    "%" PRIu64 " waits not followed: the kernel had no memory to keep "
			    "them\n",
			    st->waits_unseen);
	if (st->waits_no_end)
		fg_buf_addf(b,
			    "%" PRIu64 " waits lost: the kernel did not report the switch that "
			    "ended them\n",
			    st->waits_no_end);
	if (st->waits_no_start && st->verbose)
		fg_buf_addf(b,
			    "%" PRIu64 " waits not recorded: the switch that began them was not "
			    "seen (before the run, on a CPU not sampled, or missed)\n",
			    st->waits_no_start);
	if (st->wait_prog_missed)
		fg_buf_addf(b,
			    "%" PRIu64
			    " switches not seen: the kernel did not run the BPF program on "
			    "sched_switch (its recursion guard); a wait may be missing or too long "
			    "for each\n",
			    st->wait_prog_missed);
	if (st->wait_prog_runs && st->verbose)
		fg_buf_addf(b,
			    "the BPF program on sched_switch ran %" PRIu64 " times, %" PRIu64
			    " ns each on average (kernel.bpf_stats_enabled)\n",
			    st->wait_prog_runs, st->wait_prog_run_ns / st->wait_prog_runs);
}

/* The first line: the samples (or waits), those lost, and how their stacks came out. */
static void first_line(struct fg_buf *b, const struct fg_sample_stats *st)
{
	const struct fg_rec_summary *s = &st->sum;
	double secs = (double)(s->end_ns - s->start_ns) / 1e9;
	uint64_t samples = s->samples - (st->waits < s->samples ? st->waits : s->samples);
	char hz[32] = "";

	if (st->freq)
		snprintf(hz, sizeof(hz), "%u Hz x ", st->freq);
	if (st->offcpu && !st->wall)
		fg_buf_addf(b, "%" PRIu64 " waits in %.2f s (%u CPUs)", st->waits, secs, st->ncpus);
	else
		fg_buf_addf(b, "%" PRIu64 " samples in %.2f s (%.1f/s; %s%u CPUs), lost %" PRIu64,
			    samples, secs, secs > 0 ? (double)samples / secs : 0.0, hz, st->ncpus,
			    s->lost);
	if (st->verbose) {
		fg_buf_addf(b,
			    "; kernel stacks failed %" PRIu64 "; user stacks failed %" PRIu64
			    ", cut short %" PRIu64
			    ", ended at a frame without frame pointer %" PRIu64
			    "; events lost %" PRIu64 "; %" PRIu64 " mappings\n",
			    s->kstack_failed, s->ustack_failed, s->ustack_cut, st->nofp,
			    s->sideband_lost, s->mappings);
		return;
	}
	if (st->user_stacks && st->user_fp)
		fg_buf_addf(b, "; %" PRIu64 " user stacks by frame pointers, %" PRIu64 " cut short",
			    st->user_stacks, st->user_stacks - st->user_whole);
	else if (st->user_stacks)
		fg_buf_addf(b, "; %" PRIu64 " of %" PRIu64 " user stacks whole (%.1f%%)",
			    st->user_whole, st->user_stacks,
			    100.0 * (double)st->user_whole / (double)st->user_stacks);
	if (s->kstack_failed)
		fg_buf_addf(b, "; %" PRIu64 " kernel stacks failed", s->kstack_failed);
	if (s->sideband_lost)
		fg_buf_addf(b, "; %" PRIu64 " side-band events lost (mappings, exits)",
			    s->sideband_lost);
	fg_buf_addstr(b, "\n");
}

void fg_sample_summary(struct fg_buf *b, const struct fg_sample_stats *st)
{
	const struct fg_rec_summary *s = &st->sum;
	int cs = s->command_status;

	first_line(b, st);
	if (st->offcpu)
		waits(b, st);
	if (st->snapshot && st->verbose)
		fg_buf_addf(b,
			    "%" PRIu64 " user stack snapshots, %" PRIu64
			    " bytes each on average (at "
			    "most %u), %" PRIu64 " of them whole stacks (the stack ended first)\n",
			    st->snapshots, st->snapshots ? st->snapshot_bytes / st->snapshots : 0,
			    st->snapshot, st->snapshot_whole);
	if (s->lost)
		fg_buf_addf(b,
			    "%" PRIu64 " samples lost: the ring buffer of %u KiB was full; "
			    "raise -m above %u (pages per CPU) to keep them\n",
			    s->lost, st->ring_bytes >> 10, st->pages);
	if (st->prog_runs && st->verbose)
		fg_buf_addf(b,
			    "the BPF program ran %" PRIu64 " times, %" PRIu64
			    " ns each on average (kernel.bpf_stats_enabled)\n",
			    st->prog_runs, st->prog_run_ns / st->prog_runs);
	if (st->events)
		fg_buf_addstr(b, st->events);
	if (st->bad_events)
		fg_buf_addf(b, "%" PRIu64 " malformed events from the BPF program dropped\n",
			    st->bad_events);
	if (st->late)
		fg_buf_addf(b,
			    "%" PRIu64 " records came after records of a later time had been "
			    "written: written out of time order\n",
			    st->late);
	/* how the command ended: by default only when it failed */
	if (!st->command_done || (!st->verbose && WIFEXITED(cs) && WEXITSTATUS(cs) == 0))
		return;
	if (WIFEXITED(cs))
		fg_buf_addf(b, "command exited with status %d\n", WEXITSTATUS(cs));
	else if (WIFSIGNALED(cs))
		fg_buf_addf(b, "command killed by signal %d (%s)\n", WTERMSIG(cs),
			    strsignal(WTERMSIG(cs)));
}
