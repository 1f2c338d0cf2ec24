// SPDX-License-Identifier: BSD-2-Clause
/*
 * fg-top: the profile in the terminal, live or from a file: the top
 * functions, the processes, and a flame graph to move about, zoom and
 * search.  See fg-top(1).
 *
 * Two threads: one reads and folds the input into the model (and ticks it
 * every second), the other draws.  The reader never waits for the terminal:
 * when drawing is slow, fewer frames are drawn, and no sample is lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <langinfo.h>
#include <locale.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curses.h>

#include "fg/diag.h"
#include "fg/foldopts.h"
#include "fg/top.h"
#include "fg/topfeed.h"
#include "fg/util.h"

static const char usage_text[] =
    "usage: fg-top [-b] [-m mode] [-n seconds] [--pid | --tid] [--event-filter EVENT]\n"
    "              [--samples] [--input perf|folded|bpftrace] [FILE]\n"
    "       fg-top -h | -V\n"
    "\n"
    "Show a profile in the terminal: perf script text (fg-sym's or perf's), folded\n"
    "stacks or bpftrace maps, live from standard input or from FILE.\n"
    "\n"
    "  -b, --batch             print the top functions and processes, no terminal\n"
    "  -m, --mode MODE         window, accumulate, reset or decay (default: window)\n"
    "  -n, --seconds N         the window, reset interval or half-life (default: 10)\n"
    "  --pid                   processes as comm-PID\n"
    "  --tid                   processes as comm-PID/TID\n"
    "  --event-filter EVENT    show only samples of EVENT (default: the first event seen)\n"
    "  --samples               count samples instead of summing event periods\n"
    "  --input FORMAT          read perf, folded or bpftrace input (default: detect)\n"
    "  -h, --help              print this help and exit\n"
    "  -V, --version           print the version and exit\n"
    "\n"
    "Keys: Tab or 1 2 3: top functions, processes, flame graph; arrows or hjkl: move;\n"
    "Enter: zoom (on a function: find it in the flame graph); Backspace or Esc: zoom\n"
    "out; /: search (a regular expression); s: sort by self or total; m: mode;\n"
    "p: pause; q: quit.\n";

static const struct option longopts[] = {
    {"batch", no_argument, NULL, 'b'},
    {"event-filter", required_argument, NULL, FG_FOLD_OPT_EVENT_FILTER},
    {"help", no_argument, NULL, 'h'},
    {"input", required_argument, NULL, FG_FOLD_OPT_INPUT},
    {"mode", required_argument, NULL, 'm'},
    {"pid", no_argument, NULL, FG_FOLD_OPT_PID},
    {"samples", no_argument, NULL, FG_FOLD_OPT_SAMPLES},
    {"seconds", required_argument, NULL, 'n'},
    {"tid", no_argument, NULL, FG_FOLD_OPT_TID},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

enum view { V_TOP, V_PROCS, V_FLAME, NVIEWS };
static const char *const view_names[] = {"top", "processes", "flame graph"};
static const char *const kind_tags[] = {"[.]", "[k]", "[j]", "[i]"};

#define MAX_MSGS 12

struct app {
	/* options */
	struct fg_fold_opts fo;
	enum fg_top_mode mode;
	unsigned secs;
	const char *name; /* of the input, for messages */
	int fd;
	int pipe_size; /* what the input pipe holds, in bytes; 0: not a pipe */
	bool live;
	bool utf8;

	/* shared with the reader, under lock */
	pthread_mutex_t lock;
	struct fg_top *t;
	struct fg_top_feed *in;
	struct fg_top_feed_stats st; /* a copy, taken with each view */
	bool eof;
	int err;      /* the input cannot go on: -errno */
	int read_err; /* errno of a failed read */
	char *msgs[MAX_MSGS];
	size_t nmsgs;
	uint64_t more_msgs;
	int wake[2]; /* written to stop the reader */

	/* the display */
	struct fg_top_view *v;
	enum view view;
	enum fg_top_sort sort;
	bool paused;
	char search[256];
	char search_err[128];
	bool prompting;
	char prompt[256];
	size_t list_sel, list_top;
	uint32_t sel_id, zoom_id; /* model nodes: they survive new views */
	uint32_t scroll;	  /* first row of the flame graph shown */
	struct fg_top_cell *cells;
	size_t ncells, acells;
	double rate; /* samples a second */
	uint64_t rate_samples;
	double rate_time;
	short pair_of[256];
	short next_pair;
	bool colors256, colors;
};

static volatile sig_atomic_t stop;

static noreturn void usage_error(const char *fmt, const char *arg)
{
	fg_usage_error(usage_text, fmt, arg);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the library's messages: kept for the end (the terminal is busy until then) */
static void log_msg(void *ctx, const char *msg)
{
	struct app *a = ctx;

	if (a->nmsgs < MAX_MSGS)
		a->msgs[a->nmsgs++] = fg_xstrdup(msg);
	else
		a->more_msgs++;
}

/* --- reading --- */

/* read and fold once; false when the input is done.  *got: the bytes read */
static bool read_once(struct app *a, bool *drained, size_t *got)
{
	ssize_t n = fg_top_feed_fill(a->in, a->fd, drained);
	int r = 0;

	*got = n > 0 ? (size_t)n : 0;
	if (n == -EAGAIN)
		return true;
	pthread_mutex_lock(&a->lock);
	if (n > 0) {
		r = fg_top_feed_process(a->in);
	} else {
		if (n < 0)
			a->read_err = (int)-n;
		r = fg_top_feed_finish(a->in);
		a->eof = true;
	}
	if (r < 0) {
		if (r != -ECANCELED) /* quitting: fg_top_feed_stop */
			a->err = r;
		a->eof = true;
	}
	pthread_mutex_unlock(&a->lock);
	return !a->eof;
}

#define NAP_FIRST 0.001 /* seconds, before the input's rate is known */
#define NAP_MAX 0.01
#define NAP_MIN 0.0001

/*
 * After a read that emptied the pipe: let more come in before reading again,
 * so that reads are fewer and larger (a wakeup and a read cost about the same
 * at 4 KB as at 512 KB).  For no longer than half of what the pipe holds
 * takes to come at the last second's rate, so that the writer does not wait
 * for room (half the pipe is left for a burst), and at most NAP_MAX; woken at
 * once to quit.
 */
static void nap(struct app *a, double bytes_per_s)
{
	double s = bytes_per_s > 0 ? a->pipe_size / 2.0 / bytes_per_s : NAP_FIRST;
	struct pollfd w = {a->wake[0], POLLIN, 0};

	if (s > NAP_MAX)
		s = NAP_MAX;
	if (s < NAP_MIN)
		return;
	ppoll(&w, 1, &(struct timespec){0, (long)(s * 1e9)}, NULL);
}

static void *reader(void *arg)
{
	struct app *a = arg;
	double next_tick = now() + 1, rate = 0; /* bytes a second, over the last second */
	uint64_t bytes = 0;			/* read since the last tick */

	for (;;) {
		struct pollfd p[2] = {{a->fd, POLLIN, 0}, {a->wake[0], POLLIN, 0}};
		double left = next_tick - now();
		int timeout = a->live ? (left > 0 ? (int)(left * 1000) + 1 : 0) : -1;

		if (poll(p, 2, timeout) < 0 && errno != EINTR) {
			pthread_mutex_lock(&a->lock);
			a->read_err = errno;
			a->eof = true;
			pthread_mutex_unlock(&a->lock);
			break;
		}
		if (p[1].revents)
			break;
		if (p[0].revents) {
			bool drained = false;
			size_t got;

			if (!read_once(a, &drained, &got))
				break;
			bytes += got;
			if (drained && a->pipe_size)
				nap(a, rate);
		}
		if (a->live && now() >= next_tick) {
			pthread_mutex_lock(&a->lock);
			fg_top_tick(a->t);
			pthread_mutex_unlock(&a->lock);
			rate = (double)bytes / (now() - next_tick + 1);
			bytes = 0;
			next_tick += 1;
			if (next_tick < now())
				next_tick = now() + 1;
		}
	}
	return NULL;
}

/* --- text --- */

/* draw name at (y, x) in at most `cols` columns, made safe; returns the columns used */
static int put(struct app *a, int y, int x, int cols, const char *s, size_t len)
{
	struct fg_buf b = FG_BUF_INIT;
	size_t w;

	if (cols <= 0)
		return 0;
	w = fg_top_printable(&b, s, len, a->utf8, (size_t)cols);
	if (b.len)
		mvaddnstr(y, x, b.data, (int)b.len);
	fg_buf_release(&b);
	return (int)w;
}

static void FG_PRINTF(5, 6) putf(struct app *a, int y, int x, int cols, const char *fmt, ...)
{
	struct fg_buf b = FG_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	fg_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	put(a, y, x, cols, b.data ? b.data : "", b.len);
	fg_buf_release(&b);
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

/* --- colours --- */

static void init_colors(struct app *a)
{
	if (!has_colors())
		return;
	start_color();
	use_default_colors();
	a->colors = COLORS >= 8 && COLOR_PAIRS > 8;
	a->colors256 = COLORS >= 256 && COLOR_PAIRS > 64;
	a->next_pair = 1;
}

static chtype pair_for(struct app *a, short bg)
{
	if (bg < 0 || bg > 255)
		return 0;
	if (!a->pair_of[bg]) {
		if (a->next_pair >= COLOR_PAIRS)
			return 0;
		init_pair(a->next_pair, COLOR_BLACK, bg);
		a->pair_of[bg] = a->next_pair++;
	}
	return COLOR_PAIR(a->pair_of[bg]);
}

/* a frame's look: fg-svg's colour by kind, magenta when it matches the search */
static chtype frame_attr(struct app *a, const struct fg_top_vnode *vn, bool root)
{
	static const short basic[] = {COLOR_RED, COLOR_YELLOW, COLOR_GREEN, COLOR_CYAN};

	if (!a->colors)
		return vn->matched ? A_BOLD | A_UNDERLINE | A_REVERSE : A_REVERSE;
	if (a->colors256) {
		struct fg_rgb c = vn->matched ? (struct fg_rgb){230, 0, 230}
				  : root      ? (struct fg_rgb){200, 200, 200}
					      : fg_top_color(vn->name, vn->len, vn->kind);

		return pair_for(a, (short)fg_top_xterm256(c));
	}
	return pair_for(a, vn->matched ? COLOR_MAGENTA : root ? COLOR_WHITE : basic[vn->kind]);
}

/* --- views --- */

static void new_view(struct app *a)
{
	struct fg_top_view *v;

	pthread_mutex_lock(&a->lock);
	v = fg_top_view_new(a->t, a->mode);
	a->st = *fg_top_feed_stats(a->in);
	pthread_mutex_unlock(&a->lock);
	fg_top_view_free(a->v);
	a->v = v;
	fg_top_view_sort(v, a->sort);
	if (fg_top_view_search(v, a->search, a->search_err, sizeof(a->search_err)) < 0)
		a->search[0] = '\0';

	double t = now();
	if (a->rate_time > 0 && t > a->rate_time + 0.5) {
		a->rate = (double)(a->st.samples - a->rate_samples) / (t - a->rate_time);
		a->rate_samples = a->st.samples;
		a->rate_time = t;
	} else if (a->rate_time == 0) {
		a->rate_samples = a->st.samples;
		a->rate_time = t;
	}
}

/* what the input's samples are */
static const char *samples_are(const struct fg_top_feed_stats *st)
{
	switch (st->input) {
	case FG_FOLD_FOLDED:
		return "folded stacks";
	case FG_FOLD_BPFTRACE:
		return "map entries";
	default:
		return "samples";
	}
}

static void draw_header(struct app *a)
{
	const struct fg_top_feed_stats *st = &a->st;
	struct fg_buf b = FG_BUF_INIT;
	const char *state = a->err		? "  INPUT FAILED"
			    : a->paused		? "  PAUSED"
			    : a->eof && a->live ? "  input ended"
						: "";

	fg_buf_addf(&b, "fg-top  %s  ", view_names[a->view]);
	if (a->live)
		fg_buf_addf(&b, "%s %us  %.0f samples/s", fg_top_mode_name(a->mode), a->secs,
			    a->rate);
	else
		fg_buf_addstr(&b, "the whole profile");
	fg_buf_addstr(&b, state);
	attron(A_BOLD);
	put(a, 0, 0, COLS, b.data, b.len);
	attroff(A_BOLD);
	fg_buf_reset(&b);
	fg_buf_addf(&b, "%llu %s", (unsigned long long)st->samples, samples_are(st));
	if (st->event) {
		fg_buf_addstr(&b, " of ");
		fg_buf_addstr(&b, st->event);
	}
	fg_buf_addf(&b, ", %zu frames", a->v->nnodes ? a->v->nnodes - 1 : 0);
	if (st->bad_lines)
		fg_buf_addf(&b, ", %llu bad lines", (unsigned long long)st->bad_lines);
	if (st->refused + st->damaged)
		fg_buf_addf(&b, ", %llu left out", (unsigned long long)(st->refused + st->damaged));
	if (st->lost)
		fg_buf_addf(&b, ", perf lost %llu", (unsigned long long)st->lost);
	if (st->other_events)
		fg_buf_addf(&b, ", %llu of other events", (unsigned long long)st->other_events);
	put(a, 1, 0, COLS, b.data, b.len);
	fg_buf_release(&b);
}

static void draw_status(struct app *a, const char *help)
{
	int y = LINES - 1;
	struct fg_buf b = FG_BUF_INIT;

	move(y, 0);
	clrtoeol();
	if (a->prompting) {
		fg_buf_addch(&b, '/');
		fg_buf_addstr(&b, a->prompt);
		int w = put(a, y, 0, COLS - 1, b.data, b.len);
		move(y, w);
		curs_set(1);
		fg_buf_release(&b);
		return;
	}
	curs_set(0);
	if (a->search_err[0]) {
		fg_buf_addf(&b, "bad expression: %s", a->search_err);
	} else if (a->v->searching) {
		fg_buf_addf(&b, "Matched: %.1f%%", pct(a->v->matched, a->v->total));
		int32_t z = fg_top_view_find(a->v, a->zoom_id);
		if (a->view == V_FLAME && z > 0)
			fg_buf_addf(&b, " (%.1f%% of zoom)",
				    pct(fg_top_view_matched_in(a->v, z), a->v->nodes[z].total));
		fg_buf_addstr(&b, "  /");
		fg_buf_addstr(&b, a->search);
	} else {
		fg_buf_addstr(&b, help);
	}
	put(a, y, 0, COLS, b.data, b.len);
	fg_buf_release(&b);
}

/* the functions or the processes: a list with a selected row */
static void draw_list(struct app *a, const struct fg_top_func *fs, size_t n, bool funcs)
{
	int rows = LINES - 4, y = 3, namecol = funcs ? 21 : 8;

	if (rows < 1)
		return;
	if (a->list_sel >= n)
		a->list_sel = n ? n - 1 : 0;
	if (a->list_sel < a->list_top)
		a->list_top = a->list_sel;
	if (a->list_sel >= a->list_top + (size_t)rows)
		a->list_top = a->list_sel - (size_t)rows + 1;
	attron(A_UNDERLINE);
	mvhline(2, 0, ' ', COLS);
	if (funcs)
		putf(a, 2, 0, COLS, "%s  %s  Kind Function",
		     a->sort == FG_TOP_BY_SELF ? " *Self" : "  Self",
		     a->sort == FG_TOP_BY_TOTAL ? "*Total" : " Total");
	else
		putf(a, 2, 0, COLS, " Share  Process");
	attroff(A_UNDERLINE);
	for (size_t i = a->list_top; i < n && y < 3 + rows; i++, y++) {
		const struct fg_top_func *f = &fs[i];
		chtype at = (i == a->list_sel ? A_REVERSE : 0) | (f->matched ? A_BOLD : 0);

		attron(at);
		if (funcs)
			putf(a, y, 0, COLS, "%5.1f%%  %5.1f%%  %s  ", pct(f->self, a->v->total),
			     pct(f->total, a->v->total), kind_tags[f->kind]);
		else
			putf(a, y, 0, COLS, "%5.1f%%  ", pct(f->total, a->v->total));
		if (f->matched && a->colors)
			attron(pair_for(a, a->colors256 ? 201 : COLOR_MAGENTA));
		int w = put(a, y, namecol, COLS - namecol, f->name, f->len);
		if (f->matched && a->colors)
			attroff(pair_for(a, a->colors256 ? 201 : COLOR_MAGENTA));
		if (i == a->list_sel)
			mvhline(y, namecol + w, ' ', COLS - namecol - w);
		attroff(at);
	}
}

/* the flame graph on the terminal's width; the zoom and the selection in the view */
static void lay_out(struct app *a, int32_t *zoom, int32_t *sel)
{
	const struct fg_top_view *v = a->v;

	*zoom = fg_top_view_find(v, a->zoom_id);
	a->zoom_id = v->nodes[*zoom].id;
	a->ncells = fg_top_layout(v, *zoom, COLS > 0 ? (unsigned)COLS : 1, &a->cells, &a->acells);
	*sel = fg_top_nav(v, a->cells, a->ncells, fg_top_view_find(v, a->sel_id), FG_TOP_STAY);
	a->sel_id = v->nodes[*sel].id;
}

static void draw_flame(struct app *a)
{
	const struct fg_top_view *v = a->v;
	int top = 2, rows = LINES - 4;
	int32_t zoom, sel;

	if (rows < 1 || COLS < 1)
		return;
	lay_out(a, &zoom, &sel);
	uint32_t d = v->nodes[sel].depth;
	if (d < a->scroll)
		a->scroll = d;
	if (d >= a->scroll + (uint32_t)rows)
		a->scroll = d - (uint32_t)rows + 1;
	for (size_t i = 0; i < a->ncells; i++) {
		const struct fg_top_cell *c = &a->cells[i];
		const struct fg_top_vnode *vn = &v->nodes[c->node];
		int y = top + (int)c->row - (int)a->scroll;
		chtype at;
		int w;

		if (y < top || y >= top + rows)
			continue;
		at = frame_attr(a, vn, c->node == 0);
		if (c->node == sel)
			at |= a->colors ? A_REVERSE | A_BOLD : A_BOLD | A_UNDERLINE;
		attron(at);
		mvhline(y, (int)c->col, ' ', (int)c->width);
		/* without colours, a gap between frames shows where each ends */
		int tw = (int)c->width - (!a->colors && c->width > 1);
		w = c->node == 0 ? put(a, y, (int)c->col, tw, "all", 3)
				 : put(a, y, (int)c->col, tw, vn->name, vn->len);
		(void)w;
		attroff(at);
		if (!a->colors && c->width > 1)
			mvaddch(y, (int)(c->col + c->width - 1), ' ');
	}
	/* the selected frame */
	const struct fg_top_vnode *s = &v->nodes[sel];
	struct fg_buf b = FG_BUF_INIT;
	int x = 0;

	move(LINES - 2, 0);
	clrtoeol();
	if (sel > 0)
		x = put(a, LINES - 2, 0, COLS, s->name, s->len);
	else
		x = put(a, LINES - 2, 0, COLS, "all", 3);
	fg_buf_addf(&b, " %s  total %.1f%%  self %.1f%%", sel > 0 ? kind_tags[s->kind] : "",
		    pct(s->total, v->total), pct(s->self, v->total));
	/* its share of the zoom, when it is in it */
	int32_t in = sel;
	while (in > zoom)
		in = v->nodes[in].parent;
	if (zoom > 0 && in == zoom)
		fg_buf_addf(&b, "  %.1f%% of zoom", pct(s->total, v->nodes[zoom].total));
	put(a, LINES - 2, x, COLS - x, b.data, b.len);
	fg_buf_release(&b);
}

static void draw(struct app *a)
{
	erase();
	draw_header(a);
	switch (a->view) {
	case V_TOP:
		draw_list(a, a->v->funcs, a->v->nfuncs, true);
		draw_status(a, "Tab view  s sort  / search  m mode  p pause  q quit");
		break;
	case V_PROCS:
		draw_list(a, a->v->procs, a->v->nprocs, false);
		draw_status(a, "Tab view  / search  m mode  p pause  q quit");
		break;
	default:
		draw_flame(a);
		draw_status(a, "hjkl move  Enter zoom  Esc out  / search  p pause  q quit");
		break;
	}
	refresh();
}

/* --- keys --- */

/* "^NAME$" with the expression's special characters escaped */
static void search_for(struct app *a, const char *name, size_t len)
{
	size_t n = 0;

	a->search[n++] = '^';
	for (size_t i = 0; i < len && n + 4 < sizeof(a->search); i++) {
		if (name[i] == '\0')
			break;
		if (strchr(".[]{}()\\*+?^$|", name[i]))
			a->search[n++] = '\\';
		a->search[n++] = name[i];
	}
	a->search[n++] = '$';
	a->search[n] = '\0';
}

static void prompt_key(struct app *a, int ch)
{
	size_t n = strlen(a->prompt);

	switch (ch) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		a->prompting = false;
		snprintf(a->search, sizeof(a->search), "%s", a->prompt);
		a->search_err[0] = '\0';
		if (fg_top_view_search(a->v, a->search, a->search_err, sizeof(a->search_err)) < 0)
			a->search[0] = '\0';
		break;
	case 27: /* Esc */
		a->prompting = false;
		break;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		if (n)
			a->prompt[n - 1] = '\0';
		break;
	default:
		if (ch >= 0x20 && ch <= 0xff && ch != 0x7f && n + 1 < sizeof(a->prompt)) {
			a->prompt[n] = (char)ch;
			a->prompt[n + 1] = '\0';
		}
		break;
	}
}

static void flame_key(struct app *a, int ch)
{
	const struct fg_top_view *v = a->v;
	int32_t sel, z;
	enum fg_top_dir dir;

	lay_out(a, &z, &sel); /* keys come faster than frames are drawn */

	switch (ch) {
	case 'h':
	case KEY_LEFT:
		dir = FG_TOP_LEFT;
		break;
	case 'l':
	case KEY_RIGHT:
		dir = FG_TOP_RIGHT;
		break;
	case 'k':
	case KEY_UP:
		dir = FG_TOP_UP;
		break;
	case 'j':
	case KEY_DOWN:
		dir = FG_TOP_DOWN;
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		a->zoom_id = v->nodes[sel].id;
		return;
	case 27:
	case KEY_BACKSPACE:
	case 127:
	case 8:
		z = fg_top_view_find(v, a->zoom_id);
		a->zoom_id = z > 0 ? v->nodes[v->nodes[z].parent].id : 0;
		return;
	default:
		return;
	}
	a->sel_id = v->nodes[fg_top_nav(v, a->cells, a->ncells, sel, dir)].id;
}

static void list_key(struct app *a, int ch)
{
	size_t n = a->view == V_TOP ? a->v->nfuncs : a->v->nprocs;
	size_t page = LINES > 5 ? (size_t)LINES - 4 : 1;

	switch (ch) {
	case 'k':
	case KEY_UP:
		if (a->list_sel)
			a->list_sel--;
		break;
	case 'j':
	case KEY_DOWN:
		if (a->list_sel + 1 < n)
			a->list_sel++;
		break;
	case KEY_PPAGE:
		a->list_sel = a->list_sel > page ? a->list_sel - page : 0;
		break;
	case KEY_NPAGE:
		a->list_sel = a->list_sel + page < n ? a->list_sel + page : (n ? n - 1 : 0);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (a->list_sel < n) {
			const struct fg_top_func *f = a->view == V_TOP ? &a->v->funcs[a->list_sel]
								       : &a->v->procs[a->list_sel];

			search_for(a, f->name, f->len);
			a->search_err[0] = '\0';
			fg_top_view_search(a->v, a->search, a->search_err, sizeof(a->search_err));
			a->view = V_FLAME;
		}
		break;
	}
}

/* one key; returns false to quit */
static bool key(struct app *a, int ch)
{
	if (a->prompting) {
		prompt_key(a, ch);
		return true;
	}
	switch (ch) {
	case 'q':
	case 'Q':
		return false;
	case '\t':
		a->view = (a->view + 1) % NVIEWS;
		a->list_sel = a->list_top = 0;
		return true;
	case KEY_BTAB:
		a->view = (a->view + NVIEWS - 1) % NVIEWS;
		a->list_sel = a->list_top = 0;
		return true;
	case '1':
	case '2':
	case '3':
		a->view = (enum view)(ch - '1');
		a->list_sel = a->list_top = 0;
		return true;
	case '/':
		a->prompting = true;
		a->prompt[0] = '\0';
		return true;
	case 12: /* Ctrl-L */
		clearok(curscr, TRUE);
		return true;
	case 'p':
	case ' ':
		a->paused = !a->paused;
		return true;
	case 'm':
		a->mode = (a->mode + 1) % FG_TOP_NMODES;
		new_view(a);
		return true;
	case 's':
		a->sort = a->sort == FG_TOP_BY_SELF ? FG_TOP_BY_TOTAL : FG_TOP_BY_SELF;
		fg_top_view_sort(a->v, a->sort);
		return true;
	}
	if (a->view == V_FLAME)
		flame_key(a, ch);
	else
		list_key(a, ch);
	return true;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int run_terminal(struct app *a)
{
	FILE *tty = fopen("/dev/tty", "r+e");
	SCREEN *scr;
	pthread_t th;
	double next = 0;
	bool was_eof = false;
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t ui_sigs, old_sigs;

	if (!tty) {
		fg_warn("cannot open '/dev/tty' (use --batch without a terminal)");
		return FG_EXIT_FAIL;
	}
	scr = newterm(NULL, tty, tty);
	if (!scr) {
		fclose(tty);
		fg_warnx("cannot use the terminal '%s'", getenv("TERM") ? getenv("TERM") : "");
		return FG_EXIT_FAIL;
	}
	set_term(scr);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	init_colors(a);
	timeout(100);

	if (pipe(a->wake) != 0)
		fg_die("pipe");
	/*
	 * The signals of the terminal (ncurses' SIGWINCH and SIGTSTP, our SIGINT
	 * and SIGTERM) are the drawing thread's alone: their handlers run there,
	 * never beside it on the reader's, and the reader's reads go on
	 * uninterrupted
	 */
	sigemptyset(&ui_sigs);
	sigaddset(&ui_sigs, SIGINT);
	sigaddset(&ui_sigs, SIGTERM);
	sigaddset(&ui_sigs, SIGTSTP);
	sigaddset(&ui_sigs, SIGWINCH);
	pthread_sigmask(SIG_BLOCK, &ui_sigs, &old_sigs);
	if (pthread_create(&th, NULL, reader, a) != 0)
		fg_die("cannot start the reader thread");
	pthread_sigmask(SIG_SETMASK, &old_sigs, NULL);
	/* a file: its profile, rather than a first frame of what was read so far */
	for (double give_up = now() + 0.5; !a->live && now() < give_up;) {
		pthread_mutex_lock(&a->lock);
		bool eof = a->eof;
		pthread_mutex_unlock(&a->lock);
		if (eof)
			break;
		napms(10);
	}
	new_view(a);
	/* drawn when there is something new to show: a view, a key, a resize, the end */
	for (bool dirty = true; !stop;) {
		double t = now();
		bool eof;

		pthread_mutex_lock(&a->lock);
		eof = a->eof;
		pthread_mutex_unlock(&a->lock);
		if (!a->paused && (t >= next || eof != was_eof)) {
			new_view(a);
			next = t + 1;
			dirty = true;
		}
		/* what ends the input may have written on the terminal (fg-sample's summary) */
		if (eof != was_eof) {
			clearok(curscr, TRUE);
			dirty = true;
		}
		was_eof = eof;
		if (dirty)
			draw(a);
		dirty = false;
		int ch = getch();
		if (ch == ERR)
			continue;
		dirty = true;
		do {
			if (ch == KEY_RESIZE)
				continue;
			if (!key(a, ch))
				stop = 1;
		} while (!stop && (ch = getch()) != ERR);
	}
	/* the reader stops at its next sample, however much it read is still to fold */
	fg_top_feed_stop(a->in);
	if (write(a->wake[1], "q", 1) < 0)
		fg_warn("cannot stop the reader");
	pthread_join(th, NULL);
	endwin();
	delscreen(scr);
	fclose(tty);
	close(a->wake[0]);
	close(a->wake[1]);
	return FG_EXIT_OK;
}

/* --- batch --- */

static void print_name(const struct app *a, const char *s, size_t len)
{
	struct fg_buf b = FG_BUF_INIT;

	fg_top_printable(&b, s, len, a->utf8, SIZE_MAX);
	if (b.len)
		fwrite(b.data, 1, b.len, stdout);
	putchar('\n');
	fg_buf_release(&b);
}

static int run_batch(struct app *a)
{
	bool drained;
	size_t got;

	while (read_once(a, &drained, &got))
		;
	new_view(a);
	const struct fg_top_view *v = a->v;

	printf("# %llu %s%s%s, %zu frames\n", (unsigned long long)a->st.samples,
	       samples_are(&a->st), a->st.event ? " of " : "", a->st.event ? a->st.event : "",
	       v->nnodes ? v->nnodes - 1 : 0);
	printf("  Self   Total  Kind Function\n");
	for (size_t i = 0; i < v->nfuncs; i++) {
		const struct fg_top_func *f = &v->funcs[i];

		printf("%5.1f%%  %5.1f%%  %s  ", pct(f->self, v->total), pct(f->total, v->total),
		       kind_tags[f->kind]);
		print_name(a, f->name, f->len);
	}
	printf("\n Share  Process\n");
	for (size_t i = 0; i < v->nprocs; i++) {
		printf("%5.1f%%  ", pct(v->procs[i].total, v->total));
		print_name(a, v->procs[i].name, v->procs[i].len);
	}
	return fg_close_stdout();
}

/* the options, checked; *batch for -b */
static void parse_options(struct app *a, bool *batch, int argc, char **argv)
{
	int c;
	uint64_t u;
	const char *why;

	while ((c = getopt_long(argc, argv, "bhm:n:V", longopts, NULL)) != -1) {
		switch (c) {
		case 'b':
			*batch = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(fg_close_stdout());
		case 'm':
			if (fg_top_mode_parse(optarg) < 0)
				usage_error(
				    "unknown mode '%s' (window, accumulate, reset or decay)",
				    optarg);
			a->mode = (enum fg_top_mode)fg_top_mode_parse(optarg);
			break;
		case 'n':
			if (fg_parse_u64(optarg, 1, 3600, &u) != 0)
				usage_error("invalid number of seconds '%s' (1 to 3600)", optarg);
			a->secs = (unsigned)u;
			break;
		case 'V':
			fg_print_version();
			exit(fg_close_stdout());
		default:
			if (fg_fold_opt(c, optarg, &a->fo, NULL, &why) != 0)
				usage_error(why, optarg);
		}
	}
	if (argc - optind > 1)
		usage_error("too many operands", NULL);
}

/* the file named, or standard input: a file is a finished profile, a pipe is live */
static void open_input(struct app *a, int argc, char **argv)
{
	struct stat st;

	if (optind < argc && strcmp(argv[optind], "-") != 0) {
		a->name = argv[optind];
		a->fd = open(a->name, O_RDONLY | O_CLOEXEC);
		if (a->fd < 0)
			fg_die("cannot open '%s'", a->name);
	} else if (isatty(STDIN_FILENO)) {
		usage_error("no input: standard input is a terminal; pipe a profile in or name "
			    "a file",
			    NULL);
	}
	/* a file is a finished profile; a pipe is live: the clock moves the counts */
	a->live = fstat(a->fd, &st) != 0 || !S_ISREG(st.st_mode);
	/* a large pipe: fewer, larger reads (and the writer waits less); as large as allowed */
	if (a->live && S_ISFIFO(st.st_mode)) {
		for (int size = 1 << 20; size >= 1 << 16 && fcntl(a->fd, F_SETPIPE_SZ, size) < 0;
		     size /= 2)
			;
		a->pipe_size = fcntl(a->fd, F_GETPIPE_SZ);
		if (a->pipe_size < 0)
			a->pipe_size = 0;
	}
}

/* the messages kept while the screen was drawn, and what the input left out */
static void report(struct app *a)
{
	for (size_t i = 0; i < a->nmsgs; i++) {
		fg_warnx("%s", a->msgs[i]);
		free(a->msgs[i]);
	}
	if (a->more_msgs)
		fg_warnx("%llu more messages not shown", (unsigned long long)a->more_msgs);
	fg_top_feed_report(a->in);
	if (a->read_err)
		fg_warne(a->read_err, "cannot read '%s'", a->name);
}

/* everything released; the input closed */
static void release(struct app *a)
{
	fg_top_view_free(a->v);
	fg_top_feed_free(a->in);
	fg_top_free(a->t);
	free(a->cells);
	if (a->fd != STDIN_FILENO)
		close(a->fd);
}

int main(int argc, char **argv)
{
	struct app a = {
	    .fo = {.annotate_kernel = true, .annotate_jit = true},
	    .mode = FG_TOP_WINDOW,
	    .secs = 10,
	    .lock = PTHREAD_MUTEX_INITIALIZER,
	    .fd = STDIN_FILENO,
	    .name = "<stdin>",
	    .wake = {-1, -1},
	};
	bool batch = false;
	int status;

	fg_set_progname(argv[0]);
	setlocale(LC_ALL, "");
	a.utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	parse_options(&a, &batch, argc, argv);
	open_input(&a, argc, argv);
	a.t = fg_top_new(a.secs);
	a.in = fg_top_feed_new(a.t, &a.fo, a.name, log_msg, &a);
	status = batch ? run_batch(&a) : run_terminal(&a);
	report(&a);
	if (a.read_err || a.err)
		status = FG_EXIT_FAIL;
	release(&a);
	return status;
}
