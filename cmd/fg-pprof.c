// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-pprof: what fg-fold reads in (perf script text, folded stacks, bpftrace
 * maps); a gzipped pprof profile out, or one per time window.  See fg-pprof(1).
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
#include "fg/foldopts.h"
#include "fg/pprof_args.h"
#include "fg/pprof_read.h"
#include "fg/window.h"

static const char usage_text[] =
    "usage: fg-pprof [-v] [-F hz] [--every seconds] [--event-filter event]\n"
    "                [--input perf|folded|bpftrace] [-o file|dir] [file ...]\n"
    "       fg-pprof -h | -V\n"
    "\n"
    "Read perf script text (perf's or fg-sym's), folded stacks or bpftrace maps (files,\n"
    "or standard input) and write a gzipped pprof profile, for go tool pprof, Grafana\n"
    "Pyroscope and Parca.\n"
    "\n"
    "  -F, --freq HZ           samples a second per CPU (default: from the input's header)\n"
    "      --every SECONDS     one profile per window of SECONDS of the samples' time,\n"
    "                          written into the directory -o names, as START.pb.gz\n"
    "      --event-filter EVENT\n"
    "                          the CPU event (default: the first one seen)\n"
    "      --input FORMAT      read perf, folded or bpftrace input (default: detect)\n"
    "  -o, --output FILE|DIR   write to FILE (default: standard output), or with\n"
    "                          --every into DIR\n"
    "  -v, --verbose           report the samples, windows and frequency\n"
    "  -h, --help              print this help and exit\n"
    "  -V, --version           print the version and exit\n";

static const struct option longopts[] = {
    {"event-filter", required_argument, NULL, FG_FOLD_OPT_EVENT_FILTER},
    {"every", required_argument, NULL, FG_FOLD_OPT_EVERY},
    {"freq", required_argument, NULL, 'F'},
    {"help", no_argument, NULL, 'h'},
    {"input", required_argument, NULL, FG_FOLD_OPT_INPUT},
    {"output", required_argument, NULL, 'o'},
    {"verbose", no_argument, NULL, 'v'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

struct out {
	const char *path; /* the file, or the directory with --every; NULL: stdout */
	bool windows;
	bool verbose;
};

static int emit(void *ctx, const struct fg_pprof_window *w)
{
	struct out *o = ctx;
	struct fg_buf path = FG_BUF_INIT;
	struct fg_atomic a;
	int err;

	if (!o->path) {
		err = fg_pprof_write(w->profile, w->meta, stdout);
		if (err)
			fg_warne(-err, "cannot write the profile");
		return err;
	}
	if (o->windows)
		fg_window_path(&path, o->path, w->start_ns, ".pb.gz");
	else
		fg_buf_addstr(&path, o->path);
	err = fg_atomic_open(&a, path.data, 0);
	if (err == 0) {
		err = fg_pprof_write(w->profile, w->meta, a.fp);
		if (err)
			fg_atomic_abort(&a);
		else
			err = fg_atomic_commit(&a);
	}
	if (err)
		fg_warne(-err, "cannot write '%s'", path.data);
	else if (o->verbose && o->windows)
		fg_warnx("wrote '%s': %llu samples", path.data, (unsigned long long)w->samples);
	fg_buf_release(&path);
	return err;
}

static void report(const struct fg_pprof_stats *st, bool verbose, bool windows)
{
	if (st->other_events)
		fg_warnx(
		    "kept only '%s' (and off-CPU) samples; skipped %llu samples of other events "
		    "(choose with --event-filter)",
		    st->event, (unsigned long long)st->other_events);
	if (st->bad_lines)
		fg_warnx("skipped %llu unrecognized line%s", (unsigned long long)st->bad_lines,
			 st->bad_lines == 1 ? "" : "s");
	if (st->freq_unknown)
		fg_warnx(
		    "the sampling frequency is not known (no header from fg-sym or perf script "
		    "--header, no -F): no cpu/nanoseconds, the profile counts samples");
	if (st->late)
		fg_warnx("%llu samples came after their window was written; they are counted in "
			 "the next one",
			 (unsigned long long)st->late);
	if (windows && st->untimed)
		fg_warnx("%llu samples without a time were put in the window being filled",
			 (unsigned long long)st->untimed);
	if (st->no_frames)
		fg_warnx("%llu samples had no frame; each got one named '[unknown]'",
			 (unsigned long long)st->no_frames);
	if (verbose) {
		fg_warnx("%llu samples%s%s, %llu profile%s written, %llu side-band records",
			 (unsigned long long)st->samples, st->event ? " of " : "",
			 st->event ? st->event : "", (unsigned long long)st->windows,
			 st->windows == 1 ? "" : "s", (unsigned long long)st->sideband);
		if (st->freq > 0)
			fg_warnx("%g samples a second: %.0f ns a sample", st->freq, 1e9 / st->freq);
	}
}

static void parse_options(struct fg_pprof_args *a, int argc, char **argv)
{
	char why[256];
	int c;

	while ((c = getopt_long(argc, argv, FG_PPROF_SHORTOPTS, longopts, NULL)) != -1) {
		fg_help_or_version(c, usage_text);
		fg_usage_check(fg_pprof_arg(a, c, optarg, why, sizeof(why)), usage_text, why);
	}
	fg_usage_check(fg_pprof_args_check(a, why, sizeof(why)), usage_text, why);
}

/* Where the profiles go: the directory of --every, made if need be, or not a terminal. */
static void check_output(const struct out *out)
{
	if (out->windows) {
		struct stat st;

		if (mkdir(out->path, 0777) < 0 && errno != EEXIST)
			fg_die("cannot create '%s'", out->path);
		if (stat(out->path, &st) < 0 || !S_ISDIR(st.st_mode))
			fg_diex("cannot write windows into '%s': not a directory", out->path);
	} else if (!out->path && isatty(STDOUT_FILENO)) {
		fg_diex("refusing to write a binary profile to a terminal: redirect standard "
			"output or use -o FILE");
	}
}

/*
 * Read every input ("-" or none: standard input) into r, *status failed if
 * one fails.  False when the result is spoiled and nothing is to be written.
 */
static bool read_inputs(struct fg_pprof_reader *r, char **paths, int nfiles, int *status)
{
	int err = 0;

	for (int i = 0; i < (nfiles ? nfiles : 1) && err != -EIO; i++) {
		const char *path = nfiles ? paths[i] : "-";
		bool is_stdin = strcmp(path, "-") == 0;
		int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			fg_warn("cannot open '%s'", path);
			*status = FG_EXIT_FAIL;
			continue;
		}
		err = fg_pprof_reader_read(r, fd, is_stdin ? "<stdin>" : path);
		if (!is_stdin)
			close(fd);
		if (err < 0) {
			*status = FG_EXIT_FAIL;
			/* an overflow, a differential profile or a failed write spoils the result
			 */
			if (err != -EMEDIUMTYPE)
				return false;
		}
	}
	return true;
}

int main(int argc, char **argv)
{
	struct fg_pprof_args a = FG_PPROF_ARGS_INIT;
	struct out out;
	int status = FG_EXIT_OK;

	fg_set_progname(argv[0]);
	parse_options(&a, argc, argv);
	out = (struct out){.path = a.output, .windows = a.windows, .verbose = a.verbose};
	check_output(&out);

	struct fg_pprof_reader *r = fg_pprof_reader_new(&a.reader, emit, &out, fg_log_warnx, NULL);
	if (read_inputs(r, argv + optind, argc - optind, &status)) {
		if (fg_pprof_reader_finish(r) != 0)
			status = FG_EXIT_FAIL;
		report(fg_pprof_reader_stats(r), out.verbose, out.windows);
	}
	if (!out.path && fg_close_stdout() != FG_EXIT_OK)
		status = FG_EXIT_FAIL;
	fg_pprof_reader_free(r);
	return status;
}
