/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading what fg-fold reads (perf script text, perf's or fg-sym's; folded
 * stacks; bpftrace maps) into pprof profiles (fg/pprof.h): the whole input
 * as one profile, or one profile per time window of the samples' own clock.
 *
 *	struct fg_pprof_reader *r = fg_pprof_reader_new(&opts, emit, ctx);
 *	fg_pprof_reader_read(r, fd, "run.perf");	(for each input)
 *	fg_pprof_reader_finish(r);			(emits the last profile)
 *	fg_pprof_reader_free(r);
 *
 * From perf script text each sample keeps its addresses, its modules (the
 * mappings' files), its inlined functions ("ADDR NAME (inlined)" lines before
 * the frame they were inlined into, as fg-sym --inline and perf --inline
 * print them), its pid, tid and comm.  Samples of the event folded (the
 * first one seen, or opts.event_filter) are CPU samples; "offcpu-time"
 * samples weigh the nanoseconds of their period, as perf and fg-sym print
 * off-CPU waits.  Samples of other events are skipped and counted.
 *
 * The nanoseconds a CPU sample stands for come from opts.freq, else from
 * the input's header comments as `perf script --header` prints them (and
 * fg-sym writes them): "# event : name = cpu-clock, ..., { sample_period,
 * sample_freq } = 99, ..., freq = 1, ...".  Without either, the period of a
 * cpu-clock or task-clock sample is its nanoseconds (perf records it so);
 * for other events the profile has no cpu/nanoseconds, which is reported.
 * "# reference time: ... = SECS.USECS (TOD) = SECS.NSECS (CLOCK)" ties the
 * samples' clock to the wall clock.  PERF_RECORD_MMAP2 lines (perf script
 * --show-mmap-events) give the mappings' build-ids.
 *
 * Folded stacks and bpftrace maps have names only: locations by name, no
 * pid, tid, comm or time.  Memory is that of one window's profile, plus a
 * build-id per distinct path seen in PERF_RECORD_MMAP2 lines.
 */
#ifndef FG_PPROF_READ_H
#define FG_PPROF_READ_H

#include <stdbool.h>
#include <stdint.h>

#include "fg/fold.h"
#include "fg/pprof.h"

struct fg_pprof_reader_opts {
	enum fg_fold_input input; /* FG_FOLD_AUTO: detect each input's format */
	double freq;		  /* samples a second (-F); 0: from the input */
	uint64_t every_ns;	  /* windows of this length; 0: one profile */
	const char *event_filter; /* the CPU event; NULL: the first seen */
};

struct fg_pprof_stats {
	uint64_t samples;      /* samples (or folded lines) in the profiles */
	uint64_t other_events; /* samples skipped: neither the event folded nor off-CPU */
	uint64_t bad_lines;    /* lines neither header, frame, comment nor blank */
	uint64_t sideband;     /* PERF_RECORD_* lines (mmap, comm, fork, lost...) */
	uint64_t late;	       /* samples older than their window, put in the current one */
	uint64_t untimed;      /* samples without a time (with windows: in the current one) */
	uint64_t no_frames;    /* samples without a frame: given one named "[unknown]" */
	uint64_t windows;      /* profiles emitted */
	const char *event;     /* the CPU event, NULL when none was seen */
	bool freq_unknown;     /* CPU samples without a known duration */
	double freq;	       /* the frequency used, 0 when none */
};

/* One profile, ready to write: a window, or the whole input. */
struct fg_pprof_window {
	struct fg_pprof *profile;
	const struct fg_pprof_meta *meta;
	bool timed; /* start_ns is known */
	bool wall;  /* start_ns is wall-clock time (ns since the epoch), else the samples' clock */
	uint64_t start_ns; /* the window's start (of the first sample without windows) */
	uint64_t samples;
};

/* Write one profile; 0 or -errno (the reader stops and returns it). */
typedef int (*fg_pprof_emit_fn)(void *ctx, const struct fg_pprof_window *w);

struct fg_pprof_reader;

struct fg_pprof_reader *fg_pprof_reader_new(const struct fg_pprof_reader_opts *opts,
					    fg_pprof_emit_fn emit, void *ctx, fg_log_fn log,
					    void *log_ctx);
void fg_pprof_reader_free(struct fg_pprof_reader *r);

/*
 * Read one input (`name` for messages).  0, also when lines were bad (logged,
 * counted, skipped); -errno on a read error, -EMEDIUMTYPE for binary input,
 * -EINVAL for a two-column (differential) profile or, with windows, input
 * without times; the emitter's error.
 */
int fg_pprof_reader_read(struct fg_pprof_reader *r, int fd, const char *name);

/* Emit what is left: the last window, or the whole profile (also when empty).  0 or -errno. */
int fg_pprof_reader_finish(struct fg_pprof_reader *r);

const struct fg_pprof_stats *fg_pprof_reader_stats(const struct fg_pprof_reader *r);

#endif
