/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Folding stacks: `perf script` text (perf's or fg-sym's), folded stacks, or
 * bpftrace map output in; folded stacks out, one line per distinct stack,
 * "root;...;leaf COUNT", sorted bytewise, counts summed.  The names follow
 * stackcollapse-perf.pl's rules (with inferno's fixes), so the output matches
 * what users of the FlameGraph scripts already have.
 *
 *	struct fg_fold *f = fg_fold_new(&opts, log, ctx);
 *	fg_fold_read(f, fd, "perf.txt");	(for each input)
 *	fg_fold_write(f, stdout);
 *	fg_fold_free(f);
 *
 * Memory grows with the number of distinct stacks, not with the input's size.
 * The library prints nothing: messages (bad lines, errors naming the input and
 * the line) go to the log callback.
 */
#ifndef FG_FOLD_H
#define FG_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Lines this long or longer are skipped (counted in long_lines), so memory stays bounded. */
#define FG_FOLD_MAX_LINE ((size_t)64 << 20)

/* Side-band record kinds counted by name; others are counted under "other". */
#define FG_FOLD_SIDEBAND_KINDS 16

enum fg_fold_input {
	FG_FOLD_AUTO = 0, /* detect each input's format from its first lines */
	FG_FOLD_PERF,	  /* perf script text */
	FG_FOLD_FOLDED,	  /* folded stacks: "a;b;c COUNT" or "a;b;c COUNT1 COUNT2" */
	FG_FOLD_BPFTRACE, /* bpftrace map output: @[kstack, ustack, comm]: COUNT */
};

struct fg_fold_opts {
	enum fg_fold_input input;
	bool include_pid;	       /* root frame "comm-PID" */
	bool include_tid;	       /* root frame "comm-PID/TID" */
	bool annotate_kernel;	       /* "_[k]" after kernel frames */
	bool annotate_jit;	       /* "_[j]" after JIT frames */
	bool include_addrs;	       /* "[module <ADDR>]" for frames without a symbol */
	bool count_samples;	       /* weight 1 per sample instead of its period */
	bool srcline;		       /* append "-F+srcline" source positions: "func:file.c:12" */
	bool inline_frames;	       /* un-inline frames from the files' DWARF line information */
	bool inline_context;	       /* and append each function's source position */
	const char *event_filter;      /* fold only this event; NULL: the first one seen */
	const char *const *skip_after; /* drop the callers of the deepest frame named so */
	size_t n_skip_after;
	const uint64_t *only_pids; /* keep only samples of these processes */
	size_t n_only_pids;
	const char *const *only_comms; /* keep only samples of these process names */
	size_t n_only_comms;
};

struct fg_fold_sideband {
	char name[32]; /* "PERF_RECORD_MMAP2", or "other" */
	uint64_t n;
};

struct fg_fold_stats {
	uint64_t samples;      /* samples (or folded lines, bpftrace entries) folded */
	uint64_t other_events; /* samples skipped: not the event folded */
	uint64_t filtered;     /* samples skipped by only_pids/only_comms */
	uint64_t bad_lines;    /* lines neither header, frame nor blank, skipped */
	uint64_t not_inlined;  /* --inline: frames left as they were (no line information) */
	uint64_t lines;	       /* lines read that were neither blank nor comments */
	uint64_t sideband;     /* side-band records (PERF_RECORD_*) skipped */
	struct fg_fold_sideband sideband_kinds[FG_FOLD_SIDEBAND_KINDS]; /* by kind */
	size_t n_sideband_kinds;
	uint64_t lost_records; /* PERF_RECORD_LOST and LOST_SAMPLES records */
	uint64_t lost;	       /* the events they say were lost (saturating) */
	uint64_t extra_lines;  /* lines perf adds to a sample (-F +insn, +srccode...), skipped */
	uint64_t refused;      /* samples or lines left out: their count overflows 2^64-1 */
	uint64_t long_lines;   /* lines of FG_FOLD_MAX_LINE bytes or more, skipped */
	uint64_t damaged;      /* samples left out because a line of theirs was skipped */
	const char *event;     /* the event folded, NULL when no header named one */
	bool event_defaulted;  /* the event is the first one seen, not the caller's */
	int columns;	       /* count columns of the output: 1, or 2 (differential) */
};

/* Receives one message, without the program name or a final newline. */
typedef void (*fg_fold_log_fn)(void *ctx, const char *msg);

struct fg_fold;

struct fg_fold *fg_fold_new(const struct fg_fold_opts *opts, fg_fold_log_fn log, void *ctx);
void fg_fold_free(struct fg_fold *f);

/*
 * Fold everything read from `fd` (`name` is for messages).  0 on success, also
 * when some lines were bad, too long, or had a count that would overflow: they
 * are logged with their line number, counted and left out, and the rest is
 * folded.  On failure the reason has been logged and the result is -errno: a
 * read error, -EMEDIUMTYPE for binary input (fg-sample records given to
 * fg-fold), -EINVAL when one- and two-column folded profiles are mixed.
 */
int fg_fold_read(struct fg_fold *f, int fd, const char *name);

/* Fold an input held in memory, as fg_fold_read does. */
int fg_fold_read_mem(struct fg_fold *f, const char *data, size_t len, const char *name);

/*
 * Write the folded stacks, sorted bytewise.  0, or -errno when writing failed.
 * Counts are whole numbers, or decimals when the input's were ("2.5").
 */
int fg_fold_write(struct fg_fold *f, FILE *out);

/*
 * Called with each perf-script line that is a sample header or a '#' comment,
 * before the sample is folded (the sample before it already is): a tool that
 * cuts the stream into time windows writes and clears the table there.  A
 * non-zero return (-errno) stops the reading; fg_fold_read() returns it.
 */
typedef int (*fg_fold_line_fn)(void *ctx, const char *line, size_t len);
void fg_fold_set_line_hook(struct fg_fold *f, fg_fold_line_fn fn, void *ctx);

/* Forget the stacks folded so far (their memory too), keeping options, stats and input state. */
void fg_fold_clear(struct fg_fold *f);

/* Number of distinct stacks so far. */
size_t fg_fold_count(const struct fg_fold *f);
const struct fg_fold_stats *fg_fold_stats(const struct fg_fold *f);

/* Name of an input format, and back ("perf", "folded", "bpftrace"); -1 when unknown. */
const char *fg_fold_input_name(enum fg_fold_input in);
int fg_fold_input_parse(const char *name);

#endif
