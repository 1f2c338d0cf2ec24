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

#include "fg/folded.h"
#include "fg/log.h"
#include "fg/perfscript.h"

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
	const char *extra_event;       /* and this one too ("offcpu-time"), never the default */
	const char *const *skip_after; /* drop the callers of the deepest frame named so */
	size_t n_skip_after;
	const uint64_t *only_pids; /* keep only samples of these processes */
	size_t n_only_pids;
	const char *const *only_comms; /* keep only samples of these process names */
	size_t n_only_comms;
	/*
	 * A wall-clock profile (fg-sample --wall, perf record --off-cpu -e
	 * cpu-clock): fold the waits (`offcpu-time` samples, weighing their
	 * nanoseconds) with the samples of the event folded, each wait's stack
	 * ending in the frame FG_FOLD_OFFCPU_FRAME.
	 */
	bool wall;
	/*
	 * Keep only the waits whose task state (the "prev_state=S" fg-sym
	 * writes after the event) is one of these ("D", "S", "R+"); samples
	 * that name none are left out.
	 */
	const char *const *states;
	size_t n_states;
};

/* The last frame of a wait's stack in a wall-clock profile (fg_fold_opts.wall). */
#define FG_FOLD_OFFCPU_FRAME "[off-cpu]"

struct fg_fold_sideband {
	char name[32]; /* "PERF_RECORD_MMAP2", or "other" */
	uint64_t n;
};

struct fg_fold_stats {
	uint64_t samples;	 /* samples (or folded lines, bpftrace entries) folded */
	uint64_t other_events;	 /* samples skipped: not the event folded */
	uint64_t filtered;	 /* samples skipped by only_pids/only_comms */
	uint64_t waits;		 /* waits (offcpu-time samples) folded into a wall-clock profile */
	uint64_t state_filtered; /* samples skipped by states: another task state, or none */
	uint64_t bad_lines;	 /* lines neither header, frame nor blank, skipped */
	uint64_t not_inlined;	 /* --inline: frames left as they were (no line information) */
	uint64_t lines;		 /* lines read that were neither blank nor comments */
	uint64_t sideband;	 /* side-band records (PERF_RECORD_*) skipped */
	struct fg_fold_sideband sideband_kinds[FG_FOLD_SIDEBAND_KINDS]; /* by kind */
	size_t n_sideband_kinds;
	uint64_t lost_records; /* PERF_RECORD_LOST and LOST_SAMPLES records */
	uint64_t lost;	       /* the events they say were lost (saturating) */
	uint64_t extra_lines;  /* lines perf adds to a sample (-F +insn, +srccode...), skipped */
	uint64_t refused;      /* samples or lines left out: their count overflows 2^64-1 */
	uint64_t long_lines;   /* lines of FG_FOLD_MAX_LINE bytes or more, skipped */
	uint64_t damaged;      /* samples left out because a line of theirs was skipped */
	uint64_t cached;       /* samples read whole from the sample cache (counted above too) */
	const char *event;     /* the event folded, NULL when no header named one */
	bool event_defaulted;  /* the event is the first one seen, not the caller's */
	int columns;	       /* count columns of the output: 1, or 2 (differential) */
	enum fg_fold_input
	    input; /* the format of the input read last (FG_FOLD_AUTO: not known yet) */
};

struct fg_fold;

struct fg_fold *fg_fold_new(const struct fg_fold_opts *opts, fg_log_fn log, void *ctx);
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

/*
 * Streaming: one input given in pieces of any size as they come (a pipe, a
 * live stream).  A line cut between two pieces is joined, line numbers go on,
 * and the input is folded exactly as fg_fold_read folds it whole:
 *
 *	fg_fold_begin(f, "<stdin>");
 *	while ((n = read(fd, buf, sizeof(buf))) > 0)
 *		if (fg_fold_feed(f, buf, n) < 0)
 *			break;
 *	fg_fold_end(f);
 *
 * With FG_FOLD_AUTO the format is known from the first lines (fg_fold_detect):
 * until they have come (32 lines that are neither blank nor comments, or the
 * end), the bytes are held.  A NUL byte in the first FG_FOLD_DETECT_BYTES makes
 * the input binary (-EMEDIUMTYPE).  Each call returns 0 or the input's -errno,
 * as fg_fold_read would (then sticky until the next fg_fold_begin).
 */
#define FG_FOLD_DETECT_BYTES (64 * 1024)
int fg_fold_begin(struct fg_fold *f, const char *name);
int fg_fold_feed(struct fg_fold *f, const char *data, size_t len);
int fg_fold_end(struct fg_fold *f);

/*
 * The format of an input from its first lines: bpftrace when the first line
 * that is neither blank nor a comment is a map entry ("@..." or "Attaching
 * ..."), folded stacks when the first 32 such lines are all folded lines
 * (fg_folded_is_line), else perf script text.  `complete`: `data` is the
 * whole input; when it is not and the lines that decide have not all come,
 * the answer is FG_FOLD_AUTO (ask again with more).
 */
enum fg_fold_input fg_fold_detect(const char *data, size_t len, bool complete);

/* --- the samples one by one --- */

enum fg_fold_annot {
	FG_FOLD_ANNOT_NONE,
	FG_FOLD_ANNOT_KERNEL, /* "_[k]" with --kernel */
	FG_FOLD_ANNOT_JIT,    /* "_[j]" with --jit */
	FG_FOLD_ANNOT_INLINE, /* "_[i]": inlined (Java's a->b, --inline) */
};

/* A frame of a stack as fg-fold names it. */
struct fg_fold_name {
	const char *name; /* the frame's name in the folded stack, without its annotation */
	size_t len;
	const char *src; /* --srcline: its source position ("file.c:12"), else NULL */
	size_t src_len;
	enum fg_fold_annot annot;
};

/* A frame line of perf script text, and the frames fg-fold makes of it. */
struct fg_fold_frame {
	struct fg_span line;   /* the line as perf printed it (or the header's, after its event) */
	uint32_t line_id;      /* the same number for the same line text, or FG_FOLD_NO_ID */
	struct fg_ps_frame ps; /* address, symbol (offset taken off), offset, module */
	struct fg_span src;    /* the -F +srcline line under it, trimmed; empty when none */
	bool inlined;	       /* "ADDR NAME (inlined)": perf --inline's and fg-sym --inline's */
	size_t name0, nnames;  /* its frames in names[]: none for "(...)", several for a->b */
};

/*
 * One sample (perf script), folded line (folded stacks) or map entry
 * (bpftrace) as fg-fold folds it.  Pointers are valid during the call only.
 */
struct fg_fold_sample {
	enum fg_fold_input input;
	uint64_t lineno;   /* the header's line; for folded and bpftrace input, the last line */
	const char *stack; /* "root;...;leaf" as fg_fold_write prints it, without its count
			      (NULL for perf samples with FG_FOLD_FRAMES | FG_FOLD_NO_TABLE) */
	size_t stack_len;
	uint32_t stack_id; /* its number in the table (0, 1, ...; FG_FOLD_NO_ID: none) */
	int columns;	   /* 1, or 2: count is the "before" column, count2 the "after" */
	struct fg_count count, count2;
	bool extra_event; /* a sample of opts.extra_event */
	/* perf script only (else NULL and 0) */
	const struct fg_ps_header *h; /* its header, parsed */
	const char *header;	      /* the header's line */
	size_t header_len;
	/* with FG_FOLD_FRAMES only: the frame lines and their names, leaf first */
	const struct fg_fold_frame *frames;
	size_t nframes;
	const struct fg_fold_name *names;
	size_t nnames;
};

#define FG_FOLD_NO_ID UINT32_MAX

/* Called for each sample folded; a non-zero return (-errno) stops the reading. */
typedef int (*fg_fold_sample_fn)(void *ctx, const struct fg_fold_sample *s);
/* Called for a side-band record ("PERF_RECORD_MMAP2 ...", "PERF_RECORD_LOST ..."). */
typedef int (*fg_fold_record_fn)(void *ctx, const struct fg_ps_header *h, const char *line,
				 size_t len);

enum {
	FG_FOLD_FRAMES = 1,   /* give each sample its frame lines and names (parsed every time) */
	FG_FOLD_NO_TABLE = 2, /* leave the samples to the hook: nothing in the table */
};

struct fg_fold_hooks {
	fg_fold_sample_fn sample;
	unsigned flags; /* FG_FOLD_FRAMES | FG_FOLD_NO_TABLE */
	fg_fold_record_fn record;
	fg_fold_line_fn comment; /* each '#' line of perf script text */
	void *ctx;
};

/*
 * Hooks for each sample, side-band record and comment.  Without
 * FG_FOLD_NO_TABLE a sample is folded into the table first (a sample whose
 * count the table refuses is not given); with it the table stays empty and
 * stack_id is FG_FOLD_NO_ID.  Naming is per sample: no record or sample
 * changes how a later sample is named, so a consumer may cache what a
 * sample's fields name.  What carries over is the input's state only: the
 * event folded (the first one seen unless opts.event_filter), and whether a
 * strong header was seen (then a weak one is not believed).
 */
void fg_fold_set_hooks(struct fg_fold *f, const struct fg_fold_hooks *hooks);

/* Name of an input format, and back ("perf", "folded", "bpftrace"); -1 when unknown. */
const char *fg_fold_input_name(enum fg_fold_input in);
int fg_fold_input_parse(const char *name);

#endif
