/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two folded profiles into one differential profile, as FlameGraph's
 * difffolded.pl makes it: "STACK COUNT1 COUNT2" for every stack of either
 * profile (0 where a profile lacks it), which flamegraph.pl and fg-svg draw
 * red where it grew and blue where it shrank.
 *
 *	struct fg_diff *d = fg_diff_new(&opts, log, ctx);
 *	fg_diff_read(d, 0, fd_before, "before.folded");
 *	fg_diff_read(d, 1, fd_after, "after.folded");
 *	fg_diff_write(d, stdout);
 *	fg_diff_free(d);
 *
 * A line's stack is all that comes before the whitespace before its last
 * count (a count may have a fraction: "12.5"); counts of the same stack are
 * added up.  The output is sorted bytewise by stack; counts are written as
 * whole numbers, their fractions cut off, as the scaling of -n does.
 */
#ifndef FG_DIFF_H
#define FG_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fg/fold.h"

struct fg_diff_opts {
	bool normalize; /* scale the first profile's counts to the second's total */
	bool strip_hex; /* "0x1234abcd" in a stack becomes "0x..." */
};

struct fg_diff_stats {
	uint64_t lines[2];  /* lines of each profile read into it */
	uint64_t bad_lines; /* lines without a count (or with one too large), skipped */
	double totals[2];   /* each profile's total count */
	size_t stacks;	    /* distinct stacks */
};

struct fg_diff;

struct fg_diff *fg_diff_new(const struct fg_diff_opts *opts, fg_log_fn log, void *ctx);
void fg_diff_free(struct fg_diff *d);

/*
 * Read profile `which` (0: before, 1: after) from `fd`; `name` is for
 * messages.  0, also when lines were bad (each is logged with the file and
 * line, counted, skipped); -errno when reading failed.
 */
int fg_diff_read(struct fg_diff *d, int which, int fd, const char *name);

/* Write the differential profile.  0, or -EIO when writing failed. */
int fg_diff_write(struct fg_diff *d, FILE *out);

const struct fg_diff_stats *fg_diff_stats(struct fg_diff *d);

#endif
