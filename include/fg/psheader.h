/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The comments `perf script --header` prints before the samples, which
 * fg-sym --header writes the same way and fg-pprof reads: how often the
 * samples were taken, and how their clock relates to the wall clock.
 *
 *	# ========
 *	# captured on    : Mon Nov 30 14:26:14 2026
 *	# hostname : vm
 *	# os release : 6.18.44
 *	# event : name = cpu-clock, , type = 1, { sample_period, sample_freq } = 99, ..., freq = 1
 *	# clockid: monotonic (1)
 *	# reference time: 2026-11-30 14:26:14.860210 = 1796049184.860210 (TOD) = 847.210343509
 *(monotonic) # ========
 *	#
 *
 * Every line starts with '#', which the readers of perf script text
 * (stackcollapse-perf.pl, fg-fold, speedscope, the Firefox Profiler) skip.
 */
#ifndef FG_PSHEADER_H
#define FG_PSHEADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct fg_psheader_info {
	const char *host, *release; /* NULL: not printed */
	const char *event;	    /* "cpu-clock" */
	uint64_t freq;		    /* samples a second; 0: not printed */
	bool has_ref;		    /* the two readings of the same moment below are known */
	uint64_t ref_realtime_ns;   /* CLOCK_REALTIME */
	uint64_t ref_clock_ns;	    /* the samples' clock (CLOCK_MONOTONIC) */
};

/* Write the header comments.  0, or -EIO when writing failed. */
int fg_psheader_write(FILE *out, const struct fg_psheader_info *info);

/* What "# event : name = NAME, ..." says of an event's sampling. */
struct fg_psheader_event {
	char name[64];	/* without modifiers ("cpu-clock", not "cpu-clock:ppp") */
	bool freq_mode; /* n is samples a second ("freq = 1"); else a fixed period */
	uint64_t n;
};

/* Parse a "# event :" comment.  0, or -EINVAL when the line is not one or names no rate. */
int fg_psheader_parse_event(const char *line, size_t len, struct fg_psheader_event *e);

/* Parse a "# reference time:" comment: the wall clock and the samples' clock, ns.  0 or -EINVAL. */
int fg_psheader_parse_reftime(const char *line, size_t len, uint64_t *realtime_ns,
			      uint64_t *clock_ns);

/*
 * The time of a sample header line ("comm 12/34 [001] 123.456789: ..."), in
 * nanoseconds: 0 with *ns set, -ENOENT when the line has none.
 */
int fg_psheader_time(const char *line, size_t len, uint64_t *ns);

/* The same for a header line already parsed into *h (its time span). */
struct fg_ps_header;
int fg_psheader_time_ns(const struct fg_ps_header *h, uint64_t *ns);

#endif
