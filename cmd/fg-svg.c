// SPDX-License-Identifier: BSD-2-Clause
/* fg-svg: folded stacks in, an interactive flame graph SVG out. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fg/atomicfile.h"
#include "fg/diag.h"
#include "fg/flame.h"
#include "fg/hash.h"
#include "fg/palette.h"
#include "fg/safeio.h"
#include "fg/svg.h"
#include "fg/svg_args.h"

static const char usage_text[] =
    "usage: fg-svg [options] [-o graph.svg] [FILE...]\n"
    "Draw folded stacks (\"frame;frame;frame COUNT\", or two counts for a\n"
    "differential graph) from FILEs or standard input as an interactive SVG flame graph.\n"
    "\n"
    "  --title TEXT        title (default \"Flame Graph\", \"Icicle Graph\", \"Flame Chart\")\n"
    "  --subtitle TEXT     second line under the title\n"
    "  --width N           image width in pixels (default: fill the window, laid out at 1200)\n"
    "  --height N          height of each frame (default 16)\n"
    "  --minwidth N[%]     omit frames narrower than N pixels, or N% of the total (default 0.1)\n"
    "  --fonttype FONT     font family (default \"Verdana\")\n"
    "  --fontsize N        font size (default 12)\n"
    "  --fontwidth N       average character width relative to the font size (default 0.59)\n"
    "  --countname NAME    what the counts are (default \"samples\")\n"
    "  --nametype NAME     what the names are (default \"Function:\")\n"
    "  --colors PALETTE    hot (default), mem, io, wakeup, chain, java, js, perl, red,\n"
    "                      green, blue, aqua, yellow, purple, orange\n"
    "  --bgcolors COLOR    background: yellow, blue, green, grey or #rrggbb\n"
    "  --hash              colour by a hash of the name's first characters (the default)\n"
    "  --deterministic     colour by a hash of the whole name\n"
    "  --random            colour at random\n"
    "  --cp                keep colours consistent across graphs in ./palette.map\n"
    "  --reverse           reverse the stacks: merge from the leaves\n"
    "  --inverted          icicle graph: the root at the top\n"
    "  --flamechart        flame chart: keep the input order instead of sorting\n"
    "  --negate            switch the differential hues (blue for more, red for less)\n"
    "  --notes TEXT        a note kept in the SVG as a comment\n"
    "  --total N           the total count the full width stands for\n"
    "  --factor N          multiply the counts shown by N\n"
    "  --nameattr FILE     per-name attributes: NAME<TAB>key=value<TAB>...\n"
    "  --encoding NAME     declare this character encoding in the SVG\n"
    "  --base FUNC         re-root every stack at its first frame FUNC (repeatable)\n"
    "  -o, --output FILE   write FILE, whole or not at all (default: standard output)\n"
    "  -h, --help          show this help\n"
    "  -V, --version       show the version\n";

static const struct option longopts[] = {
    {"base", required_argument, NULL, FG_SVG_ARG_BASE},
    {"bgcolors", required_argument, NULL, FG_SVG_ARG_BGCOLORS},
    {"colors", required_argument, NULL, FG_SVG_ARG_COLORS},
    {"countname", required_argument, NULL, FG_SVG_ARG_COUNTNAME},
    {"cp", no_argument, NULL, FG_SVG_ARG_CP},
    {"deterministic", no_argument, NULL, FG_SVG_ARG_DETERMINISTIC},
    {"encoding", required_argument, NULL, FG_SVG_ARG_ENCODING},
    {"factor", required_argument, NULL, FG_SVG_ARG_FACTOR},
    {"flamechart", no_argument, NULL, FG_SVG_ARG_FLAMECHART},
    {"fontsize", required_argument, NULL, FG_SVG_ARG_FONTSIZE},
    {"fonttype", required_argument, NULL, FG_SVG_ARG_FONTTYPE},
    {"fontwidth", required_argument, NULL, FG_SVG_ARG_FONTWIDTH},
    {"hash", no_argument, NULL, FG_SVG_ARG_HASH},
    {"height", required_argument, NULL, FG_SVG_ARG_HEIGHT},
    {"help", no_argument, NULL, 'h'},
    {"inverted", no_argument, NULL, FG_SVG_ARG_INVERTED},
    {"minwidth", required_argument, NULL, FG_SVG_ARG_MINWIDTH},
    {"nameattr", required_argument, NULL, FG_SVG_ARG_NAMEATTR},
    {"nametype", required_argument, NULL, FG_SVG_ARG_NAMETYPE},
    {"negate", no_argument, NULL, FG_SVG_ARG_NEGATE},
    {"notes", required_argument, NULL, FG_SVG_ARG_NOTES},
    {"output", required_argument, NULL, 'o'},
    {"random", no_argument, NULL, FG_SVG_ARG_RANDOM},
    {"reverse", no_argument, NULL, FG_SVG_ARG_REVERSE},
    {"subtitle", required_argument, NULL, FG_SVG_ARG_SUBTITLE},
    {"title", required_argument, NULL, FG_SVG_ARG_TITLE},
    {"total", required_argument, NULL, FG_SVG_ARG_TOTAL},
    {"version", no_argument, NULL, 'V'},
    {"width", required_argument, NULL, FG_SVG_ARG_WIDTH},
    {NULL, 0, NULL, 0},
};

#define PALETTE_MAP "palette.map"
/* --nameattr files and palette maps hold a line a name: far less than this */
#define SMALL_FILE_MAX ((size_t)1 << 30)

static const char *shown(const char *path)
{
	return strcmp(path, "-") ? path : "<stdin>";
}

/* The whole of a file named on the command line (a pipe too).  0 or -errno. */
static int read_named(const char *path, char **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = fg_safeio_read_all(fd, SMALL_FILE_MAX, data, len);
	close(fd);
	return err;
}

/* --nameattr FILE: per-name attributes, NAME<TAB>key=value<TAB>... a line. */
static struct fg_hash *load_nameattr(const char *path)
{
	struct fg_hash *m = fg_hash_new(0);
	uint64_t line = 0;
	char *data = NULL;
	size_t len;
	int err = read_named(path, &data, &len);

	if (err < 0)
		fg_warne(-err, "cannot read '%s'", path);
	else if ((err = fg_svg_nameattr_parse(m, data, len, &line)) < 0)
		fg_warnx("'%s' line %llu: expected NAME<TAB>key=value<TAB>...", path,
			 (unsigned long long)line);
	free(data);
	if (err < 0) {
		fg_svg_nameattr_free(m);
		return NULL;
	}
	return m;
}

/* --cp: the colours of ./palette.map, when it exists. */
static struct fg_hash *load_palette_map(void)
{
	struct fg_hash *m = fg_hash_new(0);
	uint64_t bad, first;
	char *data;
	size_t len;
	int err = read_named(PALETTE_MAP, &data, &len);

	if (err == -ENOENT)
		return m;
	if (err < 0) {
		fg_warne(-err, "cannot read '%s'", PALETTE_MAP);
		fg_hash_free(m);
		return NULL;
	}
	fg_palette_map_parse(m, data, len, &bad, &first);
	free(data);
	if (bad)
		fg_warnx(
		    "ignored %llu lines of '%s' that are not NAME->rgb(R,G,B) (the first: line "
		    "%llu)",
		    (unsigned long long)bad, PALETTE_MAP, (unsigned long long)first);
	return m;
}

/* Add every input ("-": standard input) to f.  False, said, on a read error. */
static bool read_inputs(struct fg_flame *f, char *const *paths, int n)
{
	for (int i = 0; i < (n ? n : 1); i++) {
		const char *path = n ? paths[i] : "-";
		bool is_stdin = strcmp(path, "-") == 0;
		int fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
		int err = fd < 0 ? -errno : fg_flame_read(f, fd);

		if (fd >= 0 && !is_stdin)
			close(fd);
		if (err < 0) {
			fg_warne(-err, "cannot read '%s'", shown(path));
			return false;
		}
	}
	return true;
}

/*
 * Headless Chromium takes about a second a megabyte (0.6-1.5 s of CPU) to
 * open an SVG of ours, whatever its shape: past this it seems to hang (the
 * figures are in man fg-svg, CAVEATS).
 */
#define BROWSER_MAX_BYTES (30ull * 1000 * 1000)

/* Say when the SVG is more than a browser opens in good time, and what draws less. */
static void warn_size(const struct fg_flame *f, uint64_t bytes, const char *minwidth)
{
	char hint[160];

	if (bytes <= BROWSER_MAX_BYTES)
		return;
	/* a deep stack is as wide as its root: --minwidth keeps all of it */
	if (f->maxdepth >= f->nframes / 2)
		snprintf(hint, sizeof(hint),
			 "its deepest stack has %u frames, which --minwidth cannot prune; --base "
			 "FUNC cuts the frames below FUNC",
			 f->maxdepth);
	else
		snprintf(hint, sizeof(hint), "a larger --minwidth (now %s) draws fewer frames",
			 minwidth);
	fg_warnx("the SVG is %.0f MB (%zu frames): browsers take about a second a MB to open "
		 "one, and seem to hang past %llu MB; %s",
		 (double)bytes / 1e6, f->nframes,
		 (unsigned long long)(BROWSER_MAX_BYTES / 1000 / 1000), hint);
}

/* one run: the options, the graph, where it goes */
struct run {
	struct fg_svg_args a;
	struct fg_flame *f;
	struct fg_atomic atomic; /* -o FILE */
	FILE *out;
	char **paths; /* the inputs */
	int npaths;
	int64_t written; /* the SVG's bytes, or -errno */
	int status;
};

static void parse_options(struct fg_svg_args *a, int argc, char **argv)
{
	char why[256];
	int c;

	while ((c = getopt_long(argc, argv, FG_SVG_SHORTOPTS, longopts, NULL)) != -1) {
		fg_help_or_version(c, usage_text);
		fg_usage_check(fg_svg_arg(a, c, optarg, why, sizeof(why)), usage_text, why);
	}
	fg_usage_check(fg_svg_args_check(a, why, sizeof(why)), usage_text, why);
}

/* The graph, its colours (--nameattr, --cp) and the output.  False, said, on a failure. */
static bool prepare(struct run *r)
{
	struct fg_svg_opts *so = &r->a.svg;
	const char *output = r->a.output;
	int err;

	if (so->pick == FG_PICK_RANDOM)
		so->seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	r->f = fg_flame_new(&r->a.flame);
	if ((r->a.nameattr && !(so->nameattr = load_nameattr(r->a.nameattr))) ||
	    (r->a.cp && !(so->colors = load_palette_map())))
		return false;
	if (output) {
		err = fg_atomic_open(&r->atomic, output, 0);
		if (err < 0) {
			fg_warne(-err, "cannot write '%s'", output);
			return false;
		}
		r->out = r->atomic.fp;
	}
	return true;
}

/*
 * The frames, as wide as --total and --minwidth say, and what was left
 * out.  False when there is nothing to draw: exit status 2, and on
 * standard output an SVG that says so.
 */
static bool build(struct run *r)
{
	struct fg_svg_opts *so = &r->a.svg;
	struct fg_flame *f = r->f;
	double total = r->a.total, min_samples;

	if (total > 0 && total < f->total) {
		if (total / f->total > 0.02)
			fg_warnx("--total %.17g is less than the actual total %.17g, so ignored",
				 total, f->total);
		total = 0;
	}
	r->a.total = total;
	so->timemax = total > 0 ? total : f->total;
	if (strchr(r->a.minwidth, '%'))
		min_samples = so->timemax * r->a.minval / 100;
	else
		min_samples = r->a.minval / ((so->width - 20) / so->timemax);
	fg_flame_build(f, min_samples);

	if (f->ignored) {
		uint64_t k = f->first_ignored_input;
		const char *path = (int)k - 1 < r->npaths ? r->paths[k - 1] : "-";

		fg_warnx("ignored %llu lines with invalid format (the first: '%s' line %llu)",
			 (unsigned long long)f->ignored, shown(path),
			 (unsigned long long)f->first_ignored_line);
	}
	if (f->refused) {
		uint64_t k = f->first_refused_input;
		const char *path = (int)k - 1 < r->npaths ? r->paths[k - 1] : "-";

		/* fg-fold's words */
		fg_warnx("%s:%llu: %s", shown(path), (unsigned long long)f->first_refused_line,
			 f->first_refused_why == FG_FLAME_TOO_BIG
			     ? "a count does not fit in 64 bits; line left out"
			     : "the count of a stack would pass 2^64-1; left out");
		fg_warnx("left out %llu line%s whose count would pass 2^64-1",
			 (unsigned long long)f->refused, f->refused == 1 ? "" : "s");
	}
	if (f->off_base)
		fg_warnx("left out %llu lines (%.17g samples) without a --base frame",
			 (unsigned long long)f->off_base, f->off_base_samples);
	if (!(f->total > 0)) {
		fg_warnx("no stack counts found");
		/* flamegraph.pl's status, and on standard output its SVG saying so */
		r->status = FG_EXIT_USAGE;
		if (!r->a.output)
			r->written =
			    fg_svg_write_message(stdout, so,
						 "ERROR: No valid input provided to fg-svg: "
						 "no stack counts, nothing to show.");
		return false;
	}
	return true;
}

/* The SVG, -o's file committed, and --cp's palette map.  False, said, on a failure. */
static bool write_graph(struct run *r)
{
	struct fg_svg_opts *so = &r->a.svg;
	const char *output = r->a.output;
	double total = r->a.total;
	int err;

	so->timemax = total > 0 ? total : r->f->total;
	r->written = fg_svg_write(r->out, r->f, so);
	if (r->written >= 0 && output) {
		err = fg_atomic_commit(&r->atomic);
		if (err < 0)
			r->written = err;
	}
	if (r->written < 0 && output) {
		fg_warne((int)-r->written, "cannot write '%s'", output);
		return false;
	}
	if (r->written >= 0)
		warn_size(r->f, (uint64_t)r->written, r->a.minwidth);
	if (r->a.cp && r->written >= 0) {
		err = fg_palette_map_write(so->colors, PALETTE_MAP);
		if (err < 0) {
			fg_warne(-err, "cannot write '%s'", PALETTE_MAP);
			r->status = FG_EXIT_FAIL;
		}
	}
	return true;
}

/* the exit status, everything released */
static int release(struct run *r)
{
	if (r->atomic.fp)
		fg_atomic_abort(&r->atomic);
	/* a failed write is reported once, by fg_close_stdout() when it can see it */
	if (fg_close_stdout() != FG_EXIT_OK) {
		r->status = FG_EXIT_FAIL;
	} else if (r->written < 0 && !r->a.output) {
		fg_warne((int)-r->written, "write error");
		r->status = FG_EXIT_FAIL;
	}
	fg_svg_nameattr_free(r->a.svg.nameattr);
	fg_hash_free(r->a.svg.colors);
	fg_flame_free(r->f);
	fg_svg_args_release(&r->a);
	return r->status;
}

int main(int argc, char **argv)
{
	struct run r = {.out = stdout, .status = FG_EXIT_OK};

	fg_set_progname(argv[0]);
	fg_svg_args_init(&r.a);
	parse_options(&r.a, argc, argv);
	r.paths = argv + optind;
	r.npaths = argc - optind;
	if (!prepare(&r) || !read_inputs(r.f, r.paths, r.npaths) || (build(&r) && !write_graph(&r)))
		r.status = FG_EXIT_FAIL;
	return release(&r);
}
