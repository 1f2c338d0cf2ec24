/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The folded-stack format of stackcollapse-*.pl and flamegraph.pl:
 *
 *	frame;frame;frame COUNT
 *	frame;frame;frame COUNT1 COUNT2		(a differential profile)
 *
 * root first.  A count is the last whitespace-separated field of the line,
 * digits with an optional fraction ("12", "12.", "12.5"); the character
 * before it must be whitespace.  What stands before that one whitespace
 * character is the stack, as flamegraph.pl reads it (so "a;b  5" has the
 * stack "a;b ").  When the stack itself ends in whitespace and a count,
 * the line has two counts: before and after.
 *
 * Frames are separated by ';'.  Empty frames at the end of a stack are
 * dropped, as perl's split does; empty frames elsewhere are kept.
 */
#ifndef FG_FOLDED_H
#define FG_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fg_folded {
	const char *stack; /* points into the line */
	size_t stack_len;
	double count;  /* the only count, or the "after" count of a differential line */
	double before; /* the "before" count of a differential line, else 0 */
	bool diff;     /* two counts */
	/* the text of the counts, as written */
	const char *count_text, *before_text;
	size_t count_text_len, before_text_len;
};

/*
 * Parse one line (without its newline; a final '\r' is ignored).  Returns 0,
 * or -EINVAL when the line has no count (an empty line, a comment, garbage).
 */
int fg_folded_parse(const char *line, size_t len, struct fg_folded *out);

/*
 * Whether a line is a folded line as fg-fold's format detection sees one: a
 * stack (not indented, not empty once blanks before the count are dropped)
 * and a count; blanks at the end are allowed.
 */
bool fg_folded_is_line(const char *line, size_t len);

/*
 * Walk the frames of a stack: start with *pos = 0; returns true with the
 * next frame in *frame and *frame_len, false after the last one.
 *
 *	size_t pos = 0; const char *f; size_t n;
 *	while (fg_folded_next_frame(stack, len, &pos, &f, &n)) use(f, n);
 */
bool fg_folded_next_frame(const char *stack, size_t len, size_t *pos, const char **frame,
			  size_t *frame_len);

/* The length of `stack` without its trailing empty frames (perl's split). */
size_t fg_folded_trim(const char *stack, size_t len);

/*
 * A count held exactly: whole + frac / 10^dec, for adding counts as written
 * ("5", "2.5", "0.125") without the rounding of a double.
 */
struct fg_count {
	uint64_t whole;
	uint64_t frac; /* < 10^dec */
	unsigned dec;  /* decimals, at most FG_COUNT_MAX_DEC */
};

#define FG_COUNT_MAX_DEC 18

/*
 * The value of a count's text, as fg_folded_parse found it (count_text):
 * digits, then optionally '.' and digits; decimals past the 18th are dropped.
 * 0, -EINVAL when it is no count, -ERANGE when the whole part exceeds 2^64-1.
 */
int fg_count_parse(const char *text, size_t len, struct fg_count *c);

/* *sum += *c.  0, or -EOVERFLOW (and *sum unchanged) past 2^64-1. */
int fg_count_add(struct fg_count *sum, const struct fg_count *c);

/*
 * Write the count: "12", or "12.5" (the fraction without trailing zeros).
 * Returns the length, as snprintf does; 48 bytes always suffice.
 */
int fg_count_format(const struct fg_count *c, char *buf, size_t size);

#endif
