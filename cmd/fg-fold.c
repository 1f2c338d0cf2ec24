// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-fold: perf script text, folded stacks or bpftrace maps in; folded stacks out.
 * A drop-in for stackcollapse-perf.pl.  See fg-fold(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/atomicfile.h"
#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/fold.h"
#include "fg/perfscript.h"
#include "fg/psheader.h"
#include "fg/util.h"
#include "fg/window.h"

static const char usage_text[] =
    "usage: fg-fold [--pid | --tid] [--kernel] [--jit] [--all] [--addrs]\n"
    "               [--event-filter EVENT] [--samples] [--srcline] [--inline]\n"
    "               [--context] [--skip-after FUNC] [--only-pid PID[,PID...]]\n"
    "               [--only-comm NAME] [--input perf|folded|bpftrace] [-o FILE] [-v]\n"
    "               [FILE ...]\n"
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
    "  --input FORMAT          read perf, folded or bpftrace input (default: detect)\n"
    "  -o, --output FILE       write to FILE instead of standard output\n"
    "  --every SECONDS         one profile per window of SECONDS of the samples' time\n"
    "                          (perf script input), into the directory -o names,\n"
    "                          as START.folded\n"
    "  -v, --verbose           report the event folded and what was skipped\n"
    "  -h, --help              print this help and exit\n"
    "  -V, --version           print the version and exit\n";

enum {
	OPT_PID = 256,
	OPT_TID,
	OPT_KERNEL,
	OPT_JIT,
	OPT_ALL,
	OPT_ADDRS,
	OPT_EVENT_FILTER,
	OPT_SAMPLES,
	OPT_SRCLINE,
	OPT_INLINE,
	OPT_CONTEXT,
	OPT_SKIP_AFTER,
	OPT_ONLY_PID,
	OPT_ONLY_COMM,
	OPT_INPUT,
	OPT_EVERY,
};

static const struct option longopts[] = {
    {"addrs", no_argument, NULL, OPT_ADDRS},
    {"all", no_argument, NULL, OPT_ALL},
    {"context", no_argument, NULL, OPT_CONTEXT},
    {"event-filter", required_argument, NULL, OPT_EVENT_FILTER},
    {"every", required_argument, NULL, OPT_EVERY},
    {"help", no_argument, NULL, 'h'},
    {"inline", no_argument, NULL, OPT_INLINE},
    {"input", required_argument, NULL, OPT_INPUT},
    {"jit", no_argument, NULL, OPT_JIT},
    {"kernel", no_argument, NULL, OPT_KERNEL},
    {"only-comm", required_argument, NULL, OPT_ONLY_COMM},
    {"only-pid", required_argument, NULL, OPT_ONLY_PID},
    {"output", required_argument, NULL, 'o'},
    {"pid", no_argument, NULL, OPT_PID},
    {"samples", no_argument, NULL, OPT_SAMPLES},
    {"skip-after", required_argument, NULL, OPT_SKIP_AFTER},
    {"srcline", no_argument, NULL, OPT_SRCLINE},
    {"tid", no_argument, NULL, OPT_TID},
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static noreturn void usage_error(const char *fmt, const char *arg)
{
	if (fmt)
		fg_warnx(fmt, arg);
	fputs(usage_text, stderr);
	exit(FG_EXIT_USAGE);
}

static void log_msg(void *ctx, const char *msg)
{
	(void)ctx;
	fg_warnx("%s", msg);
}

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

struct lists {
	const char **skip_after, **comms;
	size_t n_skip_after, a_skip_after, n_comms, a_comms;
	uint64_t *pids;
	size_t n_pids, a_pids;
};

static void add_pids(struct lists *l, const char *arg)
{
	char *copy = fg_xstrdup(arg), *save = NULL;

	for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (fg_parse_u64(t, 0, UINT32_MAX, &v) != 0)
			usage_error("invalid pid '%s'", t);
		FG_ALLOC_GROW(l->pids, l->n_pids + 1, l->a_pids);
		l->pids[l->n_pids++] = v;
	}
	free(copy);
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
	err = fg_atomic_open(&a, path.data);
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
		if (fg_ps_parse_reftime_comment(line, len, &tod, &clk) == 0) {
			ws->w.have_ref = true;
			ws->w.ref_offset = (int64_t)(tod - clk);
		}
		return 0;
	}
	if (fg_ps_parse_header(line, len, &h) == FG_PS_SIDEBAND)
		return 0; /* a side-band record, not a sample */
	bool timed = fg_ps_header_time(line, len, &t) == 0;
	if (fg_window_next(&ws->w, timed, t, &closed) && fg_fold_count(ws->f))
		return write_window(ws, closed);
	return 0;
}

int main(int argc, char **argv)
{
	struct fg_fold_opts o = {.input = FG_FOLD_AUTO};
	struct lists l = {0};
	struct windows ws = {.dir = NULL};
	const char *output = NULL;
	double secs;
	bool verbose = false;
	int c, status = FG_EXIT_OK;

	fg_set_progname(argv[0]);
	while ((c = getopt_long(argc, argv, "ho:vV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return fg_close_stdout();
		case 'o':
			output = optarg;
			break;
		case 'v':
			verbose = true;
			break;
		case 'V':
			fg_print_version();
			return fg_close_stdout();
		case OPT_ADDRS:
			o.include_addrs = true;
			break;
		case OPT_ALL:
			o.annotate_kernel = o.annotate_jit = true;
			break;
		case OPT_CONTEXT:
			o.inline_context = o.inline_frames = true;
			break;
		case OPT_EVERY:
			if (fg_parse_double(optarg, 1e-3, 1e9, &secs) != 0)
				usage_error("invalid window length '%s' (seconds, at least 0.001)",
					    optarg);
			ws.w.every_ns = (uint64_t)llround(secs * 1e9);
			break;
		case OPT_EVENT_FILTER:
			if (!*optarg)
				usage_error("invalid event name '%s'", optarg);
			o.event_filter = optarg;
			break;
		case OPT_INLINE:
			o.inline_frames = true;
			break;
		case OPT_INPUT: {
			int in = fg_fold_input_parse(optarg);

			if (in <= 0)
				usage_error("unknown input format '%s' (perf, folded or bpftrace)",
					    optarg);
			o.input = (enum fg_fold_input)in;
			break;
		}
		case OPT_JIT:
			o.annotate_jit = true;
			break;
		case OPT_KERNEL:
			o.annotate_kernel = true;
			break;
		case OPT_ONLY_COMM:
			FG_ALLOC_GROW(l.comms, l.n_comms + 1, l.a_comms);
			l.comms[l.n_comms++] = optarg;
			break;
		case OPT_ONLY_PID:
			add_pids(&l, optarg);
			break;
		case OPT_PID:
			o.include_pid = true;
			break;
		case OPT_SAMPLES:
			o.count_samples = true;
			break;
		case OPT_SKIP_AFTER:
			FG_ALLOC_GROW(l.skip_after, l.n_skip_after + 1, l.a_skip_after);
			l.skip_after[l.n_skip_after++] = optarg;
			break;
		case OPT_SRCLINE:
			o.srcline = true;
			break;
		case OPT_TID:
			o.include_tid = true;
			break;
		default:
			usage_error(NULL, NULL);
		}
	}
	o.skip_after = l.skip_after;
	o.n_skip_after = l.n_skip_after;
	o.only_comms = l.comms;
	o.n_only_comms = l.n_comms;
	o.only_pids = l.pids;
	o.n_only_pids = l.n_pids;

	if (ws.w.every_ns) {
		if (!output)
			usage_error("--every needs -o DIR, the directory of the windows%s", "");
		if (o.input != FG_FOLD_AUTO && o.input != FG_FOLD_PERF)
			usage_error("--every reads perf script text, not %s input",
				    fg_fold_input_name(o.input));
		o.input = FG_FOLD_PERF;
		if (mkdir(output, 0777) < 0 && errno != EEXIST)
			fg_die("cannot create '%s'", output);
		ws.dir = output;
		output = NULL;
	}
	/* -o: all or nothing, through a temporary file renamed at the end */
	struct fg_atomic af = {0};
	FILE *out = stdout;
	if (output) {
		int r = fg_atomic_open(&af, output);

		if (r < 0) {
			errno = -r;
			fg_die("cannot open '%s'", output);
		}
		out = af.fp;
	}
	static char outbuf[1 << 20];
	setvbuf(out, outbuf, _IOFBF, sizeof(outbuf));

	struct fg_fold *f = fg_fold_new(&o, log_msg, NULL);
	if (ws.dir) {
		ws.f = f;
		ws.verbose = verbose;
		fg_fold_set_line_hook(f, window_hook, &ws);
	}
	int nfiles = argc - optind;

	for (int i = 0; i < (nfiles ? nfiles : 1); i++) {
		const char *path = nfiles ? argv[optind + i] : "-";
		bool is_stdin = strcmp(path, "-") == 0;
		int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			fg_warn("cannot open '%s'", path);
			status = FG_EXIT_FAIL;
			continue;
		}
		int r = fg_fold_read(f, fd, is_stdin ? "<stdin>" : path);
		if (!is_stdin)
			close(fd);
		if (r < 0) {
			status = FG_EXIT_FAIL;
			/* a mix of profiles spoils the whole result */
			if (r == -EINVAL)
				goto out;
		}
	}

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
	if (st->bad_lines)
		fg_warnx("skipped %llu unrecognized line%s", (unsigned long long)st->bad_lines,
			 st->bad_lines == 1 ? "" : "s");
	if (verbose)
		fg_warnx("%llu samples folded into %zu stacks; "
			 "%llu left out by --only-pid/--only-comm",
			 (unsigned long long)st->samples, fg_fold_count(f),
			 (unsigned long long)st->filtered);
	if (ws.w.late)
		fg_warnx("%llu samples came after their window was written; they are counted in "
			 "the next one",
			 (unsigned long long)ws.w.late);
	if (ws.w.untimed)
		fg_warnx("%llu samples without a time were put in the window being filled",
			 (unsigned long long)ws.w.untimed);
	if (st->lines && !fg_fold_count(f) && !ws.written) {
		fg_warnx("no stacks in %llu line%s of input%s", (unsigned long long)st->lines,
			 st->lines == 1 ? "" : "s",
			 st->bad_lines || st->other_events || st->filtered || st->refused ||
				 st->long_lines
			     ? " (see above)"
			 : st->sideband ? ": only side-band records"
					: ": no samples");
		status = FG_EXIT_FAIL;
	}
	int wr = ws.dir ? (fg_fold_count(f) ? write_window(&ws, fg_window_start(&ws.w)) : 0)
			: fg_fold_write(f, out);
	if (output && !fg_fold_count(f) && status != FG_EXIT_OK) {
		fg_atomic_abort(&af); /* an existing file is worth more than an empty one */
	} else if (output) {
		if (wr == 0)
			wr = fg_atomic_commit(&af);
		else
			fg_atomic_abort(&af);
		if (wr != 0) {
			fg_warne(-wr, "cannot write '%s'", output);
			status = FG_EXIT_FAIL;
		}
		if (fg_close_stdout() != FG_EXIT_OK)
			status = FG_EXIT_FAIL;
	} else if (fg_close_stdout() != FG_EXIT_OK || wr != 0) {
		status = FG_EXIT_FAIL;
	}
out:
	if (status != FG_EXIT_OK && output && af.fp)
		fg_atomic_abort(&af);
	fg_fold_free(f);
	free(l.skip_after);
	free(l.comms);
	free(l.pids);
	return status;
}
