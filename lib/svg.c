// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fg/diag.h"
#include "fg/svg.h"

extern const char fg_svg_script[];

#define XPAD 10
#define FRAMEPAD 1
#define FLUSH_AT (256 * 1024)

void fg_svg_opts_init(struct fg_svg_opts *o)
{
	*o = (struct fg_svg_opts){
	    .fonttype = "Verdana",
	    .nametype = "Function:",
	    .countname = "samples",
	    .bg1 = "#eeeeee",
	    .bg2 = "#eeeeb0",
	    .width = 1200,
	    .frameheight = 16,
	    .fontsize = 12,
	    .fontwidth = 0.59,
	    .factor = 1,
	    .palette = FG_PAL_HOT,
	    .pick = FG_PICK_HASH,
	};
}

/* --- escaping --- */

/* The length of the valid UTF-8 sequence at p, or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f; /* no surrogates */
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if (p[i] < 0x80 || p[i] > 0xbf)
			return 0;
	/* U+FFFE and U+FFFF are not XML characters */
	if (n == 3 && c == 0xef && p[1] == 0xbf && p[2] >= 0xbe)
		return 0;
	return n;
}

static const char REPLACEMENT[] = "\xef\xbf\xbd";

void fg_svg_escape(struct fg_buf *b, const char *s, size_t n, unsigned flags)
{
	bool attr = flags & FG_ESC_ATTR, raw8 = flags & FG_ESC_RAW8;
	const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;

	while (p < end) {
		unsigned char c = *p;
		const char *rep;
		size_t len = 1;

		if (c >= 0x20 && c < 0x80 && c != '&' && c != '<' && c != '>' && c != '"' &&
		    c != '\'') {
			p++;
			continue;
		}
		if (c >= 0x80 && (raw8 || (len = utf8_len(p, end)) > 0)) {
			p += raw8 ? 1 : len;
			continue;
		}
		fg_buf_add(b, run, (size_t)(p - run));
		switch (c) {
		case '&':
			rep = "&amp;";
			break;
		case '<':
			rep = "&lt;";
			break;
		case '>':
			rep = "&gt;";
			break;
		case '"':
			rep = attr ? "&quot;" : "\"";
			break;
		case '\'':
			rep = attr ? "&#39;" : "'";
			break;
		case '\t':
			rep = attr ? "&#9;" : "\t";
			break;
		default:
			rep = raw8 ? "?" : REPLACEMENT;
			break;
		}
		fg_buf_addstr(b, rep);
		run = ++p;
	}
	fg_buf_add(b, run, (size_t)(p - run));
}

/* bytes >= 0x80 pass as they are, for a declared encoding other than UTF-8 */
static unsigned raw8;

static void esc(struct fg_buf *b, const char *s)
{
	fg_svg_escape(b, s, strlen(s), FG_ESC_ATTR | raw8);
}

static bool is_utf8(const char *enc)
{
	return !enc || strcasecmp(enc, "utf-8") == 0 || strcasecmp(enc, "utf8") == 0;
}

/* --- numbers --- */

static void put_u64(struct fg_buf *b, uint64_t v)
{
	char tmp[24];
	int i = sizeof(tmp);

	do
		tmp[--i] = (char)('0' + v % 10);
	while (v /= 10);
	fg_buf_add(b, tmp + i, sizeof(tmp) - (size_t)i);
}

/* A sample position: exact, short for whole numbers. */
static void put_num(struct fg_buf *b, double v)
{
	char tmp[32];

	if (v >= 0 && v < 1e15 && v == floor(v)) {
		put_u64(b, (uint64_t)v);
		return;
	}
	/* the shortest of the usual forms that reads back as the same number */
	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	fg_buf_addstr(b, tmp);
}

/* A pixel position, "%.1f". */
static void put_px(struct fg_buf *b, double v)
{
	if (v >= 0 && v < 1e12) {
		uint64_t t = (uint64_t)llround(v * 10);

		put_u64(b, t / 10);
		fg_buf_addch(b, '.');
		fg_buf_addch(b, (char)('0' + t % 10));
	} else {
		fg_buf_addf(b, "%.1f", v);
	}
}

/* "1,234,567" from "%.0f" of v, as flamegraph.pl prints counts */
static void put_count(struct fg_buf *b, double v)
{
	char tmp[400];
	int n = snprintf(tmp, sizeof(tmp), "%.0f", v), lead;
	int start = tmp[0] == '-' ? 1 : 0;

	if (n < 0 || n >= (int)sizeof(tmp)) {
		fg_buf_addstr(b, "?");
		return;
	}
	fg_buf_add(b, tmp, (size_t)start);
	lead = (n - start) % 3;
	if (lead == 0)
		lead = 3;
	fg_buf_add(b, tmp + start, (size_t)lead);
	for (int i = start + lead; i < n; i += 3) {
		fg_buf_addch(b, ',');
		fg_buf_add(b, tmp + i, 3);
	}
}

static void put_color(struct fg_buf *b, struct fg_rgb c)
{
	static const char hex[] = "0123456789abcdef";
	char t[7] = {'#',	    hex[c.r >> 4], hex[c.r & 15], hex[c.g >> 4],
		     hex[c.g & 15], hex[c.b >> 4], hex[c.b & 15]};

	fg_buf_add(b, t, sizeof(t));
}

/* --- writing --- */

struct writer {
	FILE *out;
	struct fg_buf b;
	int err;
	uint64_t bytes;
};

static void flush(struct writer *w, bool force)
{
	if (w->b.len == 0 || (!force && w->b.len < FLUSH_AT))
		return;
	if (!w->err && fwrite(w->b.data, 1, w->b.len, w->out) != w->b.len)
		w->err = errno ? -errno : -EIO;
	w->bytes += w->b.len;
	fg_buf_reset(&w->b);
}

static int finish(struct writer *w)
{
	flush(w, true);
	if (!w->err && fflush(w->out) != 0)
		w->err = errno ? -errno : -EIO;
	fg_buf_release(&w->b);
	return w->err;
}

static const char *title_of(const struct fg_svg_opts *o)
{
	bool io = o->palette == FG_PAL_IO; /* the title flamegraph.pl users give off-CPU graphs */

	if (o->title)
		return o->title;
	if (o->inverted)
		return io ? "Off-CPU Time Icicle Graph" : "Icicle Graph";
	if (o->flamechart)
		return io ? "Off-CPU Time Flame Chart" : "Flame Chart";
	return io ? "Off-CPU Time Flame Graph" : "Flame Graph";
}

/* Nanoseconds in one count, when the counts are a time (--countname ns, us, ms or s); else 0. */
static double count_ns(const char *countname)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(countname, units[i].name) == 0)
			return units[i].ns;
	return 0;
}

/* ", 1.23 s": a time of counts in a unit of `unit_ns` nanoseconds, in the unit that reads best */
static void put_time(struct fg_buf *b, double counts, double unit_ns)
{
	double ns = counts * unit_ns;

	if (ns >= 1e9)
		fg_buf_addf(b, ", %.2f s", ns / 1e9);
	else if (ns >= 1e6)
		fg_buf_addf(b, ", %.2f ms", ns / 1e6);
	else if (ns >= 1e3)
		fg_buf_addf(b, ", %.2f us", ns / 1e3);
	else
		fg_buf_addf(b, ", %.0f ns", ns);
}

static void header(struct fg_buf *b, const struct fg_svg_opts *o, int height)
{
	fg_buf_addstr(b, "<?xml version=\"1.0\"");
	if (o->encoding) {
		fg_buf_addstr(b, " encoding=\"");
		esc(b, o->encoding);
		fg_buf_addch(b, '"');
	}
	fg_buf_addstr(b, " standalone=\"no\"?>\n<svg version=\"1.1\" ");
	if (o->fluid)
		fg_buf_addstr(b, "width=\"100%\"");
	else
		fg_buf_addf(b, "width=\"%d\"", o->width);
	fg_buf_addf(b,
		    " height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\" "
		    "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n",
		    height);
	fg_buf_addstr(b, "<!-- Flame graph drawn by fg-svg " FG_VERSION " -->\n");
	if (o->notes) {
		/* a comment must not hold "--" */
		struct fg_buf n = FG_BUF_INIT;

		fg_svg_escape(&n, o->notes, strlen(o->notes), FG_ESC_ATTR | raw8);
		for (size_t i = 0; i + 1 < n.len; i++)
			if (n.data[i] == '-' && n.data[i + 1] == '-')
				n.data[i + 1] = '_';
		if (n.len && n.data[n.len - 1] == '-')
			n.data[n.len - 1] = '_';
		fg_buf_addstr(b, "<!-- NOTES: ");
		if (n.len)
			fg_buf_add(b, n.data, n.len);
		fg_buf_addstr(b, " -->\n");
		fg_buf_release(&n);
	}
	fg_buf_addstr(b,
		      "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
		      "<stop stop-color=\"");
	esc(b, o->bg1);
	fg_buf_addstr(b, "\" offset=\"5%\"/><stop stop-color=\"");
	esc(b, o->bg2);
	fg_buf_addstr(b, "\" offset=\"95%\"/></linearGradient></defs>\n");
	fg_buf_addstr(b, "<style type=\"text/css\">\n"
			 "#frames rect{vector-effect:non-scaling-stroke}\n"
			 "#frames g:hover rect{stroke:#000;stroke-width:0.5}\n"
			 "#frames g{cursor:pointer}\n"
			 "#frames .m rect{fill:rgb(230,0,230)}\n"
			 "#frames .a{opacity:0.5}\n"
			 "#labels,#tip{pointer-events:none}\n"
			 "#tip rect{fill:#ffffe0;stroke:#888;stroke-width:0.5}\n"
			 ".hide{display:none}\n"
			 "#unzoom,#search,#ic{cursor:pointer}\n"
			 "#ic.on{font-weight:bold;fill:#a00}\n"
			 "#search.on{fill:rgb(230,0,230)}\n"
			 "</style>\n");
	fg_buf_addstr(b, "<rect x=\"0\" y=\"0\" width=\"100%\" height=\"100%\" "
			 "fill=\"url(#background)\"/>\n<g font-family=\"");
	esc(b, o->fonttype);
	fg_buf_addf(b, "\" font-size=\"%g\">\n", o->fontsize);
}

static void ui(struct fg_buf *b, const struct fg_svg_opts *o, int height, double ypad2)
{
	fg_buf_addf(b,
		    "<text id=\"title\" x=\"50%%\" y=\"%g\" text-anchor=\"middle\" "
		    "font-size=\"%g\">",
		    o->fontsize * 2, o->fontsize + 5);
	esc(b, title_of(o));
	fg_buf_addstr(b, "</text>\n");
	if (o->subtitle) {
		fg_buf_addf(b,
			    "<text id=\"subtitle\" x=\"50%%\" y=\"%g\" text-anchor=\"middle\" "
			    "fill=\"#a0a0a0\">",
			    o->fontsize * 4);
		esc(b, o->subtitle);
		fg_buf_addstr(b, "</text>\n");
	}
	fg_buf_addf(b, "<text id=\"details\" x=\"%d\" y=\"%g\"> </text>\n", XPAD,
		    height - ypad2 / 2);
	fg_buf_addf(b, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"%g\">Reset Zoom</text>\n",
		    XPAD, o->fontsize * 2);
	fg_buf_addf(b,
		    "<text id=\"search\" x=\"100%%\" dx=\"%d\" y=\"%g\" "
		    "text-anchor=\"end\">Search</text>\n",
		    -XPAD - 30, o->fontsize * 2);
	fg_buf_addf(
	    b, "<text id=\"ic\" x=\"100%%\" dx=\"%d\" y=\"%g\" text-anchor=\"end\">ic</text>\n",
	    -XPAD, o->fontsize * 2);
	fg_buf_addf(b,
		    "<text id=\"matched\" x=\"100%%\" dx=\"%d\" y=\"%g\" "
		    "text-anchor=\"end\"> </text>\n",
		    -XPAD, height - ypad2 / 2);
}

static void script(struct fg_buf *b)
{
	fg_buf_addstr(b, "<script type=\"text/ecmascript\"><![CDATA[\n");
	fg_buf_addstr(b, fg_svg_script);
	fg_buf_addstr(b, "]]></script>\n");
}

/* The end (exclusive) of the first `chars` characters of s (an invalid byte is one). */
static size_t chars_end(const char *s, size_t n, size_t chars, size_t *count)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t i = 0;

	while (p < end && i < chars) {
		size_t l = *p >= 0x80 ? utf8_len(p, end) : 1;

		p += l ? l : 1;
		i++;
	}
	*count = i;
	return (size_t)((const char *)p - s);
}

static struct fg_rgb frame_color(const struct fg_flame *f, const struct fg_flame_frame *fr,
				 const struct fg_svg_opts *o, uint64_t *rng)
{
	if (fr->name_len == 2 && memcmp(fr->name, "--", 2) == 0)
		return (struct fg_rgb){160, 160, 160};
	if (fr->name_len == 1 && fr->name[0] == '-')
		return (struct fg_rgb){200, 200, 200};
	if (f->diff)
		return fg_palette_delta(fr->delta, f->maxdelta, o->negate);
	if (o->colors) {
		bool inserted;
		struct fg_hash_entry *e =
		    fg_hash_upsert(o->colors, fr->name, fr->name_len, &inserted);

		if (!e->val.u) {
			struct fg_rgb c =
			    fg_palette_color(o->palette, o->pick, fr->name, fr->name_len, rng);

			e->val.u = fg_rgb_pack(c);
		}
		return fg_rgb_unpack(e->val.u);
	}
	if (fr->flags & FG_FRAME_WAKER) {
		/* a waker in a chain graph: colour it as "NAME_[w]" */
		char *tmp = fg_xmalloc((size_t)fr->name_len + 4);
		struct fg_rgb c;

		memcpy(tmp, fr->name, fr->name_len);
		memcpy(tmp + fr->name_len, "_[w]", 4);
		c = fg_palette_color(o->palette, o->pick, tmp, (size_t)fr->name_len + 4, rng);
		free(tmp);
		return c;
	}
	return fg_palette_color(o->palette, o->pick, fr->name, fr->name_len, rng);
}

/* the graph's geometry, the same for every frame */
struct layout {
	double timemax; /* the width of the root, in counts */
	double ypad1, ypad2;
	int height;
	double pxscale, charpx;
	double unit_ns; /* the counts are a time: say it in seconds too */
};

/* a frame's tooltip: its name, count, share and, in a differential graph, its change */
static void frame_title(struct fg_buf *b, const struct fg_flame *f, const struct fg_flame_frame *fr,
			const struct fg_svg_opts *o, const struct layout *l, double width,
			size_t shown)
{
	double samples = nearbyint(width * o->factor);
	char pct[64];

	if (fr->parent < 0) {
		fg_buf_addstr(b, "all (");
		put_count(b, width * o->factor);
		fg_buf_addch(b, ' ');
		esc(b, o->countname);
		fg_buf_addstr(b, ", 100%");
		if (l->unit_ns)
			put_time(b, width * o->factor, l->unit_ns);
		fg_buf_addch(b, ')');
		return;
	}
	/* flamegraph.pl computes the share from the rounded count */
	snprintf(pct, sizeof(pct), "%.2f", 100 * samples / (l->timemax * o->factor));
	fg_svg_escape(b, fr->name, shown, raw8);
	fg_buf_addstr(b, " (");
	put_count(b, width * o->factor);
	fg_buf_addch(b, ' ');
	esc(b, o->countname);
	fg_buf_addf(b, ", %s%%", pct);
	if (l->unit_ns)
		put_time(b, width * o->factor, l->unit_ns);
	if (f->diff) {
		double d = o->negate ? -fr->delta : fr->delta;

		fg_buf_addf(b, "; %s%.2f%%", d > 0 ? "+" : "", 100 * d / (l->timemax * o->factor));
	}
	fg_buf_addch(b, ')');
}

/* a frame's label, where three characters fit at the layout width, cut with ".." */
static void frame_label(struct fg_buf *lab, const struct fg_flame_frame *fr,
			const struct fg_svg_opts *o, const struct layout *l, double width, double y,
			size_t shown)
{
	size_t chars = (size_t)(width * l->pxscale / l->charpx);
	const char *name = fr->parent < 0 ? "all" : fr->name;
	size_t len = fr->parent < 0 ? 3 : shown, n, cut;

	if (chars < 3)
		return;
	fg_buf_addstr(lab, "<text x=\"");
	put_px(lab, XPAD + fr->start * l->pxscale + 3);
	fg_buf_addf(lab, "\" y=\"%g\">", y + (o->frameheight - FRAMEPAD) / 2.0 + 3);
	cut = chars_end(name, len, chars, &n);
	if (cut < len) {
		cut = chars_end(name, len, chars - 2, &n);
		fg_svg_escape(lab, name, cut, raw8);
		fg_buf_addstr(lab, "..");
	} else {
		fg_svg_escape(lab, name, len, raw8);
	}
	fg_buf_addstr(lab, "</text>\n");
}

/* one frame: its group (in a link when --nameattr gives one), tooltip and rectangle to b,
 * its label to lab */
static void frame(struct fg_buf *b, struct fg_buf *lab, const struct fg_flame *f,
		  const struct fg_flame_frame *fr, const struct fg_svg_opts *o,
		  const struct layout *l, uint64_t *rng)
{
	double width = fr->parent < 0 ? l->timemax : fr->end - fr->start;
	size_t shown = fg_flame_strip(fr->name, fr->name_len);
	const struct fg_nameattr *na = NULL;
	double y;

	if (o->nameattr) {
		struct fg_hash_entry *e = fg_hash_get(o->nameattr, fr->name, fr->name_len);

		na = e ? e->val.p : NULL;
	}
	if (na && na->href) {
		fg_buf_addstr(b, "<a xlink:href=\"");
		esc(b, na->href);
		fg_buf_addstr(b, "\" target=\"");
		esc(b, na->target ? na->target : "_top");
		fg_buf_addstr(b, "\">");
	}
	fg_buf_addstr(b, "<g");
	if (na && na->attrs)
		fg_buf_addstr(b, na->attrs);
	if (fr->hidden > 0) {
		fg_buf_addstr(b, " fg-h=\"");
		put_num(b, fr->hidden);
		fg_buf_addch(b, '"');
	}
	fg_buf_addstr(b, "><title>");
	if (na && na->title)
		esc(b, na->title);
	else
		frame_title(b, f, fr, o, l, width, shown);
	if (o->inverted)
		y = l->ypad1 + fr->depth * o->frameheight;
	else
		y = l->height - l->ypad2 - (fr->depth + 1) * o->frameheight + FRAMEPAD;
	fg_buf_addstr(b, "</title><rect x=\"");
	put_num(b, fr->start);
	fg_buf_addf(b, "\" y=\"%g\" width=\"", y);
	put_num(b, width);
	fg_buf_addf(b, "\" height=\"%d\" fill=\"", o->frameheight - FRAMEPAD);
	put_color(b, frame_color(f, fr, o, rng));
	fg_buf_addstr(b, "\"/></g>");
	if (na && na->href)
		fg_buf_addstr(b, "</a>");
	fg_buf_addch(b, '\n');
	frame_label(lab, fr, o, l, width, y, shown);
}

int64_t fg_svg_write(FILE *out, const struct fg_flame *f, const struct fg_svg_opts *o)
{
	struct writer w = {out, FG_BUF_INIT, 0, 0};
	struct fg_buf *b = &w.b;
	struct layout l;
	uint64_t rng = o->seed;
	struct fg_buf lab = FG_BUF_INIT;

	l.timemax = o->timemax > f->total ? o->timemax : f->total;
	l.ypad1 = o->fontsize * 3 + (o->subtitle ? o->fontsize * 2 : 0);
	l.ypad2 = o->fontsize * 2 + 10;
	l.height = (int)ceil((f->maxdepth + 1) * o->frameheight + l.ypad1 + l.ypad2);
	l.pxscale = (o->width - 2 * XPAD) / (l.timemax > 0 ? l.timemax : 1);
	l.charpx = o->fontsize * o->fontwidth;
	l.unit_ns = count_ns(o->countname);
	raw8 = is_utf8(o->encoding) ? 0 : FG_ESC_RAW8;
	header(b, o, l.height);
	ui(b, o, l.height, l.ypad2);
	fg_buf_addf(b,
		    "<svg id=\"frames\" x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\" viewBox=\"0 0 ",
		    XPAD, o->width - 2 * XPAD, l.height);
	put_num(b, l.timemax);
	fg_buf_addf(
	    b,
	    " %d\" preserveAspectRatio=\"none\" fg-factor=\"%.17g\" fg-height=\"%d\" "
	    "fg-inverted=\"%d\" fg-fluid=\"%d\" fg-diff=\"%d\" fg-charpx=\"%g\" fg-nametype=\"",
	    l.height, o->factor, o->frameheight, o->inverted, o->fluid, f->diff, l.charpx);
	esc(b, o->nametype);
	fg_buf_addstr(b, "\" fg-countname=\"");
	esc(b, o->countname);
	fg_buf_addstr(b, "\">\n");
	for (size_t i = 0; i < f->nframes; i++) {
		frame(b, &lab, f, &f->frames[i], o, &l, &rng);
		flush(&w, false);
	}
	fg_buf_addstr(b, "</svg>\n<g id=\"labels\">\n");
	if (lab.len)
		fg_buf_add(b, lab.data, lab.len);
	fg_buf_release(&lab);
	fg_buf_addstr(b, "</g>\n<g id=\"tip\" class=\"hide\"><rect rx=\"3\" ry=\"3\"/></g>\n");
	script(b);
	fg_buf_addstr(b, "</g>\n</svg>\n");
	return finish(&w) < 0 ? w.err : (int64_t)w.bytes;
}

int fg_svg_write_message(FILE *out, const struct fg_svg_opts *o, const char *message)
{
	struct writer w = {out, FG_BUF_INIT, 0, 0};
	int height = (int)(o->fontsize * 5);

	raw8 = is_utf8(o->encoding) ? 0 : FG_ESC_RAW8;

	fg_buf_addstr(&w.b, "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" ");
	fg_buf_addf(
	    &w.b,
	    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
	    "xmlns=\"http://www.w3.org/2000/svg\">\n"
	    "<text x=\"%d\" y=\"%g\" text-anchor=\"middle\" font-size=\"%g\" font-family=\"",
	    o->width, height, o->width, height, o->width / 2, o->fontsize * 2, o->fontsize + 2);
	esc(&w.b, o->fonttype);
	fg_buf_addstr(&w.b, "\">");
	esc(&w.b, message);
	fg_buf_addstr(&w.b, "</text>\n</svg>\n");
	return finish(&w);
}

/* --- --nameattr --- */

static bool xml_name(const char *s, size_t n)
{
	if (n == 0 ||
	    !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

int fg_svg_nameattr_line(struct fg_hash *m, const char *line, size_t len)
{
	const char *tab = memchr(line, '\t', len), *p, *end = line + len;
	struct fg_nameattr *na;
	struct fg_hash_entry *e;
	struct fg_buf attrs = FG_BUF_INIT;

	if (len && line[len - 1] == '\r')
		end--;
	if (!tab)
		return -EINVAL;
	/* check every pair first, so that a bad line changes nothing */
	for (p = tab + 1; p < end;) {
		const char *t = memchr(p, '\t', (size_t)(end - p)), *stop = t ? t : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));

		if (!eq || !xml_name(p, (size_t)(eq - p)))
			return -EINVAL;
		p = stop + 1;
	}
	e = fg_hash_upsert(m, line, (size_t)(tab - line), NULL);
	if (!e->val.p)
		e->val.p = fg_xcalloc(1, sizeof(struct fg_nameattr));
	na = e->val.p;
	if (na->attrs)
		fg_buf_addstr(&attrs, na->attrs);
	for (p = tab + 1; p < end;) {
		const char *t = memchr(p, '\t', (size_t)(end - p)), *stop = t ? t : end;
		const char *eq = memchr(p, '=', (size_t)(stop - p));
		size_t kl = (size_t)(eq - p);
		char **slot = NULL;

		if (kl == 5 && memcmp(p, "title", 5) == 0)
			slot = &na->title;
		else if (kl == 4 && memcmp(p, "href", 4) == 0)
			slot = &na->href;
		else if (kl == 6 && memcmp(p, "target", 6) == 0)
			slot = &na->target;
		if (slot) {
			free(*slot);
			*slot = fg_xstrndup(eq + 1, (size_t)(stop - eq - 1));
		} else {
			fg_buf_addch(&attrs, ' ');
			fg_buf_add(&attrs, p, kl);
			fg_buf_addstr(&attrs, "=\"");
			fg_svg_escape(&attrs, eq + 1, (size_t)(stop - eq - 1), FG_ESC_ATTR);
			fg_buf_addch(&attrs, '"');
		}
		p = stop + 1;
	}
	free(na->attrs);
	na->attrs = attrs.len ? fg_buf_detach(&attrs, NULL) : NULL;
	fg_buf_release(&attrs);
	return 0;
}

int fg_svg_nameattr_parse(struct fg_hash *m, const char *data, size_t len, uint64_t *bad_line)
{
	uint64_t lineno = 0;
	size_t pos = 0;

	while (pos < len) {
		const char *line = data + pos, *nl = memchr(line, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - line) : len - pos;

		pos += n + 1;
		lineno++;
		if (n && fg_svg_nameattr_line(m, line, n) < 0) {
			*bad_line = lineno;
			return -EINVAL;
		}
	}
	return 0;
}

void fg_svg_nameattr_free(struct fg_hash *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < fg_hash_count(m); i++) {
		struct fg_nameattr *na = fg_hash_at(m, i)->val.p;

		if (!na)
			continue;
		free(na->title);
		free(na->href);
		free(na->target);
		free(na->attrs);
		free(na);
	}
	fg_hash_free(m);
}
