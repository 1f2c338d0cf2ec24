// SPDX-License-Identifier: BSD-2-Clause
/* What fg-sample says at the end of a run. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "fg/sample_summary.h"

void fg_sample_summary(struct fg_buf *b, const struct fg_sample_stats *st)
{
	const struct fg_rec_summary *s = &st->sum;
	double secs = (double)(s->end_ns - s->start_ns) / 1e9;
	int cs = s->command_status;
	char hz[32] = "";

	if (st->freq)
		snprintf(hz, sizeof(hz), "%u Hz x ", st->freq);
	fg_buf_addf(b,
		    "%" PRIu64 " samples in %.2f s (%.1f/s; %s%u CPUs), lost %" PRIu64
		    "; kernel stacks failed %" PRIu64 "; user stacks failed %" PRIu64
		    ", cut short %" PRIu64 ", ended at a frame without frame pointer %" PRIu64
		    "; events lost %" PRIu64 "; %" PRIu64 " mappings\n",
		    s->samples, secs, secs > 0 ? (double)s->samples / secs : 0.0, hz, st->ncpus,
		    s->lost, s->kstack_failed, s->ustack_failed, s->ustack_cut, st->nofp,
		    s->sideband_lost, s->mappings);
	if (st->snapshot)
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
	if (st->prog_runs)
		fg_buf_addf(b,
			    "the BPF program ran %" PRIu64 " times, %" PRIu64
			    " ns each on average (kernel.bpf_stats_enabled)\n",
			    st->prog_runs, st->prog_run_ns / st->prog_runs);
	if (st->events)
		fg_buf_addstr(b, st->events);
	if (st->bad_events)
		fg_buf_addf(b, "%" PRIu64 " malformed events from the BPF program dropped\n",
			    st->bad_events);
	if (!st->command_done)
		return;
	if (WIFEXITED(cs))
		fg_buf_addf(b, "command exited with status %d\n", WEXITSTATUS(cs));
	else if (WIFSIGNALED(cs))
		fg_buf_addf(b, "command killed by signal %d (%s)\n", WTERMSIG(cs),
			    strsignal(WTERMSIG(cs)));
}
