// SPDX-License-Identifier: BSD-2-Clause
/* fg-svg: folded stacks in, an interactive flame graph SVG out. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdnoreturn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/flame.h"
#include "fg/hash.h"
#include "fg/palette.h"
#include "fg/svg.h"
#include "fg/util.h"

static const char usage_text[] =
    "usage: fg-svg [options] [FILE...] > graph.svg\n"
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
    "  -h, --help          show this help\n"
    "  -V, --version       show the version\n";

static noreturn void usage(FILE *to, int status)
{
	fputs(usage_text, to);
	exit(status);
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

/*
 * Read all of `path` ("-": standard input).  0 or -errno.  With `mapped`, a
 * regular file is mapped instead, and *mapped says to munmap rather than free.
 */
static int slurp_map(const char *path, char **data, size_t *len, bool *mapped)
{
	int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	struct fg_buf b = FG_BUF_INIT;
	struct stat st;
	int err = 0;

	if (fd < 0)
		return -errno;
	if (mapped)
		*mapped = false;
	if (mapped && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m =
		    mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);

		if (m != MAP_FAILED) {
			if (fd != STDIN_FILENO)
				close(fd);
			*data = m;
			*len = (size_t)st.st_size;
			*mapped = true;
			return 0;
		}
	}
	fg_buf_init(&b, 1 << 16);
	for (;;) {
		ssize_t n;

		fg_buf_grow(&b, 1 << 20);
		n = read(fd, b.data + b.len, b.cap - b.len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		b.len += (size_t)n;
	}
	if (fd != STDIN_FILENO)
		close(fd);
	if (err) {
		fg_buf_release(&b);
		return err;
	}
	b.data[b.len] = '\0';
	*data = fg_buf_detach(&b, len);
	return 0;
}

static int slurp(const char *path, char **data, size_t *len)
{
	return slurp_map(path, data, len, NULL);
}

/* Per-name attributes, NAME<TAB>key=value<TAB>... a line. */
static struct fg_hmap *load_nameattr(const char *path)
{
	struct fg_hmap *m = fg_hmap_new(0);
	char *data;
	size_t len, pos = 0;
	uint64_t lineno = 0;
	int err = slurp(path, &data, &len);

	if (err < 0) {
		fg_warne(-err, "cannot read '%s'", path);
		fg_svg_nameattr_free(m);
		exit(FG_EXIT_FAIL);
	}
	while (pos < len) {
		const char *line = data + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;

		pos += n + 1;
		lineno++;
		if (n == 0)
			continue;
		if (fg_svg_nameattr_line(m, line, n) < 0) {
			fg_warnx("'%s' line %llu: expected NAME<TAB>key=value<TAB>...", path,
				 (unsigned long long)lineno);
			fg_svg_nameattr_free(m);
			free(data);
			exit(FG_EXIT_FAIL);
		}
	}
	free(data);
	return m;
}

struct input {
	char *data;
	size_t len;
	bool mapped;
};

static void free_inputs(struct input *in, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (in[i].mapped)
			munmap(in[i].data, in[i].len);
		else
			free(in[i].data);
	}
	free(in);
}

#define PALETTE_MAP "palette.map"

/* --cp: the colours of ./palette.map, "NAME->rgb(R,G,B)" a line, when it exists. */
static struct fg_hmap *load_palette_map(void)
{
	struct fg_hmap *m = fg_hmap_new(0);
	char *data;
	size_t len, pos = 0;
	uint64_t lineno = 0, bad_lines = 0, first_bad = 0;
	int err = slurp(PALETTE_MAP, &data, &len);

	if (err == -ENOENT)
		return m;
	if (err < 0) {
		fg_warne(-err, "cannot read '%s'", PALETTE_MAP);
		fg_hmap_free(m);
		exit(FG_EXIT_FAIL);
	}
	while (pos < len) {
		const char *line = data + pos, *nl = memchr(line, '\n', len - pos), *arrow = NULL;
		size_t n = nl ? (size_t)(nl - line) : len - pos;
		struct fg_rgb c;

		pos += n + 1;
		lineno++;
		if (n && line[n - 1] == '\r')
			n--;
		/* the colour follows the last "->": names may hold one (operator->) */
		for (size_t i = n; i-- > 1;)
			if (line[i - 1] == '-' && line[i] == '>') {
				arrow = line + i - 1;
				break;
			}
		if (!arrow || fg_rgb_parse(arrow + 2, (size_t)(line + n - arrow - 2), &c) < 0) {
			if (n && !bad_lines++)
				first_bad = lineno;
			continue;
		}
		fg_hmap_upsert(m, line, (size_t)(arrow - line), NULL)->val.u = fg_svg_pack(c);
	}
	if (bad_lines)
		fg_warnx(
		    "ignored %llu lines of '%s' that are not NAME->rgb(R,G,B) (the first: line "
		    "%llu)",
		    (unsigned long long)bad_lines, PALETTE_MAP, (unsigned long long)first_bad);
	free(data);
	return m;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct fg_hent *x = *(const struct fg_hent *const *)a;
	const struct fg_hent *y = *(const struct fg_hent *const *)b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->key, y->key, n);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int save_palette_map(struct fg_hmap *m)
{
	size_t n = fg_hmap_count(m);
	struct fg_hent **v = fg_xcalloc(n ? n : 1, sizeof(*v));
	FILE *f = fopen(PALETTE_MAP ".tmp", "w");
	int ok;

	if (!f) {
		fg_warn("cannot write '%s'", PALETTE_MAP ".tmp");
		free(v);
		return FG_EXIT_FAIL;
	}
	for (size_t i = 0; i < n; i++)
		v[i] = fg_hmap_at(m, i);
	qsort(v, n, sizeof(*v), cmp_entry);
	for (size_t i = 0; i < n; i++) {
		struct fg_rgb c = fg_svg_unpack(v[i]->val.u);

		fwrite(v[i]->key, 1, v[i]->len, f);
		fprintf(f, "->rgb(%u,%u,%u)\n", c.r, c.g, c.b);
	}
	free(v);
	ok = !ferror(f);
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(PALETTE_MAP ".tmp", PALETTE_MAP) < 0) {
		fg_warn("cannot write '%s'", PALETTE_MAP);
		unlink(PALETTE_MAP ".tmp");
		return FG_EXIT_FAIL;
	}
	return FG_EXIT_OK;
}

static const char *background(const char *name, const char **bg2)
{
	static const struct {
		const char *name, *c1, *c2;
	} bgs[] = {
	    {"yellow", "#eeeeee", "#eeeeb0"},
	    {"blue", "#eeeeee", "#e0e0ff"},
	    {"green", "#eef2ee", "#e0ffe0"},
	    {"grey", "#f8f8f8", "#e8e8e8"},
	};
	struct fg_rgb c;

	for (size_t i = 0; i < FG_ARRAY_SIZE(bgs); i++)
		if (strcmp(name, bgs[i].name) == 0) {
			*bg2 = bgs[i].c2;
			return bgs[i].c1;
		}
	if (fg_rgb_parse(name, strlen(name), &c) < 0 || name[0] != '#')
		bad("background colour", name);
	*bg2 = name;
	return name;
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
	const char *minwidth = "0.1", *bgcolors = NULL, *nameattr = NULL;
	const char **base = NULL;
	size_t nbase = 0, base_alloc = 0;
	bool cp = false, width_set = false;
	double total = 0, minval, min_samples;
	struct fg_flame *f;
	struct input *inputs;
	size_t ninputs;
	int c, status = FG_EXIT_OK, err;
	char *end;

	fg_set_progname("fg-svg");
	fg_svg_opts_init(&so);
	while ((c = getopt_long(argc, argv, "hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout, FG_EXIT_OK);
		case 'V':
			fg_print_version();
			return FG_EXIT_OK;
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
	so.bg1 = background(bgcolors ? bgcolors : fg_palette_bg(so.palette), &so.bg2);
	minval = strtod(minwidth, &end);
	if (end == minwidth || (*end && strcmp(end, "%") != 0) || minval < 0 || !(minval < 1e300) ||
	    (minwidth[0] < '0' || minwidth[0] > '9'))
		bad("minimum width", minwidth);
	fo.chain = so.palette == FG_PAL_CHAIN;
	fo.base = base;
	fo.nbase = nbase;
	if (so.pick == FG_PICK_RANDOM)
		so.seed = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	if (nameattr)
		so.nameattr = load_nameattr(nameattr);
	if (cp)
		so.colors = load_palette_map();

	f = fg_flame_new(&fo);
	ninputs = argc > optind ? (size_t)(argc - optind) : 1;
	inputs = fg_xcalloc(ninputs, sizeof(*inputs));
	for (size_t i = 0; i < ninputs; i++) {
		const char *path = optind + (int)i < argc ? argv[optind + (int)i] : "-";

		err = slurp_map(path, &inputs[i].data, &inputs[i].len, &inputs[i].mapped);
		if (err < 0) {
			fg_warne(-err, "cannot read '%s'", strcmp(path, "-") ? path : "<stdin>");
			free_inputs(inputs, i);
			fg_flame_free(f);
			fg_svg_nameattr_free(so.nameattr);
			fg_hmap_free(so.colors);
			free(base);
			return FG_EXIT_FAIL;
		}
		fg_flame_add_input(f, inputs[i].data, inputs[i].len);
	}
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
			 (unsigned long long)f->ignored, strcmp(path, "-") ? path : "<stdin>",
			 (unsigned long long)f->first_ignored_line);
	}
	if (f->off_base)
		fg_warnx("left out %llu lines (%.17g samples) without a --base frame",
			 (unsigned long long)f->off_base, f->off_base_samples);
	if (!(f->total > 0)) {
		fg_warnx("no stack counts found");
		err = fg_svg_write_message(stdout, &so,
					   "ERROR: No valid input provided to fg-svg: "
					   "no stack counts, nothing to show.");
		status = FG_EXIT_USAGE; /* flamegraph.pl's status for this */
		goto out;
	}
	so.timemax = total > 0 ? total : f->total;
	err = fg_svg_write(stdout, f, &so);
	if (cp && err == 0 && save_palette_map(so.colors) != FG_EXIT_OK)
		status = FG_EXIT_FAIL;
out:
	/* a failed write is reported once, by fg_close_stdout() when it can see it */
	if (fg_close_stdout() != FG_EXIT_OK) {
		status = FG_EXIT_FAIL;
	} else if (err < 0) {
		fg_warne(-err, "write error");
		status = FG_EXIT_FAIL;
	}
	fg_svg_nameattr_free(so.nameattr);
	fg_hmap_free(so.colors);
	fg_flame_free(f);
	free_inputs(inputs, ninputs);
	free(base);
	return status;
}
