/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What fg-sample says at the end of a run, on standard error: the samples
 * and what became of their stacks, the snapshots, the losses and how to
 * avoid them, the BPF program's cost, the command's status.  By default one
 * line (samples, lost, the share of whole user stacks) and those that show a
 * loss or call for action; with -v every counter.  Formatted here
 * as lines (each ending in '\n', without the program's name, which the
 * tool's diagnostics add), so that the wording is one function's.
 */
#ifndef FG_SAMPLE_SUMMARY_H
#define FG_SAMPLE_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "fg/buf.h"
#include "fg/record.h"

struct fg_sample_stats {
	struct fg_rec_summary sum; /* as written at the end of the stream */
	bool verbose; /* -v: every line; else the first and those that call for action */
	uint64_t user_stacks, user_whole; /* samples with a user stack, those whole (first line) */
	bool user_fp; /* --call-graph fp: user_whole is those not cut short (whole up to code
			 built without frame pointers, which fg-sample cannot tell from the end) */
	unsigned freq, ncpus; /* -F (0: no clock sampled) and the CPUs sampled */
	uint64_t nofp;	      /* samples whose user chain ended without a frame pointer */
	unsigned snapshot;    /* --call-graph dwarf's BYTES; 0: no line for snapshots */
	uint64_t snapshots, snapshot_bytes, snapshot_whole;
	uint32_t ring_bytes; /* the ring buffer, and the -m that sized it */
	unsigned pages;
	uint64_t prog_runs, prog_run_ns; /* kernel.bpf_stats_enabled's; 0 runs: no line */
	uint64_t bad_events;		 /* events from the BPF program dropped as malformed */
	uint64_t late;	    /* records written after records of a later time (fg_reorder_late) */
	const char *events; /* the tool's lines about its events (-e), before the command's */
	bool command_done;  /* say how the command ended (sum.command_status) */
	/* --off-cpu, --wall: waits */
	bool offcpu, wall;
	uint64_t waits, wait_ns; /* waits written (sum.samples counts them too), their time */
	uint64_t waits_open, waits_open_ns; /* of those, still going on at the end */
	uint64_t waits_lost;		    /* lost: their ring buffer was full */
	uint64_t waits_unseen;		    /* not followed: no memory to keep them */
	uint64_t waits_short, waits_long;   /* left out by --min-block, --max-block */
	uint64_t waits_no_start;	    /* threads followed that ran again, no start seen */
	uint64_t waits_no_end;		    /* lost: the switch that ended them was not seen */
	uint32_t wait_ring_bytes;	    /* that ring, and the pages a CPU that sized it */
	unsigned wait_pages;
	uint64_t wait_prog_runs, wait_prog_run_ns; /* the program on sched_switch */
	uint64_t wait_prog_missed; /* switches it did not see: the kernel did not run it */
};

/* The lines for `st`, appended to b. */
void fg_sample_summary(struct fg_buf *b, const struct fg_sample_stats *st);

#endif
