// SPDX-License-Identifier: BSD-2-Clause
/*
 * perf script text, folded stacks and bpftrace maps into pprof profiles: a
 * thin layer over the perf-script line parser (fg/perfscript.h) and the
 * folded-line parser (fg/folded.h) that keeps what fg-fold folds away:
 * addresses, modules, inlined functions, pid, tid, comm and time.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/badline.h"
#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/folded.h"
#include "fg/hash.h"
#include "fg/lines.h"
#include "fg/perfscript.h"
#include "fg/pprof_read.h"
#include "fg/psheader.h"
#include "fg/window.h"

#define DETECT_BYTES (64 * 1024)
#define MAX_EVENTS 16
#define MAX_BUILD_IDS 65536

enum { COL_SAMPLES, COL_CPU, COL_OFFCPU, COL_EVENTS };
enum kind { K_CPU, K_OFFCPU };

/* an inlined function waiting for the frame it was inlined into: its name in r->text */
struct inl {
	size_t off, len;
};

/* frame lines seen before, and their location in the profile being built: at most this many */
#define LCACHE_MAX (1 << 16)

struct fg_pprof_reader {
	struct fg_pprof_reader_opts o;
	fg_pprof_emit_fn emit;
	void *ctx;
	struct fg_badlines bad;
	struct fg_pprof_stats st;

	/* the profile being built, and its window */
	struct fg_pprof *p;
	struct fg_window win;
	uint64_t win_samples;
	struct fg_pprof *prev; /* the window before, open for samples a little late */
	uint64_t prev_start, prev_samples;
	struct fg_pprof *to; /* where the next sample goes: p or prev */
	uint64_t *to_samples;
	bool timed;
	uint64_t first_ns, last_ns; /* the samples' clock */
	uint64_t clock_period;	    /* the first cpu-clock period seen, for the profile's period */

	/* from the header comments */
	struct fg_ps_event_info ev[MAX_EVENTS];
	size_t nev;
	struct fg_hmap *build_ids; /* path -> build-id (val: offset << 8 | length in bid_text) */
	struct fg_buf bid_text;

	/* the CPU event */
	char *event;
	size_t event_len;
	bool event_exact;
	bool seen_cpu, seen_off, cpu_ns_missing;

	/* the current input */
	const char *name;
	uint64_t lineno;
	enum fg_fold_input fmt;

	/* the current sample */
	bool in_sample, skip;
	enum kind kind;
	uint64_t lines;
	bool has_time, has_period, clock_event;
	uint64_t time_ns, period;
	bool has_pid;
	uint64_t pid, tid;
	size_t comm_len; /* the comm is text[0..comm_len) */
	struct fg_buf text;
	uint32_t *ids; /* the sample's locations so far, leaf first */
	size_t nids, aids;
	struct inl *inl; /* inlined functions waiting for their frame */
	size_t ninl, ainl;
	struct fg_pprof_frame *pf;
	size_t apf, nframes;

	/*
	 * A frame line gives the same location every time in one profile: the
	 * line -> (serial of the profile << 32 | location id), so that a line
	 * seen before is neither parsed nor looked up again (most are)
	 */
	struct fg_hmap *lcache;
	uint32_t serial; /* of r->p; another profile, another serial */
};

#define logf_(r, ...) fg_logf((r)->bad.log, (r)->bad.ctx, __VA_ARGS__)

static void bad_line(struct fg_pprof_reader *r, const char *what, const char *line, size_t len)
{
	fg_badline(&r->bad, r->name, r->lineno, what, line, len);
	r->st.bad_lines = r->bad.count;
}

static bool starts(const char *p, size_t len, const char *lit)
{
	size_t n = strlen(lit);

	return len >= n && memcmp(p, lit, n) == 0;
}

static bool all_space(const char *line, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return false;
	return true;
}

/* --- header comments --- */

static void comment(struct fg_pprof_reader *r, const char *line, size_t len)
{
	struct fg_ps_event_info ei;
	uint64_t tod, clk;

	if (fg_ps_parse_event_comment(line, len, &ei) == 0) {
		if (r->nev < MAX_EVENTS)
			r->ev[r->nev++] = ei;
	} else if (fg_ps_parse_reftime_comment(line, len, &tod, &clk) == 0) {
		r->win.have_ref = true;
		r->win.ref_offset = (int64_t)(tod - clk);
	}
}

/* "PERF_RECORD_MMAP2 PID/TID: [0xSTART(0xLEN) @ 0xPGOFF <BUILDID>]: PROT PATH" */
static void sideband(struct fg_pprof_reader *r, struct fg_span rest)
{
	const char *s = rest.p, *end = rest.p + rest.len, *lt, *gt, *path;

	r->st.sideband++;
	if (!starts(s, rest.len, "PERF_RECORD_MMAP2 ") && !starts(s, rest.len, "PERF_RECORD_MMAP "))
		return;
	lt = memchr(s, '<', rest.len);
	if (!lt || !(gt = memchr(lt, '>', (size_t)(end - lt))) || gt - lt - 1 > 128)
		return;
	/* the path follows "]: PROT " */
	path = memmem(gt, (size_t)(end - gt), "]: ", 3);
	if (!path || !(path = memchr(path + 3, ' ', (size_t)(end - path - 3))))
		return;
	path++;
	if (path >= end || !r->build_ids || fg_hmap_count(r->build_ids) >= MAX_BUILD_IDS)
		return;
	struct fg_hent *e = fg_hmap_upsert(r->build_ids, path, (size_t)(end - path), NULL);
	e->val.u = (uint64_t)r->bid_text.len << 8 | (uint64_t)(gt - lt - 1);
	fg_buf_add(&r->bid_text, lt + 1, (size_t)(gt - lt - 1));
}

/* --- profiles and windows --- */

static bool is_clock_event(const char *e, size_t n)
{
	return (n == 9 && memcmp(e, "cpu-clock", 9) == 0) ||
	       (n == 10 && memcmp(e, "task-clock", 10) == 0);
}

/* nanoseconds a CPU sample stands for, from -F or the header; 0 when not known */
static double ns_per_sample(struct fg_pprof_reader *r)
{
	if (r->o.freq > 0)
		return 1e9 / r->o.freq;
	size_t base = r->event ? fg_ps_event_base_len(r->event, r->event_len) : 0;

	for (size_t i = 0; r->event && i < r->nev; i++) {
		const struct fg_ps_event_info *e = &r->ev[i];

		if (strlen(e->name) != base || memcmp(e->name, r->event, base))
			continue;
		if (e->freq_mode)
			return 1e9 / (double)e->n;
		if (is_clock_event(e->name, strlen(e->name)))
			return (double)e->n;
	}
	return 0;
}

/* emit profile p: a window starting at `start` (window), or the whole input */
static int emit_profile(struct fg_pprof_reader *r, struct fg_pprof *p, uint64_t samples,
			bool window, uint64_t start)
{
	struct fg_pprof_meta m = {.ntypes = 0};
	struct fg_pprof_window w = {.profile = p, .meta = &m};
	double per = ns_per_sample(r);
	char evtype[80];
	int err;

	m.type[m.ntypes] = "samples";
	m.unit[m.ntypes] = "count";
	m.column[m.ntypes++] = COL_SAMPLES;
	if (r->seen_cpu && !r->cpu_ns_missing) {
		m.default_type = m.ntypes;
		m.type[m.ntypes] = "cpu";
		m.unit[m.ntypes] = "nanoseconds";
		m.column[m.ntypes++] = COL_CPU;
		m.period_type = "cpu";
		m.period_unit = "nanoseconds";
		m.period = per > 0 ? (int64_t)llround(per) : (int64_t)r->clock_period;
	} else if (r->seen_cpu && r->event) {
		/* no time: the event's own count (its periods) instead */
		snprintf(evtype, sizeof(evtype), "%.*s", (int)r->event_len, r->event);
		m.default_type = m.ntypes;
		m.type[m.ntypes] = evtype;
		m.unit[m.ntypes] = "count";
		m.column[m.ntypes++] = COL_EVENTS;
	}
	if (r->seen_off) {
		if (!r->seen_cpu)
			m.default_type = m.ntypes;
		m.type[m.ntypes] = "offcpu";
		m.unit[m.ntypes] = "nanoseconds";
		m.column[m.ntypes++] = COL_OFFCPU;
	}
	w.samples = samples;
	if (window && r->win.open) {
		w.timed = true;
		w.start_ns = start;
		m.duration_nanos = (int64_t)r->o.every_ns;
	} else if (!window && r->timed) {
		w.timed = true;
		w.start_ns = r->first_ns;
		if (r->win.have_ref)
			w.start_ns += (uint64_t)r->win.ref_offset;
		m.duration_nanos = (int64_t)(r->last_ns - r->first_ns) + m.period;
	}
	w.wall = w.timed && r->win.have_ref;
	if (w.wall)
		m.time_nanos = (int64_t)w.start_ns;
	err = r->emit(r->ctx, &w);
	r->st.windows++;
	return err;
}

/*
 * The stream is in time order only roughly (each CPU's samples are, and a read
 * of the ring buffer takes what the CPUs wrote since the last): a window stays
 * open for samples of its own that come after the next window has started,
 * until the samples' clock is past its end by half a window (at most 1 s).
 */
static uint64_t grace_ns(const struct fg_pprof_reader *r)
{
	uint64_t g = r->o.every_ns / 2;

	return g < 1000000000ull ? g : 1000000000ull;
}

/* r->p is a new profile: the locations remembered are another's (memory stays one window's) */
static void new_profile(struct fg_pprof_reader *r)
{
	r->serial++;
	if (fg_hmap_count(r->lcache)) {
		fg_hmap_free(r->lcache);
		r->lcache = fg_hmap_new(1024);
	}
}

static int emit_prev(struct fg_pprof_reader *r)
{
	int err = 0;

	if (r->prev && r->prev_samples)
		err = emit_profile(r, r->prev, r->prev_samples, true, r->prev_start);
	fg_pprof_free(r->prev);
	r->prev = NULL;
	return err;
}

/* choose the window of the next sample, at time `t` of the samples' clock; 0 or the emitter's error
 */
static int window_for(struct fg_pprof_reader *r, bool has_time, uint64_t t)
{
	struct fg_window *w = &r->win;
	uint64_t i, wall;
	int err = 0;

	r->to = r->p;
	r->to_samples = &r->win_samples;
	if (!r->o.every_ns)
		return 0;
	if (!has_time) {
		w->untimed++;
		goto out;
	}
	wall = w->have_ref ? t + (uint64_t)w->ref_offset : t;
	i = wall / w->every_ns;
	if (!w->open) {
		w->open = true;
		w->index = i;
	} else if (i > w->index) {
		/* a new window: the one before it is done, this one waits a little */
		err = emit_prev(r);
		r->prev = r->p;
		r->prev_start = fg_window_start(w);
		r->prev_samples = r->win_samples;
		r->p = r->to = fg_pprof_new();
		new_profile(r);
		r->win_samples = 0;
		w->index = i;
	} else if (i < w->index) {
		if (r->prev && i + 1 == w->index) {
			r->to = r->prev;
			r->to_samples = &r->prev_samples;
		} else {
			w->late++;
		}
	}
	if (!err && r->prev && wall >= r->prev_start + w->every_ns + grace_ns(r))
		err = emit_prev(r);
out:
	r->st.late = w->late;
	r->st.untimed = w->untimed;
	return err;
}

static int add(struct fg_pprof_reader *r, struct fg_pprof_sample *s)
{
	int err = fg_pprof_add(r->to ? r->to : r->p, s);

	if (err == -EOVERFLOW)
		logf_(r, "%s:%llu: a profile's total overflows 64 bits", r->name,
		      (unsigned long long)r->lineno);
	if (err)
		return err;
	r->st.samples++;
	(*(r->to_samples ? r->to_samples : &r->win_samples))++;
	return 0;
}

/* --- perf script --- */

static void push_id(struct fg_pprof_reader *r, uint32_t id)
{
	FG_ALLOC_GROW(r->ids, r->nids + 1, r->aids);
	r->ids[r->nids++] = id;
}

/* the location of the waiting inlined functions and the frame `fr` (NULL: none) */
static uint32_t location(struct fg_pprof_reader *r, const struct fg_ps_frame *fr)
{
	size_t n = r->ninl + (fr != NULL);
	struct fg_pprof_frame *f;

	FG_ALLOC_GROW(r->pf, n, r->apf);
	for (size_t i = 0; i < r->ninl; i++)
		r->pf[i] = (struct fg_pprof_frame){.name = r->text.data + r->inl[i].off,
						   .name_len = r->inl[i].len,
						   .inlined = true};
	if (fr) {
		f = &r->pf[n - 1];
		*f = (struct fg_pprof_frame){.addr = fg_span_hex(fr->addr), .has_addr = true};
		if (fr->sym.len && !fg_span_eq(fr->sym, "[unknown]")) {
			f->name = fr->sym.p;
			f->name_len = fr->sym.len;
		}
		if (fr->module.len && !fg_span_eq(fr->module, "[unknown]")) {
			const struct fg_hent *e =
			    fg_hmap_get(r->build_ids, fr->module.p, fr->module.len);

			f->file = fr->module.p;
			f->file_len = fr->module.len;
			if (e) {
				f->build_id = r->bid_text.data + (e->val.u >> 8);
				f->build_id_len = e->val.u & 0xff;
			}
		}
	} else {
		r->pf[n - 1].inlined = false; /* inlined into nothing: the last stands alone */
	}
	uint32_t id = fg_pprof_location(r->to, r->pf, n);
	r->ninl = 0;
	fg_buf_truncate(&r->text, r->comm_len);
	return id;
}

/* a frame line of the current sample: 0, or -EINVAL when it is not one */
static int frame(struct fg_pprof_reader *r, const char *line, size_t len)
{
	bool cacheable = r->to == r->p && r->ninl == 0;
	struct fg_ps_frame fr;
	struct fg_hent *e;

	if (cacheable && (e = fg_hmap_get(r->lcache, line, len)) && e->val.u >> 32 == r->serial) {
		push_id(r, (uint32_t)e->val.u);
		return 0;
	}
	if (fg_ps_parse_frame(line, len, &fr) != 0)
		return -EINVAL;
	if (fg_span_eq(fr.module, "inlined")) {
		/* an inlined function: it shares the location of the frame after it */
		FG_ALLOC_GROW(r->inl, r->ninl + 1, r->ainl);
		r->inl[r->ninl++] = (struct inl){r->text.len, fr.sym.len};
		fg_buf_add(&r->text, fr.sym.p, fr.sym.len);
		return 0;
	}
	uint32_t id = location(r, &fr);
	if (cacheable) {
		if (fg_hmap_count(r->lcache) >= LCACHE_MAX) {
			fg_hmap_free(r->lcache);
			r->lcache = fg_hmap_new(1024);
		}
		fg_hmap_upsert(r->lcache, line, len, NULL)->val.u = (uint64_t)r->serial << 32 | id;
	}
	push_id(r, id);
	return 0;
}

static int end_sample(struct fg_pprof_reader *r)
{
	struct fg_pprof_sample s = {.nframes = 0};
	double per;

	if (!r->in_sample)
		return 0;
	r->in_sample = false;
	if (r->skip)
		return 0;
	if (r->ninl)
		push_id(r, location(r, NULL));
	if (r->nids == 0) {
		/* a sample without a frame: pprof's clients drop a sample without a location */
		FG_ALLOC_GROW(r->pf, 1, r->apf);
		r->pf[0] = (struct fg_pprof_frame){.name = "[unknown]", .name_len = 9};
		push_id(r, fg_pprof_location(r->to, r->pf, 1));
		r->st.no_frames++;
	}
	s.values[COL_SAMPLES] = 1;
	if (r->kind == K_OFFCPU) {
		s.values[COL_OFFCPU] = r->has_period ? (int64_t)r->period : 0;
	} else {
		per = ns_per_sample(r);
		s.values[COL_EVENTS] = r->has_period ? (int64_t)r->period : 1;
		if (per > 0)
			s.values[COL_CPU] = (int64_t)llround(per);
		else if (r->clock_event && r->has_period)
			s.values[COL_CPU] =
			    (int64_t)r->period; /* perf's cpu-clock periods are ns */
		else
			r->cpu_ns_missing = true;
	}
	s.has_pid = r->has_pid;
	s.pid = (int64_t)r->pid;
	s.has_tid = r->tid != UINT64_MAX;
	s.tid = (int64_t)r->tid;
	s.comm = r->text.data;
	s.comm_len = r->comm_len;
	int err = fg_pprof_add_ids(r->to, r->ids, r->nids, &s);
	if (err == -EOVERFLOW)
		logf_(r, "%s:%llu: a profile's total overflows 64 bits", r->name,
		      (unsigned long long)r->lineno);
	if (err)
		return err;
	r->st.samples++;
	(*r->to_samples)++;
	return 0;
}

static bool event_matches(struct fg_pprof_reader *r, struct fg_span ev)
{
	size_t n = r->event_exact ? ev.len : fg_ps_event_base_len(ev.p, ev.len);

	return n == r->event_len && memcmp(ev.p, r->event, n) == 0;
}

static int start_sample(struct fg_pprof_reader *r, const char *line, size_t len,
			const struct fg_ps_header *h)
{
	uint64_t t = 0;
	int err;

	r->in_sample = true;
	r->skip = false;
	r->lines = 0;
	r->nids = 0;
	r->ninl = 0;
	if (h->event.len) {
		size_t base = fg_ps_event_base_len(h->event.p, h->event.len);

		if (base == 11 && memcmp(h->event.p, "offcpu-time", 11) == 0) {
			r->kind = K_OFFCPU;
			r->seen_off = true;
		} else {
			if (!r->event) {
				r->event_len = base;
				r->event = fg_xstrndup(h->event.p, base);
				r->st.event = r->event;
			}
			if (!event_matches(r, h->event)) {
				r->st.other_events++;
				r->skip = true;
				return 0;
			}
			r->kind = K_CPU;
			r->seen_cpu = true;
		}
	} else {
		r->kind = K_CPU;
		r->seen_cpu = true;
	}
	r->clock_event =
	    r->event && is_clock_event(r->event, fg_ps_event_base_len(r->event, r->event_len));
	r->has_time = fg_ps_header_time_at(h, line, len, &t) == 0;
	r->time_ns = t;
	r->has_period = h->has_period;
	r->period = h->period;
	if (r->kind == K_CPU && r->clock_event && h->has_period && !r->clock_period)
		r->clock_period = h->period;
	r->has_pid = h->pid.len > 0;
	r->pid = h->pid_num;
	r->tid = h->tid_num;
	fg_buf_reset(&r->text);
	fg_buf_add(&r->text, h->comm.p, h->comm.len);
	r->comm_len = h->comm.len;
	/* the window, and so the profile, the sample's frames go into */
	if ((err = window_for(r, r->has_time, t)) != 0)
		return err;
	if (r->has_time) {
		if (!r->timed || t < r->first_ns)
			r->first_ns = t;
		if (!r->timed || t > r->last_ns)
			r->last_ns = t;
		r->timed = true;
	}
	/* a sample without a call chain: its frame follows the event */
	if (h->rest.len && frame(r, h->rest.p, h->rest.len) == 0)
		r->lines++;
	return 0;
}

static int perf_line(struct fg_pprof_reader *r, const char *line, size_t len)
{
	struct fg_ps_header h;
	struct fg_span src;
	int err;

	if (len && line[len - 1] == '\r')
		len--;
	/* frames first: most lines are */
	if (r->in_sample && len && (line[0] == '\t' || line[0] == ' ')) {
		if (r->skip) {
			if (!all_space(line, len))
				r->lines++;
			else if (r->lines)
				return end_sample(r);
			return 0;
		}
		if (frame(r, line, len) == 0) {
			r->lines++;
			return 0;
		}
		if (r->lines && fg_ps_is_srcline(line, len, &src))
			return 0;
	}
	if (len == 0 || all_space(line, len)) {
		/* a blank line ends a sample, unless nothing came since its header */
		return r->in_sample && r->lines ? end_sample(r) : 0;
	}
	if (line[0] == '#') {
		comment(r, line, len);
		return 0;
	}
	err = fg_ps_parse_header(line, len, &h);
	if (err == -ERANGE) {
		logf_(r, "%s:%llu: the period does not fit in 64 bits", r->name,
		      (unsigned long long)r->lineno);
		return -EOVERFLOW;
	}
	if (err == FG_PS_SIDEBAND) {
		if ((err = end_sample(r)) != 0)
			return err;
		sideband(r, (struct fg_span){ h.record.p, (size_t)(line + len - h.record.p) });
		return 0;
	}
	if (err == 0) {
		if ((err = end_sample(r)) != 0)
			return err;
		return start_sample(r, line, len, &h);
	}
	bad_line(r, r->in_sample ? "unrecognized line" : "line outside a sample", line, len);
	return 0;
}

/* --- folded stacks --- */

static int folded_line(struct fg_pprof_reader *r, const char *line, size_t len)
{
	struct fg_pprof_sample s = {.nframes = 0};
	struct fg_folded fl;
	const char *f;
	size_t pos = 0, n;
	double per = r->o.freq > 0 ? 1e9 / r->o.freq : 0;

	if (fg_folded_parse(line, len, &fl) != 0) {
		if (!all_space(line, len))
			bad_line(r, "line without a count", line, len);
		return 0;
	}
	if (fl.diff) {
		logf_(r, "%s:%llu: a differential profile (two counts): a pprof profile has one",
		      r->name, (unsigned long long)r->lineno);
		return -EINVAL;
	}
	r->nframes = 0;
	while (fg_folded_next_frame(fl.stack, fl.stack_len, &pos, &f, &n)) {
		FG_ALLOC_GROW(r->pf, r->nframes + 1, r->apf);
		r->pf[r->nframes++] = (struct fg_pprof_frame){.name = f, .name_len = n};
	}
	/* root first in the line, leaf first in the profile */
	for (size_t i = 0; i < r->nframes / 2; i++) {
		struct fg_pprof_frame t = r->pf[i];

		r->pf[i] = r->pf[r->nframes - 1 - i];
		r->pf[r->nframes - 1 - i] = t;
	}
	s.frames = r->pf;
	s.nframes = r->nframes;
	s.values[COL_SAMPLES] = (int64_t)llround(fl.count);
	if (per > 0)
		s.values[COL_CPU] = (int64_t)llround(fl.count * per);
	else
		r->cpu_ns_missing = true;
	r->seen_cpu = true;
	r->nframes = 0;
	return add(r, &s);
}

/* --- inputs --- */

/* perf script, folded or bpftrace, from the first lines that say */
static enum fg_fold_input detect(const char *data, size_t len)
{
	const char *p = data, *end = data + len;
	struct fg_ps_header h;
	struct fg_folded fl;

	for (int lines = 0; p < end && lines < 32;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		if (n && p[n - 1] == '\r')
			n--;
		if (n && p[0] != '#' && !all_space(p, n)) {
			lines++;
			if (p[0] == '@' || starts(p, n, "Attaching "))
				return FG_FOLD_BPFTRACE;
			if (p[0] == ' ' || p[0] == '\t' || (fg_ps_parse_header(p, n, &h) == 0 && !h.weak))
				return FG_FOLD_PERF;
			if (fg_folded_parse(p, n, &fl) == 0)
				return FG_FOLD_FOLDED;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return FG_FOLD_PERF;
}

static void fold_log(void *ctx, const char *msg)
{
	struct fg_pprof_reader *r = ctx;

	if (r->bad.log)
		r->bad.log(r->bad.ctx, msg);
}

/* bpftrace maps: folded by fg-fold's own engine, then read as folded stacks */
static int read_bpftrace(struct fg_pprof_reader *r, struct fg_lines *l)
{
	struct fg_fold_opts fo = {.input = FG_FOLD_BPFTRACE};
	struct fg_buf in = FG_BUF_INIT;
	const char *line;
	size_t len;
	char *out = NULL;
	size_t outlen = 0;
	int err;

	while ((err = fg_lines_next(l, &line, &len)) == 1) {
		fg_buf_add(&in, line, len);
		fg_buf_addch(&in, '\n');
	}
	if (err < 0) {
		fg_buf_release(&in);
		return err;
	}
	struct fg_fold *f = fg_fold_new(&fo, fold_log, r);
	err = fg_fold_read_mem(f, in.data ? in.data : "", in.len, r->name);
	FILE *mem = open_memstream(&out, &outlen);
	if (!mem)
		err = -errno;
	if (err == 0)
		err = fg_fold_write(f, mem);
	if (mem)
		fclose(mem);
	r->bad.count += fg_fold_stats(f)->bad_lines;
	r->st.bad_lines = r->bad.count;
	fg_fold_free(f);
	fg_buf_release(&in);
	for (const char *p = out, *end = out + outlen; err == 0 && p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		r->lineno++;
		err = folded_line(r, p, (size_t)((nl ? nl : end) - p));
		p = nl ? nl + 1 : end;
	}
	free(out);
	return err;
}

int fg_pprof_reader_read(struct fg_pprof_reader *r, int fd, const char *name)
{
	struct fg_lines l;
	const char *line;
	size_t len;
	int err;

	fg_lines_init_fd(&l, fd, name);
	r->name = name;
	r->lineno = 0;
	r->in_sample = false;
	err = fg_lines_peek(&l, DETECT_BYTES, &line, &len);
	if (err == 0 && memchr(line, '\0', len)) {
		logf_(r,
		      "%s: binary input, not text (records from fg-sample?); run it through "
		      "fg-sym first: fg-sym < FILE | fg-pprof",
		      name);
		err = -EMEDIUMTYPE;
		goto out;
	}
	if (err == 0) {
		r->fmt = r->o.input != FG_FOLD_AUTO ? r->o.input : detect(line, len);
		if (r->o.every_ns && r->fmt != FG_FOLD_PERF) {
			logf_(r,
			      "%s: %s input has no times: windows (--every) need perf script text",
			      name, fg_fold_input_name(r->fmt));
			err = -EINVAL;
			goto out;
		}
	}
	if (err == 0 && r->fmt == FG_FOLD_BPFTRACE) {
		err = read_bpftrace(r, &l);
	} else {
		while (err == 0 && (err = fg_lines_next(&l, &line, &len)) == 1) {
			r->lineno++;
			err = r->fmt == FG_FOLD_FOLDED ? folded_line(r, line, len)
						       : perf_line(r, line, len);
		}
		if (err == 0 && r->fmt == FG_FOLD_PERF)
			err = end_sample(r);
	}
	if (err < 0 && err != -EOVERFLOW && err != -EINVAL && err != -EMEDIUMTYPE && err != -ENOMEM)
		logf_(r, "cannot read '%s': %s", name, strerror(-err));
out:
	fg_lines_release(&l);
	return err;
}

int fg_pprof_reader_finish(struct fg_pprof_reader *r)
{
	int err = end_sample(r);

	if (err)
		return err;
	r->st.freq_unknown = r->seen_cpu && r->cpu_ns_missing;
	r->st.freq = ns_per_sample(r) > 0 ? 1e9 / ns_per_sample(r) : 0;
	if (!r->o.every_ns)
		return emit_profile(r, r->p, r->win_samples, false, 0);
	err = emit_prev(r);
	if (!err && r->win_samples)
		err = emit_profile(r, r->p, r->win_samples, true, fg_window_start(&r->win));
	fg_pprof_free(r->p);
	r->p = fg_pprof_new();
	new_profile(r);
	r->win_samples = 0;
	return err;
}

const struct fg_pprof_stats *fg_pprof_reader_stats(const struct fg_pprof_reader *r)
{
	return &r->st;
}

struct fg_pprof_reader *fg_pprof_reader_new(const struct fg_pprof_reader_opts *opts,
					    fg_pprof_emit_fn emit, void *ctx, fg_fold_log_fn log,
					    void *log_ctx)
{
	struct fg_pprof_reader *r = fg_xcalloc(1, sizeof(*r));

	r->o = *opts;
	r->emit = emit;
	r->ctx = ctx;
	r->bad.log = log;
	r->bad.ctx = log_ctx;
	r->p = r->to = fg_pprof_new();
	r->to_samples = &r->win_samples;
	r->lcache = fg_hmap_new(1024);
	r->win.every_ns = opts->every_ns;
	r->build_ids = fg_hmap_new(64);
	if (opts->event_filter) {
		r->event_len = strlen(opts->event_filter);
		r->event = fg_xstrdup(opts->event_filter);
		/* "cycles" matches cycles:u and cycles:k; "cycles:u" only itself */
		r->event_exact = fg_ps_event_base_len(r->event, r->event_len) != r->event_len;
		r->st.event = r->event;
	}
	return r;
}

void fg_pprof_reader_free(struct fg_pprof_reader *r)
{
	if (!r)
		return;
	fg_pprof_free(r->p);
	fg_pprof_free(r->prev);
	fg_hmap_free(r->lcache);
	fg_hmap_free(r->build_ids);
	fg_buf_release(&r->bid_text);
	fg_buf_release(&r->text);
	free(r->event);
	free(r->ids);
	free(r->inl);
	free(r->pf);
	free(r);
}
