// SPDX-License-Identifier: BSD-2-Clause
/* fg-serve's profile: folded as it comes, drawn when asked.  See include/fg/serve.h. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/diff.h"
#include "fg/flame.h"
#include "fg/pprof.h"
#include "fg/pprof_read.h"
#include "fg/serve.h"
#include "fg/svg.h"
#include "fg/top.h"
#include "fg/topfeed.h"
#include "fg/util.h"

#define NCACHE 6
#define NAP_MAX 0.01 /* seconds: after a read that emptied the pipe, let more come */
#define LAYOUT_WIDTH 1200

struct drawing {
	struct fg_serve_query q;
	uint64_t version; /* the ticks it was drawn at; 0: empty */
	char *body;
	size_t len;
};

struct fg_serve {
	struct fg_serve_opts o;
	int fd;
	int wake[2];
	pthread_t thread;
	bool started;

	pthread_mutex_t lock; /* the model, the feed, the snapshots, the status */
	struct fg_top *t;
	struct fg_top_feed *in;
	struct fg_serve_status st;
	char event[128];
	char *prev, *cur; /* the two last whole windows, folded */
	size_t prev_len, cur_len;

	pthread_mutex_t draw_lock; /* one drawing at a time; the cache */
	struct drawing cache[NCACHE];
	uint64_t renders;
};

static const char *const view_names[] = {"whole", "window", "diff"};

int fg_serve_view_parse(const char *name)
{
	for (size_t i = 0; i < FG_ARRAY_SIZE(view_names); i++)
		if (strcmp(name, view_names[i]) == 0)
			return (int)i;
	return -1;
}

static void log_msg(void *ctx, const char *msg)
{
	(void)ctx;
	fg_warnx("%s", msg);
}

struct fg_serve *fg_serve_new(const struct fg_serve_opts *o)
{
	struct fg_serve *s = fg_xcalloc(1, sizeof(*s));

	s->o = *o;
	s->fd = -1;
	s->wake[0] = s->wake[1] = -1;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->draw_lock, NULL);
	s->t = fg_top_new(o->window);
	s->in = fg_top_feed_new(s->t, &s->o.fold, o->input_name ? o->input_name : "<stdin>",
				log_msg, s);
	return s;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a view of the model as folded text (malloc'd); the lock is taken only for the snapshot */
static char *view_folded(struct fg_serve *s, enum fg_top_mode mode, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);
	struct fg_top_view *v;

	if (!f)
		fg_die("open_memstream");
	pthread_mutex_lock(&s->lock);
	v = fg_top_view_new(s->t, mode);
	pthread_mutex_unlock(&s->lock);
	fg_top_view_write_folded(v, f);
	fg_top_view_free(v);
	if (fclose(f) != 0)
		fg_die("open_memstream");
	return text;
}

/* one second passed; every window's end, keep the window for the differential view */
static void tick(struct fg_serve *s)
{
	char *text;
	size_t len;

	pthread_mutex_lock(&s->lock);
	fg_top_tick(s->t);
	s->st.ticks++;
	bool whole = s->st.ticks % s->o.window == 0;
	pthread_mutex_unlock(&s->lock);
	if (!whole)
		return;
	text = view_folded(s, FG_TOP_WINDOW, &len);
	pthread_mutex_lock(&s->lock);
	free(s->prev);
	s->prev = s->cur;
	s->prev_len = s->cur_len;
	s->cur = text;
	s->cur_len = len;
	pthread_mutex_unlock(&s->lock);
}

/* fold what one read brought; false when the input is done */
static bool fold_some(struct fg_serve *s, bool *drained)
{
	ssize_t n = fg_top_feed_fill(s->in, s->fd, drained);
	int r;

	if (n == -EAGAIN)
		return true;
	pthread_mutex_lock(&s->lock);
	if (n > 0) {
		r = fg_top_feed_process(s->in);
	} else {
		if (n < 0)
			fg_warne((int)-n, "cannot read %s", s->o.input_name);
		r = fg_top_feed_finish(s->in);
	}
	if (r < 0 && r != -ECANCELED)
		s->st.err = r;
	const struct fg_top_feed_stats *fs = fg_top_feed_stats(s->in);
	s->st.samples = fs->samples;
	if (fs->event && !s->event[0])
		snprintf(s->event, sizeof(s->event), "%s", fs->event);
	bool done = n <= 0 || r < 0;
	pthread_mutex_unlock(&s->lock);
	return !done;
}

static void input_ended(struct fg_serve *s)
{
	tick(s);
	pthread_mutex_lock(&s->lock);
	s->st.eof = true;
	uint64_t n = s->st.samples;
	int err = s->st.err;
	pthread_mutex_unlock(&s->lock);
	if (err == -ECANCELED)
		return;
	fg_warnx("the input %s after %llu samples; serving the final profile at %s until "
		 "interrupted",
		 err ? "failed" : "ended", (unsigned long long)n, s->o.url ? s->o.url : "?");
}

static void *reader(void *arg)
{
	struct fg_serve *s = arg;
	double next_tick = now() + 1;

	for (;;) {
		struct pollfd p[2] = {{s->fd, POLLIN, 0}, {s->wake[0], POLLIN, 0}};
		double left = next_tick - now();
		int timeout = left > 0 ? (int)(left * 1000) + 1 : 0;

		if (poll(p, 2, timeout) < 0 && errno != EINTR) {
			fg_warn("poll");
			break;
		}
		if (p[1].revents)
			return NULL;
		if (p[0].revents) {
			bool drained = false;

			if (!fold_some(s, &drained))
				break;
			if (drained) { /* fewer, larger reads: let the pipe fill a little */
				struct pollfd w = {s->wake[0], POLLIN, 0};
				ppoll(&w, 1, &(struct timespec){0, (long)(NAP_MAX * 1e9)}, NULL);
			}
		}
		if (now() >= next_tick) {
			tick(s);
			next_tick += 1;
			if (next_tick < now())
				next_tick = now() + 1;
		}
	}
	input_ended(s);
	return NULL;
}

int fg_serve_start(struct fg_serve *s, int fd)
{
	struct stat st;
	int err;

	s->fd = fd;
	/* a large pipe: fewer, larger reads, and the writer waits less */
	if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
		for (int size = 1 << 20; size >= 1 << 16 && fcntl(fd, F_SETPIPE_SZ, size) < 0;
		     size /= 2)
			;
	if (pipe2(s->wake, O_CLOEXEC) < 0)
		return -errno;
	err = pthread_create(&s->thread, NULL, reader, s);
	if (err)
		return -err;
	s->started = true;
	return 0;
}

void fg_serve_stop(struct fg_serve *s)
{
	if (!s->started)
		return;
	fg_top_feed_stop(s->in);
	if (write(s->wake[1], "", 1) < 0)
		fg_warn("cannot stop the reader");
	pthread_join(s->thread, NULL);
	s->started = false;
}

void fg_serve_status(struct fg_serve *s, struct fg_serve_status *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->st;
	pthread_mutex_unlock(&s->lock);
	/* not under draw_lock: a status never waits for a drawing */
	st->renders = __atomic_load_n(&s->renders, __ATOMIC_RELAXED);
}

/* --- drawing --- */

/* text[0, len) in a memory file, at its start, for the readers that take a descriptor */
static int memfd_of(const char *text, size_t len)
{
	int fd = memfd_create("fg-serve", MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (size_t off = 0; off < len;) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? -errno : -EIO;
			close(fd);
			return err;
		}
		off += (size_t)n;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		int err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* the differential profile of the two last windows; NULL (and *why) while there are not two */
static char *diff_folded(struct fg_serve *s, size_t *len, char *why, size_t wlen)
{
	struct fg_diff_opts dopts = {0};
	struct fg_diff *d;
	char *text = NULL;
	int fd[2] = {-1, -1};

	pthread_mutex_lock(&s->lock);
	if (s->prev) {
		fd[0] = memfd_of(s->prev, s->prev_len);
		fd[1] = memfd_of(s->cur, s->cur_len);
	} else {
		snprintf(why, wlen,
			 "The differential view needs two whole windows of %u s; %llu s so far.",
			 s->o.window, (unsigned long long)s->st.ticks);
	}
	pthread_mutex_unlock(&s->lock);
	if (fd[0] < 0 || fd[1] < 0) {
		if (fd[0] >= 0 || fd[1] >= 0)
			snprintf(why, wlen, "cannot keep the windows: %s", strerror(ENOMEM));
		if (fd[0] >= 0)
			close(fd[0]);
		if (fd[1] >= 0)
			close(fd[1]);
		return NULL;
	}
	d = fg_diff_new(&dopts, log_msg, s);
	fg_diff_read(d, 0, fd[0], "the window before");
	fg_diff_read(d, 1, fd[1], "the last window");
	close(fd[0]);
	close(fd[1]);
	FILE *f = open_memstream(&text, len);
	if (!f)
		fg_die("open_memstream");
	fg_diff_write(d, f);
	if (fclose(f) != 0)
		fg_die("open_memstream");
	fg_diff_free(d);
	return text;
}

/* the last whole window, for a pprof profile of the differential view */
static char *last_window(struct fg_serve *s, size_t *len)
{
	char *text = NULL;

	pthread_mutex_lock(&s->lock);
	if (s->cur) {
		text = fg_xmalloc(s->cur_len + 1);
		memcpy(text, s->cur, s->cur_len);
		*len = s->cur_len;
	}
	pthread_mutex_unlock(&s->lock);
	return text ? text : fg_xstrdup("");
}

struct pprof_out {
	FILE *f;
};

static int emit(void *ctx, const struct fg_pprof_window *w)
{
	struct pprof_out *o = ctx;

	return fg_pprof_write(w->profile, w->meta, o->f);
}

static int to_pprof(const char *text, size_t len, FILE *out)
{
	struct fg_pprof_reader_opts ro = {.input = FG_FOLD_FOLDED};
	struct pprof_out o = {out};
	struct fg_pprof_reader *r;
	int fd = memfd_of(text, len), err;

	if (fd < 0)
		return fd;
	r = fg_pprof_reader_new(&ro, emit, &o, log_msg, NULL);
	err = fg_pprof_reader_read(r, fd, "the view");
	if (err == 0)
		err = fg_pprof_reader_finish(r);
	fg_pprof_reader_free(r);
	close(fd);
	return err;
}

static void subtitle(struct fg_serve *s, const struct fg_serve_query *q, struct fg_buf *b)
{
	pthread_mutex_lock(&s->lock);
	struct fg_serve_status st = s->st;
	fg_buf_addf(b, "%llu %s", (unsigned long long)st.samples,
		    s->event[0] ? "samples of " : "samples");
	fg_buf_addstr(b, s->event);
	pthread_mutex_unlock(&s->lock);
	if (q->view == FG_SERVE_WHOLE)
		fg_buf_addf(b, "; the whole run (%llu s)", (unsigned long long)st.ticks);
	else if (q->view == FG_SERVE_WINDOW)
		fg_buf_addf(b, "; the last %u s", s->o.window);
	else
		fg_buf_addf(b, "; the last whole %u s against the %u s before (red: more)",
			    s->o.window, s->o.window);
	if (st.eof)
		fg_buf_addstr(b, st.err ? "; the input failed" : "; the input ended");
}

/* the frames of folded `text` as fg-svg draws them */
static int to_svg(struct fg_serve *s, const struct fg_serve_query *q, const char *text, size_t len,
		  const char *message, FILE *out)
{
	struct fg_svg_opts so;
	struct fg_buf sub = FG_BUF_INIT;
	struct fg_flame *f = fg_flame_new(&(struct fg_flame_opts){0});
	int err;

	fg_svg_opts_init(&so);
	so.title = s->o.title ? s->o.title : "fg-serve";
	so.fluid = true;
	so.width = LAYOUT_WIDTH;
	so.inverted = q->inverted;
	so.palette = q->palette;
	fg_palette_background(fg_palette_bg(q->palette), &so.bg1, &so.bg2);
	subtitle(s, q, &sub);
	so.subtitle = sub.data;
	if (text)
		fg_flame_add_input(f, text, len);
	if (!(f->total > 0)) {
		err = fg_svg_write_message(out, &so, message ? message : "No samples yet.");
	} else {
		so.timemax = f->total;
		/* --minwidth, as fg-svg's */
		fg_flame_build(f, s->o.minwidth_pct
				      ? so.timemax * s->o.minwidth / 100
				      : s->o.minwidth / ((so.width - 20) / so.timemax));
		int64_t n = fg_svg_write(out, f, &so);
		err = n < 0 ? (int)n : 0;
	}
	fg_flame_free(f);
	fg_buf_release(&sub);
	return err;
}

/* draw the query into a new buffer; 0 or -errno */
static int draw(struct fg_serve *s, const struct fg_serve_query *q, char **body, size_t *len)
{
	char why[160] = "", *text = NULL;
	size_t tlen = 0;
	FILE *out;
	int err;

	if (q->view == FG_SERVE_DIFF && q->format == FG_SERVE_PPROF)
		text = last_window(s, &tlen);
	else if (q->view == FG_SERVE_DIFF)
		text = diff_folded(s, &tlen, why, sizeof(why));
	else
		text = view_folded(s, q->view == FG_SERVE_WHOLE ? FG_TOP_ACCUMULATE : FG_TOP_WINDOW,
				   &tlen);
	if (q->format == FG_SERVE_FOLDED) {
		*body = text ? text : fg_xstrdup("");
		*len = text ? tlen : 0;
		return 0;
	}
	*body = NULL;
	out = open_memstream(body, len);
	if (!out)
		fg_die("open_memstream");
	if (q->format == FG_SERVE_PPROF)
		err = to_pprof(text, tlen, out);
	else
		err = to_svg(s, q, text, tlen, why[0] ? why : NULL, out);
	if (fclose(out) != 0 && !err)
		err = -ENOMEM;
	free(text);
	if (err) {
		free(*body);
		*body = NULL;
	}
	return err;
}

static const char *content_type(enum fg_serve_format f)
{
	return f == FG_SERVE_SVG      ? "image/svg+xml; charset=utf-8"
	       : f == FG_SERVE_FOLDED ? "text/plain; charset=utf-8"
				      : "application/octet-stream";
}

static bool same_query(const struct fg_serve_query *a, const struct fg_serve_query *b)
{
	return a->view == b->view && a->format == b->format && a->inverted == b->inverted &&
	       a->palette == b->palette;
}

int fg_serve_render(struct fg_serve *s, const struct fg_serve_query *q, char **body, size_t *len,
		    const char **type)
{
	struct drawing *slot = &s->cache[0];
	uint64_t version;
	int err = 0;

	*type = content_type(q->format);
	pthread_mutex_lock(&s->lock);
	version = s->st.ticks + 1; /* views change at ticks only */
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&s->draw_lock);
	for (size_t i = 0; i < NCACHE; i++) {
		struct drawing *c = &s->cache[i];

		if (c->version && same_query(&c->q, q)) {
			slot = c;
			break;
		}
		if (c->version < slot->version)
			slot = c; /* the oldest, to draw into */
	}
	if (slot->version != version || !same_query(&slot->q, q)) {
		free(slot->body);
		slot->body = NULL;
		slot->version = 0;
		err = draw(s, q, &slot->body, &slot->len);
		if (!err) {
			slot->q = *q;
			slot->version = version;
			__atomic_add_fetch(&s->renders, 1, __ATOMIC_RELAXED);
		}
	}
	if (!err) {
		*body = fg_xmalloc(slot->len + 1);
		memcpy(*body, slot->body, slot->len);
		(*body)[slot->len] = '\0';
		*len = slot->len;
	}
	pthread_mutex_unlock(&s->draw_lock);
	return err;
}

void fg_serve_report(struct fg_serve *s)
{
	fg_top_feed_report(s->in);
}

void fg_serve_free(struct fg_serve *s)
{
	if (!s)
		return;
	fg_serve_stop(s);
	for (size_t i = 0; i < NCACHE; i++)
		free(s->cache[i].body);
	free(s->prev);
	free(s->cur);
	fg_top_feed_free(s->in);
	fg_top_free(s->t);
	if (s->wake[0] >= 0) {
		close(s->wake[0]);
		close(s->wake[1]);
	}
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->draw_lock);
	free(s);
}
