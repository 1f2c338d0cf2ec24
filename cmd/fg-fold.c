// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-fold: perf script text, folded stacks or bpftrace maps in; folded stacks out.
 * A drop-in for stackcollapse-perf.pl.  See fg-fold(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/atomicfile.h"
#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/fold.h"
#include "fg/fold_args.h"
#include "fg/foldopts.h"
#include "fg/perfscript.h"
#include "fg/psheader.h"
#include "fg/util.h"
#include "fg/window.h"

static const char usage_text[] =
    "usage: fg-fold [--pid | --tid] [--kernel] [--jit] [--all] [--addrs]\n"
    "               [--event-filter EVENT] [--samples] [--srcline] [--inline]\n"
    "               [--context] [--skip-after FUNC] [--only-pid PID[,PID...]]\n"
    "               [--only-comm NAME] [--wall] [--state STATE[,STATE...]]\n"
    "               [--input perf|folded|bpftrace] [-o FILE] [-v] [FILE ...]\n"
    "       fg-fold --every SECONDS -o DIR [OPTIONS] [FILE ...]\n"
    "       fg-fold -h | -V\n"
    "\n"
    "Fold stacks from perf script text (perf's or fg-sym's), folded stacks or bpftrace\n"
    "map output (files, or standard input) into folded stacks: 'root;...;leaf COUNT'.\n"
    "\n"
    "  --pid                   root frame comm-PID\n"
    "  --tid                   root frame comm-PID/TID\n"
    "  --kernel                mark kernel frames with _[k]\n"
    "  --jit                   mark JIT frames with _[j]\n"
    "  --all                   --kernel and --jit\n"
    "  --addrs                 keep addresses of frames without a symbol\n"
    "  --event-filter EVENT    fold only samples of EVENT (default: the first event seen)\n"
    "  --samples               count samples instead of summing event periods\n"
    "  --srcline               add source positions of perf script -F+srcline to frames\n"
    "  --inline                un-inline frames with the files' DWARF line information\n"
    "  --context               --inline, and add each function's source position\n"
    "  --skip-after FUNC       drop the callers of FUNC (repeatable)\n"
    "  --only-pid PID[,PID...] keep only samples of these processes (repeatable)\n"
    "  --only-comm NAME        keep only samples of processes named NAME (repeatable)\n"
    "  --wall                  wall-clock time: fold the waits (offcpu-time samples) with\n"
    "                          the CPU samples, each wait's stack ending in [off-cpu]\n"
    "  --state STATE[,STATE...]\n"
    "                          keep only waits in these task states (S, D, R+, ...;\n"
    "                          repeatable)\n"
    "  --input FORMAT          read perf, folded or bpftrace input (default: detect)\n"
    "  -o, --output FILE       write to FILE instead of standard output\n"
    "  --every SECONDS         one profile per window of SECONDS of the samples' time\n"
    "                          (perf script input), into the directory -o names,\n"
    "                          as START.folded\n"
    "  -v, --verbose           report the event folded and what was skipped\n"
    "  -h, --help              print this help and exit\n"
    "  -V, --version           print the version and exit\n";

static const struct option longopts[] = {
    {"addrs", no_argument, NULL, FG_FOLD_ARG_ADDRS},
    {"all", no_argument, NULL, FG_FOLD_ARG_ALL},
    {"context", no_argument, NULL, FG_FOLD_ARG_CONTEXT},
    {"event-filter", required_argument, NULL, FG_FOLD_OPT_EVENT_FILTER},
    {"every", required_argument, NULL, FG_FOLD_OPT_EVERY},
    {"help", no_argument, NULL, 'h'},
    {"inline", no_argument, NULL, FG_FOLD_ARG_INLINE},
    {"input", required_argument, NULL, FG_FOLD_OPT_INPUT},
    {"jit", no_argument, NULL, FG_FOLD_ARG_JIT},
    {"kernel", no_argument, NULL, FG_FOLD_ARG_KERNEL},
    {"only-comm", required_argument, NULL, FG_FOLD_ARG_ONLY_COMM},
    {"only-pid", required_argument, NULL, FG_FOLD_ARG_ONLY_PID},
    {"output", required_argument, NULL, 'o'},
    {"pid", no_argument, NULL, FG_FOLD_OPT_PID},
    {"samples", no_argument, NULL, FG_FOLD_OPT_SAMPLES},
    {"skip-after", required_argument, NULL, FG_FOLD_ARG_SKIP_AFTER},
    {"srcline", no_argument, NULL, FG_FOLD_ARG_SRCLINE},
    {"state", required_argument, NULL, FG_FOLD_ARG_STATE},
    {"tid", no_argument, NULL, FG_FOLD_OPT_TID},
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},
    {"wall", no_argument, NULL, FG_FOLD_ARG_WALL},
    {NULL, 0, NULL, 0},
};

/* what was left out of the profile and why; the side-band kinds with -v */
static void report(const struct fg_fold *f, bool verbose)
{
	const struct fg_fold_stats *st = fg_fold_stats(f);

	if (st->lost_records)
		fg_warnx("perf lost %llu event%s (%llu PERF_RECORD_LOST record%s in the input)",
			 (unsigned long long)st->lost, st->lost == 1 ? "" : "s",
			 (unsigned long long)st->lost_records, st->lost_records == 1 ? "" : "s");
	if (st->refused)
		fg_warnx("left out %llu sample%s or line%s whose count would pass 2^64-1",
			 (unsigned long long)st->refused, st->refused == 1 ? "" : "s",
			 st->refused == 1 ? "" : "s");
	if (st->long_lines)
		fg_warnx("skipped %llu line%s of %zu bytes or more; %llu sample%s left out",
			 (unsigned long long)st->long_lines, st->long_lines == 1 ? "" : "s",
			 FG_FOLD_MAX_LINE, (unsigned long long)st->damaged,
			 st->damaged == 1 ? "" : "s");
	if (!verbose)
		return;
	if (st->sideband) {
		struct fg_buf b = FG_BUF_INIT;

		for (size_t i = 0; i < st->n_sideband_kinds; i++)
			fg_buf_addf(&b, "%s%s %llu", i ? ", " : "", st->sideband_kinds[i].name,
				    (unsigned long long)st->sideband_kinds[i].n);
		fg_warnx("skipped %llu side-band record%s: %s", (unsigned long long)st->sideband,
			 st->sideband == 1 ? "" : "s", b.data);
		fg_buf_release(&b);
	}
	if (st->extra_lines)
		fg_warnx("skipped %llu line%s perf script adds to samples (insn, srccode, ...)",
			 (unsigned long long)st->extra_lines, st->extra_lines == 1 ? "" : "s");
}

/* --every: the folded stacks of each time window into DIR/START.folded */
struct windows {
	struct fg_window w;
	const char *dir;
	struct fg_fold *f;
	uint64_t written; /* windows written so far */
	bool verbose;
};

static int write_window(struct windows *ws, uint64_t start)
{
	struct fg_buf path = FG_BUF_INIT;
	struct fg_atomic a;
	int err;

	fg_window_path(&path, ws->dir, start, ".folded");
	err = fg_atomic_open(&a, path.data, 0);
	if (err == 0 && (err = fg_fold_write(ws->f, a.fp)) != 0)
		fg_atomic_abort(&a);
	else if (err == 0)
		err = fg_atomic_commit(&a);
	if (err)
		fg_warne(-err, "cannot write '%s'", path.data);
	else
		ws->written++;
	if (err == 0 && ws->verbose)
		fg_warnx("wrote '%s': %zu stacks", path.data, fg_fold_count(ws->f));
	fg_fold_clear(ws->f);
	fg_buf_release(&path);
	return err;
}

/* before each sample: a sample past the window being filled completes it */
static int window_hook(void *ctx, const char *line, size_t len)
{
	struct windows *ws = ctx;
	struct fg_ps_header h;
	uint64_t t = 0, closed, tod, clk;

	if (line[0] == '#') {
		if (fg_psheader_parse_reftime(line, len, &tod, &clk) == 0) {
			ws->w.have_ref = true;
			ws->w.ref_offset = (int64_t)(tod - clk);
		}
		return 0;
	}
	if (fg_ps_parse_header(line, len, &h) == FG_PS_SIDEBAND)
		return 0; /* a side-band record, not a sample */
	bool timed = fg_psheader_time(line, len, &t) == 0;
	if (fg_window_next(&ws->w, timed, t, &closed) && fg_fold_count(ws->f))
		return write_window(ws, closed);
	return 0;
}

/* one run: the options, the fold, where it goes */
struct run {
	struct fg_fold_args a;
	struct windows ws;
	struct fg_atomic af; /* -o FILE */
	FILE *out;
	struct fg_fold *f;
	int status;
};

static void parse_options(struct fg_fold_args *a, int argc, char **argv)
{
	char why[256];
	int c;

	while ((c = getopt_long(argc, argv, FG_FOLD_SHORTOPTS, longopts, NULL)) != -1) {
		fg_help_or_version(c, usage_text);
		fg_usage_check(fg_fold_arg(a, c, optarg, why, sizeof(why)), usage_text, why);
	}
	fg_usage_check(fg_fold_args_check(a, why, sizeof(why)), usage_text, why);
}

/* the directory of --every, or the -o file, and the fold feeding them */
static void open_output(struct run *r)
{
	const char *output = r->a.output;

	r->ws.w.every_ns = r->a.every_ns;
	if (r->a.dir) {
		if (mkdir(r->a.dir, 0777) < 0 && errno != EEXIST)
			fg_die("cannot create '%s'", r->a.dir);
		r->ws.dir = r->a.dir;
	}
	/* -o: all or nothing, through a temporary file renamed at the end */
	r->out = stdout;
	if (output) {
		int err = fg_atomic_open(&r->af, output, 0);

		if (err < 0) {
			errno = -err;
			fg_die("cannot open '%s'", output);
		}
		r->out = r->af.fp;
	}
	static char outbuf[1 << 20];
	setvbuf(r->out, outbuf, _IOFBF, sizeof(outbuf));

	r->f = fg_fold_new(&r->a.fold, fg_log_warnx, NULL);
	if (r->ws.dir) {
		r->ws.f = r->f;
		r->ws.verbose = r->a.verbose;
		fg_fold_set_line_hook(r->f, window_hook, &r->ws);
	}
}

/* Fold every input ("-" or none: standard input).  False when a mix of profiles spoils it all. */
static bool fold_inputs(struct run *r, char **paths, int nfiles)
{
	for (int i = 0; i < (nfiles ? nfiles : 1); i++) {
		const char *path = nfiles ? paths[i] : "-";
		bool is_stdin = strcmp(path, "-") == 0;
		int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			fg_warn("cannot open '%s'", path);
			r->status = FG_EXIT_FAIL;
			continue;
		}
		int err = fg_fold_read(r->f, fd, is_stdin ? "<stdin>" : path);
		if (!is_stdin)
			close(fd);
		if (err < 0) {
			r->status = FG_EXIT_FAIL;
			/* a mix of profiles spoils the whole result */
			if (err == -EINVAL)
				return false;
		}
	}
	return true;
}

/* what was folded, and what not; no stacks at all is a failure */
static void summary(struct run *r)
{
	const struct fg_fold_opts *o = &r->a.fold;
	const struct windows *ws = &r->ws;
	struct fg_fold *f = r->f;
	bool verbose = r->a.verbose;
	const struct fg_fold_stats *st = fg_fold_stats(f);

	report(f, verbose);
	if (st->other_events)
		fg_warnx("folded only '%s' events%s; skipped %llu samples of other events "
			 "(choose with --event-filter)",
			 st->event, st->event_defaulted ? " (the first seen)" : "",
			 (unsigned long long)st->other_events);
	else if (verbose && st->event)
		fg_warnx("folded '%s' events", st->event);
	if (st->not_inlined)
		fg_warnx("--inline: %llu frame%s left as they were (see above)",
			 (unsigned long long)st->not_inlined, st->not_inlined == 1 ? "" : "s");
	fg_warn_names_cut();
	if (st->bad_lines)
		fg_warnx("skipped %llu unrecognized line%s", (unsigned long long)st->bad_lines,
			 st->bad_lines == 1 ? "" : "s");
	if (verbose)
		fg_warnx("%llu samples folded into %zu stacks; "
			 "%llu left out by --only-pid/--only-comm",
			 (unsigned long long)st->samples, fg_fold_count(f),
			 (unsigned long long)st->filtered);
	if (verbose && o->wall)
		fg_warnx(
		    "--wall: %llu of them waits (offcpu-time), ending in " FG_FOLD_OFFCPU_FRAME,
		    (unsigned long long)st->waits);
	if (verbose && o->n_states)
		fg_warnx("--state: left out %llu samples of other task states or none",
			 (unsigned long long)st->state_filtered);
	if (ws->w.late)
		fg_warnx("%llu samples came after their window was written; they are counted in "
			 "the next one",
			 (unsigned long long)ws->w.late);
	if (ws->w.untimed)
		fg_warnx("%llu samples without a time were put in the window being filled",
			 (unsigned long long)ws->w.untimed);
	if (st->lines && !fg_fold_count(f) && !ws->written) {
		fg_warnx("no stacks in %llu line%s of input%s", (unsigned long long)st->lines,
			 st->lines == 1 ? "" : "s",
			 st->bad_lines || st->other_events || st->filtered || st->state_filtered ||
				 st->refused || st->long_lines
			     ? " (see above)"
			 : st->sideband ? ": only side-band records"
					: ": no samples");
		r->status = FG_EXIT_FAIL;
	}
}

/* the last window, or the whole profile: to -o's file (committed) or standard output */
static void write_output(struct run *r)
{
	const char *output = r->a.output;
	struct fg_fold *f = r->f;
	int wr = r->ws.dir
		     ? (fg_fold_count(f) ? write_window(&r->ws, fg_window_start(&r->ws.w)) : 0)
		     : fg_fold_write(f, r->out);

	if (output && !fg_fold_count(f) && r->status != FG_EXIT_OK) {
		fg_atomic_abort(&r->af); /* an existing file is worth more than an empty one */
	} else if (output) {
		if (wr == 0)
			wr = fg_atomic_commit(&r->af);
		else
			fg_atomic_abort(&r->af);
		if (wr != 0) {
			fg_warne(-wr, "cannot write '%s'", output);
			r->status = FG_EXIT_FAIL;
		}
		if (fg_close_stdout() != FG_EXIT_OK)
			r->status = FG_EXIT_FAIL;
	} else if (fg_close_stdout() != FG_EXIT_OK || wr != 0) {
		r->status = FG_EXIT_FAIL;
	}
}

/* the exit status, everything released */
static int release(struct run *r)
{
	if (r->status != FG_EXIT_OK && r->a.output && r->af.fp)
		fg_atomic_abort(&r->af);
	fg_fold_free(r->f);
	fg_fold_args_release(&r->a);
	return r->status;
}

int main(int argc, char **argv)
{
	struct run r = {.a = FG_FOLD_ARGS_INIT, .status = FG_EXIT_OK};

	fg_set_progname(argv[0]);
	parse_options(&r.a, argc, argv);
	open_output(&r);
	if (fold_inputs(&r, argv + optind, argc - optind)) {
		summary(&r);
		write_output(&r);
	}
	return release(&r);
}
