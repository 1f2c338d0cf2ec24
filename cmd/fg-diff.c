// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-diff: two folded profiles in, one differential profile out
 * ("STACK COUNT1 COUNT2"), as difffolded.pl.  See fg-diff(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg/atomicfile.h"
#include "fg/diag.h"
#include "fg/diff.h"

static const char usage_text[] =
    "usage: fg-diff [-ns] [-o file] before after\n"
    "       fg-diff -h | -V\n"
    "\n"
    "Compare two folded profiles: print 'STACK COUNT1 COUNT2' for every stack of\n"
    "either ('-' reads standard input), sorted, for fg-svg to draw in red and blue.\n"
    "\n"
    "  -n, --normalize      scale the first profile's counts to the second's total\n"
    "  -s, --strip-hex      replace hexadecimal numbers (0x...) in stacks with '0x...'\n"
    "  -o, --output FILE    write to FILE instead of standard output\n"
    "  -h, --help           print this help and exit\n"
    "  -V, --version        print the version and exit\n";

static const struct option longopts[] = {
    {"help", no_argument, NULL, 'h'},	      {"normalize", no_argument, NULL, 'n'},
    {"output", required_argument, NULL, 'o'}, {"strip-hex", no_argument, NULL, 's'},
    {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
};

static noreturn void usage_error(const char *msg)
{
	fg_usage_error(usage_text, msg ? "%s" : NULL, msg);
}

/* The two profiles ("-": standard input).  False, said, when one cannot be read. */
static bool read_profiles(struct fg_diff *d, char **paths)
{
	for (int i = 0; i < 2; i++) {
		const char *path = paths[i];
		bool is_stdin = strcmp(path, "-") == 0;
		int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			fg_warn("cannot open '%s'", path);
			return false;
		}
		int r = fg_diff_read(d, i, fd, is_stdin ? "<stdin>" : path);
		if (!is_stdin)
			close(fd);
		if (r < 0)
			return false;
	}
	return true;
}

/* the differential profile to -o FILE (all or nothing) or standard output; false on an error */
static bool write_profile(struct fg_diff *d, const char *output)
{
	struct fg_atomic a;
	int err, werr;

	if (!output)
		return fg_diff_write(d, stdout) == 0 && fg_close_stdout() == FG_EXIT_OK;
	/* all or nothing, through a temporary file renamed at the end */
	err = fg_atomic_open(&a, output, 0);
	if (err < 0) {
		errno = -err;
		fg_die("cannot open '%s'", output);
	}
	/* a write error shows at the commit too, which then replaces nothing */
	werr = fg_diff_write(d, a.fp);
	err = fg_atomic_commit(&a);
	if (err == 0)
		err = werr;
	if (err < 0) {
		fg_warne(-err, "write error");
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	struct fg_diff_opts o = {.normalize = false};
	const char *output = NULL;
	int c, status = FG_EXIT_OK;

	fg_set_progname(argv[0]);
	while ((c = getopt_long(argc, argv, "hno:sV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			fputs(usage_text, stdout);
			return fg_close_stdout();
		case 'n':
			o.normalize = true;
			break;
		case 'o':
			output = optarg;
			break;
		case 's':
			o.strip_hex = true;
			break;
		case 'V':
			fg_print_version();
			return fg_close_stdout();
		default:
			usage_error(NULL);
		}
	}
	if (argc - optind != 2)
		usage_error(argc - optind < 2 ? "two profiles to compare: BEFORE AFTER"
					      : "too many operands");
	if (strcmp(argv[optind], "-") == 0 && strcmp(argv[optind + 1], "-") == 0)
		usage_error("only one of the two profiles can be standard input");

	struct fg_diff *d = fg_diff_new(&o, fg_log_warnx, NULL);
	if (!read_profiles(d, argv + optind)) {
		fg_diff_free(d);
		return FG_EXIT_FAIL;
	}
	const struct fg_diff_stats *st = fg_diff_stats(d);
	if (st->bad_lines) {
		fg_warnx("skipped %llu malformed line%s", (unsigned long long)st->bad_lines,
			 st->bad_lines == 1 ? "" : "s");
		status = FG_EXIT_FAIL;
	}
	if (!write_profile(d, output))
		status = FG_EXIT_FAIL;
	fg_diff_free(d);
	return status;
}
