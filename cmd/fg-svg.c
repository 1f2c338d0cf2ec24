// SPDX-License-Identifier: BSD-2-Clause
/* fg-svg: folded stacks in, an interactive flame graph SVG out. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdnoreturn.h>
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
#include "fg/util.h"

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

static noreturn void usage(FILE *to, int status)
{
	fputs(usage_text, to);
	exit(status ? status : fg_close_stdout());
}

enum {
	OPT_TITLE = 256,
	OPT_SUBTITLE,
	OPT_WIDTH,
	OPT_HEIGHT,
	OPT_MINWIDTH,
	OPT_FONTTYPE,
	OPT_FONTSIZE,
	OPT_FONTWIDTH,
	OPT_COUNTNAME,
	OPT_NAMETYPE,
	OPT_COLORS,
	OPT_BGCOLORS,
	OPT_HASH,
	OPT_DETERMINISTIC,
	OPT_RANDOM,
	OPT_CP,
	OPT_REVERSE,
	OPT_INVERTED,
	OPT_FLAMECHART,
	OPT_NEGATE,
	OPT_NOTES,
	OPT_TOTAL,
	OPT_FACTOR,
	OPT_NAMEATTR,
	OPT_ENCODING,
	OPT_BASE,
};

static const struct option longopts[] = {
    {"base", required_argument, NULL, OPT_BASE},
    {"bgcolors", required_argument, NULL, OPT_BGCOLORS},
    {"colors", required_argument, NULL, OPT_COLORS},
    {"countname", required_argument, NULL, OPT_COUNTNAME},
    {"cp", no_argument, NULL, OPT_CP},
    {"deterministic", no_argument, NULL, OPT_DETERMINISTIC},
    {"encoding", required_argument, NULL, OPT_ENCODING},
    {"factor", required_argument, NULL, OPT_FACTOR},
    {"flamechart", no_argument, NULL, OPT_FLAMECHART},
    {"fontsize", required_argument, NULL, OPT_FONTSIZE},
    {"fonttype", required_argument, NULL, OPT_FONTTYPE},
    {"fontwidth", required_argument, NULL, OPT_FONTWIDTH},
    {"hash", no_argument, NULL, OPT_HASH},
    {"height", required_argument, NULL, OPT_HEIGHT},
    {"help", no_argument, NULL, 'h'},
    {"inverted", no_argument, NULL, OPT_INVERTED},
    {"minwidth", required_argument, NULL, OPT_MINWIDTH},
    {"nameattr", required_argument, NULL, OPT_NAMEATTR},
    {"nametype", required_argument, NULL, OPT_NAMETYPE},
    {"negate", no_argument, NULL, OPT_NEGATE},
    {"notes", required_argument, NULL, OPT_NOTES},
    {"output", required_argument, NULL, 'o'},
    {"random", no_argument, NULL, OPT_RANDOM},
    {"reverse", no_argument, NULL, OPT_REVERSE},
    {"subtitle", required_argument, NULL, OPT_SUBTITLE},
    {"title", required_argument, NULL, OPT_TITLE},
    {"total", required_argument, NULL, OPT_TOTAL},
    {"version", no_argument, NULL, 'V'},
    {"width", required_argument, NULL, OPT_WIDTH},
    {NULL, 0, NULL, 0},
};

static noreturn void bad(const char *what, const char *value)
{
	fg_warnx("invalid %s '%s'", what, value);
	usage(stderr, FG_EXIT_USAGE);
}

static double number(const char *what, const char *s, double min, double max)
{
	double v;

	if (fg_parse_double(s, min, max, &v) < 0)
		bad(what, s);
	return v;
}

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
	err = fg_read_all(fd, SMALL_FILE_MAX, data, len);
	close(fd);
	return err;
}

/* --nameattr FILE: per-name attributes, NAME<TAB>key=value<TAB>... a line. */
static struct fg_hmap *load_nameattr(const char *path)
{
	struct fg_hmap *m = fg_hmap_new(0);
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
static struct fg_hmap *load_palette_map(void)
{
	struct fg_hmap *m = fg_hmap_new(0);
	uint64_t bad, first;
	char *data;
	size_t len;
	int err = read_named(PALETTE_MAP, &data, &len);

	if (err == -ENOENT)
		return m;
	if (err < 0) {
		fg_warne(-err, "cannot read '%s'", PALETTE_MAP);
		fg_hmap_free(m);
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

static bool valid_encoding(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '.' || *s == '_' || *s == '-'))
			return false;
	return true;
}

int main(int argc, char **argv)
{
	struct fg_svg_opts so;
	struct fg_flame_opts fo = {0};
	const char *minwidth = "0.1", *bgcolors = NULL, *nameattr = NULL, *output = NULL;
	const char **base = NULL;
	size_t nbase = 0, base_alloc = 0;
	bool cp = false, width_set = false;
	double total = 0, minval, min_samples;
	struct fg_flame *f;
	struct fg_atomic atomic = {0};
	FILE *out = stdout;
	int64_t written = 0;
	int c, status = FG_EXIT_OK, err;
	char *end;

	fg_set_progname(argv[0]);
	fg_svg_opts_init(&so);
	while ((c = getopt_long(argc, argv, "hVo:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout, FG_EXIT_OK);
		case 'V':
			fg_print_version();
			return fg_close_stdout();
		case 'o':
			output = optarg;
			break;
		case OPT_BASE:
			FG_ALLOC_GROW(base, nbase + 1, base_alloc);
			base[nbase++] = optarg;
			break;
		case OPT_BGCOLORS:
			bgcolors = optarg;
			break;
		case OPT_COLORS:
			if (fg_palette_parse(optarg) < 0)
				bad("palette", optarg);
			so.palette = (enum fg_palette)fg_palette_parse(optarg);
			break;
		case OPT_COUNTNAME:
			so.countname = optarg;
			break;
		case OPT_CP:
			cp = true;
			break;
		case OPT_DETERMINISTIC:
			so.pick = FG_PICK_DETERMINISTIC;
			break;
		case OPT_ENCODING:
			if (!valid_encoding(optarg))
				bad("encoding", optarg);
			so.encoding = optarg;
			break;
		case OPT_FACTOR:
			so.factor = number("factor", optarg, 1e-300, 1e300);
			break;
		case OPT_FLAMECHART:
			fo.flamechart = so.flamechart = true;
			break;
		case OPT_FONTSIZE:
			so.fontsize = number("font size", optarg, 0.5, 1000);
			break;
		case OPT_FONTTYPE:
			so.fonttype = optarg;
			break;
		case OPT_FONTWIDTH:
			so.fontwidth = number("font width", optarg, 0.01, 100);
			break;
		case OPT_HASH:
			so.pick = FG_PICK_HASH;
			break;
		case OPT_HEIGHT:
			so.frameheight = (int)number("frame height", optarg, 2, 1000);
			if (so.frameheight != atof(optarg))
				bad("frame height", optarg);
			break;
		case OPT_INVERTED:
			so.inverted = true;
			break;
		case OPT_MINWIDTH:
			minwidth = optarg;
			break;
		case OPT_NAMEATTR:
			nameattr = optarg;
			break;
		case OPT_NAMETYPE:
			so.nametype = optarg;
			break;
		case OPT_NEGATE:
			so.negate = true;
			break;
		case OPT_NOTES:
			so.notes = optarg;
			break;
		case OPT_RANDOM:
			so.pick = FG_PICK_RANDOM;
			break;
		case OPT_REVERSE:
			fo.reverse = true;
			break;
		case OPT_SUBTITLE:
			so.subtitle = optarg;
			break;
		case OPT_TITLE:
			so.title = optarg;
			break;
		case OPT_TOTAL:
			total = number("total", optarg, 0, 1e300);
			break;
		case OPT_WIDTH:
			so.width = (int)number("width", optarg, 100, 1000000);
			if (so.width != atof(optarg))
				bad("width", optarg);
			width_set = true;
			break;
		default:
			usage(stderr, FG_EXIT_USAGE);
		}
	}
	so.fluid = !width_set;
	if (!bgcolors)
		bgcolors = fg_palette_bg(so.palette);
	if (fg_palette_background(bgcolors, &so.bg1, &so.bg2) < 0)
		bad("background colour", bgcolors);
	minval = strtod(minwidth, &end);
	if (end == minwidth || (*end && strcmp(end, "%") != 0) || minval < 0 || !(minval < 1e300) ||
	    (minwidth[0] < '0' || minwidth[0] > '9'))
		bad("minimum width", minwidth);
	fo.chain = so.palette == FG_PAL_CHAIN;
	fo.base = base;
	fo.nbase = nbase;
	if (so.pick == FG_PICK_RANDOM)
		so.seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	f = fg_flame_new(&fo);
	if ((nameattr && !(so.nameattr = load_nameattr(nameattr))) ||
	    (cp && !(so.colors = load_palette_map())))
		goto fail;
	if (output) {
		err = fg_atomic_open(&atomic, output);
		if (err < 0) {
			fg_warne(-err, "cannot write '%s'", output);
			goto fail;
		}
		out = atomic.fp;
	}
	if (!read_inputs(f, argv + optind, argc - optind))
		goto fail;
	if (total > 0 && total < f->total) {
		if (total / f->total > 0.02)
			fg_warnx("--total %.17g is less than the actual total %.17g, so ignored",
				 total, f->total);
		total = 0;
	}
	so.timemax = total > 0 ? total : f->total;
	if (strchr(minwidth, '%'))
		min_samples = so.timemax * minval / 100;
	else
		min_samples = minval / ((so.width - 20) / so.timemax);
	fg_flame_build(f, min_samples);

	if (f->ignored) {
		uint64_t k = f->first_ignored_input;
		const char *path = optind + (int)k - 1 < argc ? argv[optind + k - 1] : "-";

		fg_warnx("ignored %llu lines with invalid format (the first: '%s' line %llu)",
			 (unsigned long long)f->ignored, shown(path),
			 (unsigned long long)f->first_ignored_line);
	}
	if (f->off_base)
		fg_warnx("left out %llu lines (%.17g samples) without a --base frame",
			 (unsigned long long)f->off_base, f->off_base_samples);
	if (!(f->total > 0)) {
		fg_warnx("no stack counts found");
		/* flamegraph.pl's status, and on standard output its SVG saying so */
		status = FG_EXIT_USAGE;
		if (!output)
			written = fg_svg_write_message(stdout, &so,
						       "ERROR: No valid input provided to fg-svg: "
						       "no stack counts, nothing to show.");
		goto out;
	}
	so.timemax = total > 0 ? total : f->total;
	written = fg_svg_write(out, f, &so);
	if (written >= 0 && output) {
		err = fg_atomic_commit(&atomic);
		if (err < 0)
			written = err;
	}
	if (written < 0 && output) {
		fg_warne((int)-written, "cannot write '%s'", output);
		goto fail;
	}
	if (written >= 0)
		warn_size(f, (uint64_t)written, minwidth);
	if (cp && written >= 0) {
		err = fg_palette_map_write(so.colors, PALETTE_MAP);
		if (err < 0) {
			fg_warne(-err, "cannot write '%s'", PALETTE_MAP);
			status = FG_EXIT_FAIL;
		}
	}
	goto out;
fail:
	status = FG_EXIT_FAIL;
out:
	if (atomic.fp)
		fg_atomic_abort(&atomic);
	/* a failed write is reported once, by fg_close_stdout() when it can see it */
	if (fg_close_stdout() != FG_EXIT_OK) {
		status = FG_EXIT_FAIL;
	} else if (written < 0 && !output) {
		fg_warne((int)-written, "write error");
		status = FG_EXIT_FAIL;
	}
	fg_svg_nameattr_free(so.nameattr);
	fg_hmap_free(so.colors);
	fg_flame_free(f);
	free(base);
	return status;
}
