/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Time windows of a never-ending stream of samples, cut by the samples' own
 * clock, as fg-pprof --every and fg-fold --every write them: windows start at
 * multiples of their length (of the wall clock when the input ties its clock
 * to it, else of the samples' clock), and each is named by its start.
 *
 *	struct fg_window w = { .every_ns = 10 * NSEC };
 *	for each sample:
 *		if (fg_window_next(&w, has_time, t, &closed)) write the window at `closed`;
 *		add the sample;
 *	at the end: write the window at fg_window_start(&w)
 */
#ifndef FG_WINDOW_H
#define FG_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

struct fg_buf;

struct fg_window {
	uint64_t every_ns;  /* the windows' length */
	bool have_ref;	    /* ref_offset is known */
	int64_t ref_offset; /* the wall clock minus the samples' clock, ns */
	bool open;	    /* a window is being filled */
	uint64_t index;	    /* which: its start is index * every_ns */
	uint64_t late;	    /* samples older than the window being filled (put in it) */
	uint64_t untimed;   /* samples without a time (put in the window being filled) */
};

/*
 * Place the next sample (time t of the samples' clock, when has_time).
 * Returns true when it starts a new window: the one before, which started at
 * *closed_start, is complete and should be written first.  A sample older
 * than the window being filled, or without a time, goes into it, counted.
 */
bool fg_window_next(struct fg_window *w, bool has_time, uint64_t t, uint64_t *closed_start);

/* The start of the window being filled (wall-clock ns when have_ref). */
uint64_t fg_window_start(const struct fg_window *w);

/*
 * A window's file: "DIR/START" + suffix, START in whole seconds, followed
 * by ".NNNNNNNNN" when the window does not start on a whole second.
 */
void fg_window_path(struct fg_buf *b, const char *dir, uint64_t start_ns, const char *suffix);

#endif
