// SPDX-License-Identifier: BSD-2-Clause
/*
 * perf script text, folded stacks and bpftrace maps into pprof profiles: what
 * fg_fold (fg/fold.h) reads, sample by sample through its hooks, with the
 * frames it parses and the names it gives them, kept as pprof keeps them
 * (addresses, modules, inlined functions, pid, tid, comm and time).
 *
 * Names.  A function is named as fg-fold names the frame: perf's symbol
 * without its offset, C++ argument lists cut, Java's "a->b" split into
 * inlined functions (extra Lines of the location), Rust's legacy escapes
 * decoded.  So `go tool pprof -top` gives each function the share fg-fold
 * gives it; the address and the mapping's file stay, for a client that wants
 * to name the frames again.  A frame perf could not name stays unnamed (no
 * Line), so that pprof and the backends may name it from the mapping.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/badline.h"
#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/fold.h"
#include "fg/folded.h"
#include "fg/hash.h"
#include "fg/perfscript.h"
#include "fg/pprof_read.h"
#include "fg/psheader.h"
#include "fg/window.h"

#define MAX_EVENTS 16
#define MAX_BUILD_IDS 65536
#define OFFCPU_EVENT "offcpu-time"

enum { COL_SAMPLES, COL_CPU, COL_OFFCPU, COL_EVENTS };

struct fg_pprof_reader {
	struct fg_pprof_reader_opts o;
	fg_pprof_emit_fn emit;
	void *ctx;
	fg_log_fn log;
	void *log_ctx;
	struct fg_pprof_stats st;
	struct fg_fold *f; /* the engine: fg-fold's reading and naming */

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
	struct fg_psheader_event ev[MAX_EVENTS];
	size_t nev;
	struct fg_hash *build_ids; /* path -> build-id (val: offset << 8 | length in bid_text) */
	struct fg_buf bid_text;

	bool seen_cpu, seen_off, cpu_ns_missing;
	const char *name; /* the current input */

	/*
	 * A frame line gives the same location every time in one profile: by the
	 * line's number (fg_fold_frame.line_id), the serial of the profile << 32
	 * | the location, so that a line seen before is not looked up again
	 */
	uint64_t *lcache[2];
	size_t alcache[2];
	uint32_t serial; /* of r->p; another profile, another serial */

	/* the sample being added */
	uint32_t *ids; /* its locations, leaf first */
	size_t nids, aids;
	struct fg_pprof_frame *pf;
	size_t apf;
};

#define logf_(r, ...) fg_logf((r)->log, (r)->log_ctx, __VA_ARGS__)

static bool starts(const char *p, size_t len, const char *lit)
{
	size_t n = strlen(lit);

	return len >= n && memcmp(p, lit, n) == 0;
}

/* the CPU event: fg_fold's (the first one seen, or the filter), NULL before any */
static const char *cpu_event(const struct fg_pprof_reader *r)
{
	return fg_fold_stats(r->f)->event;
}

/* --- header comments and side-band records --- */

static int comment(void *ctx, const char *line, size_t len)
{
	struct fg_pprof_reader *r = ctx;
	struct fg_psheader_event ei;
	uint64_t tod, clk;

	if (fg_psheader_parse_event(line, len, &ei) == 0) {
		if (r->nev < MAX_EVENTS)
			r->ev[r->nev++] = ei;
	} else if (fg_psheader_parse_reftime(line, len, &tod, &clk) == 0) {
		r->win.have_ref = true;
		r->win.ref_offset = (int64_t)(tod - clk);
	}
	return 0;
}

/* "PERF_RECORD_MMAP2 PID/TID: [0xSTART(0xLEN) @ 0xPGOFF <BUILDID>]: PROT PATH" */
static int sideband(void *ctx, const struct fg_ps_header *h, const char *line, size_t len)
{
	struct fg_pprof_reader *r = ctx;
	const char *s = h->record.p, *end = line + len, *lt, *gt, *path;
	size_t n = (size_t)(end - s);

	if (!starts(s, n, "PERF_RECORD_MMAP2 ") && !starts(s, n, "PERF_RECORD_MMAP "))
		return 0;
	lt = memchr(s, '<', n);
	if (!lt || !(gt = memchr(lt, '>', (size_t)(end - lt))) || gt - lt - 1 > 128)
		return 0;
	/* the path follows "]: PROT " */
	path = memmem(gt, (size_t)(end - gt), "]: ", 3);
	if (!path || !(path = memchr(path + 3, ' ', (size_t)(end - path - 3))))
		return 0;
	path++;
	if (path >= end || fg_hash_count(r->build_ids) >= MAX_BUILD_IDS)
		return 0;
	struct fg_hash_entry *e = fg_hash_upsert(r->build_ids, path, (size_t)(end - path), NULL);
	e->val.u = (uint64_t)r->bid_text.len << 8 | (uint64_t)(gt - lt - 1);
	fg_buf_add(&r->bid_text, lt + 1, (size_t)(gt - lt - 1));
	return 0;
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
	const char *ev = cpu_event(r);
	size_t base = ev ? fg_ps_event_base_len(ev, strlen(ev)) : 0;

	for (size_t i = 0; ev && i < r->nev; i++) {
		const struct fg_psheader_event *e = &r->ev[i];

		if (strlen(e->name) != base || memcmp(e->name, ev, base))
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
	} else if (r->seen_cpu && cpu_event(r)) {
		/* no time: the event's own count (its periods) instead */
		snprintf(evtype, sizeof(evtype), "%s", cpu_event(r));
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
		r->serial++;
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

/* --- samples --- */

/* the location of the frames pf[0, n): the inlined functions first, the one that holds the address
 * last */
static void push_location(struct fg_pprof_reader *r, size_t n)
{
	FG_ALLOC_GROW(r->ids, r->nids + 1, r->aids);
	r->ids[r->nids++] = fg_pprof_location(r->to, r->pf, n);
}

static bool unnamed(struct fg_span sym)
{
	return sym.len == 0 || fg_span_eq(sym, "[unknown]");
}

/*
 * A perf sample's locations, leaf first: each frame line's names (Java's
 * a->b: the inner ones inlined), after the "(inlined)" lines before it
 */
static void perf_locations(struct fg_pprof_reader *r, const struct fg_fold_sample *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nframes; i++) {
		const struct fg_fold_frame *fr = &s->frames[i];
		uint64_t *lc = NULL;

		if (n == 0 && r->to == r->p && fr->line_id != FG_FOLD_NO_ID && !fr->inlined) {
			int k = fr->line_id >> 31;
			size_t idx = fr->line_id & 0x7fffffff, old = r->alcache[k];

			if (idx >= old) {
				FG_ALLOC_GROW(r->lcache[k], idx + 1, r->alcache[k]);
				memset(r->lcache[k] + old, 0,
				       (r->alcache[k] - old) * sizeof(uint64_t));
			}
			lc = &r->lcache[k][idx];
			if (*lc && *lc >> 32 == r->serial) {
				FG_ALLOC_GROW(r->ids, r->nids + 1, r->aids);
				r->ids[r->nids++] = (uint32_t)*lc;
				continue;
			}
		}
		FG_ALLOC_GROW(r->pf, n + fr->nnames + 1, r->apf);
		for (size_t k = 0; k < fr->nnames; k++) {
			const struct fg_fold_name *nm = &s->names[fr->name0 + k];

			r->pf[n++] = (struct fg_pprof_frame){
			    .name = nm->name, .name_len = nm->len, .inlined = true};
		}
		if (fr->inlined || fr->nnames == 0)
			continue; /* shares the location of the frame after it; "(...)": none */
		struct fg_pprof_frame *last = &r->pf[n - 1];
		if (unnamed(fr->ps.sym)) {
			/* left to pprof: no Line */
			last = &r->pf[n - fr->nnames];
			n -= fr->nnames - 1;
			*last = (struct fg_pprof_frame){.inlined = false};
		}
		last->inlined = false;
		last->addr = fg_span_hex(fr->ps.addr);
		last->has_addr = true;
		if (fr->ps.module.len && !fg_span_eq(fr->ps.module, "[unknown]")) {
			const struct fg_hash_entry *e =
			    fg_hash_get(r->build_ids, fr->ps.module.p, fr->ps.module.len);

			last->file = fr->ps.module.p;
			last->file_len = fr->ps.module.len;
			if (e) {
				last->build_id = r->bid_text.data + (e->val.u >> 8);
				last->build_id_len = e->val.u & 0xff;
			}
		}
		push_location(r, n);
		if (lc)
			*lc = (uint64_t)r->serial << 32 | r->ids[r->nids - 1];
		n = 0;
	}
	if (n) {
		r->pf[n - 1].inlined = false; /* inlined into nothing: the last stands alone */
		push_location(r, n);
	}
}

/* a folded line's (or a bpftrace entry's) locations by name, leaf first */
static void folded_locations(struct fg_pprof_reader *r, const struct fg_fold_sample *s)
{
	size_t pos = 0, n, start = r->nids;
	const char *name;

	while (fg_folded_next_frame(s->stack, s->stack_len, &pos, &name, &n)) {
		FG_ALLOC_GROW(r->pf, 1, r->apf);
		r->pf[0] = (struct fg_pprof_frame){.name = name, .name_len = n};
		push_location(r, 1);
	}
	/* root first in the line */
	for (size_t i = start, j = r->nids; i + 1 < j; i++, j--) {
		uint32_t t = r->ids[i];

		r->ids[i] = r->ids[j - 1];
		r->ids[j - 1] = t;
	}
}

static double count_value(const struct fg_count *c)
{
	double v = (double)c->whole, d = (double)c->frac;

	for (unsigned i = 0; i < c->dec; i++)
		d /= 10;
	return v + d;
}

static int folded_sample(struct fg_pprof_reader *r, const struct fg_fold_sample *s)
{
	struct fg_pprof_sample ps = {.nframes = 0};
	double per = r->o.freq > 0 ? 1e9 / r->o.freq : 0, count = count_value(&s->count);

	if (s->columns == 2) {
		logf_(r, "%s:%llu: a differential profile (two counts): a pprof profile has one",
		      r->name, (unsigned long long)s->lineno);
		return -EINVAL;
	}
	if (r->o.every_ns) {
		logf_(r, "%s: %s input has no times: windows (--every) need perf script text",
		      r->name, fg_fold_input_name(s->input));
		return -EINVAL;
	}
	folded_locations(r, s);
	ps.values[COL_SAMPLES] = (int64_t)llround(count);
	if (per > 0)
		ps.values[COL_CPU] = (int64_t)llround(count * per);
	else
		r->cpu_ns_missing = true;
	r->seen_cpu = true;
	return fg_pprof_add_ids(r->p, r->ids, r->nids, &ps);
}

static int on_sample(void *ctx, const struct fg_fold_sample *s)
{
	struct fg_pprof_reader *r = ctx;
	struct fg_pprof_sample ps = {.nframes = 0};
	const struct fg_ps_header *h = s->h;
	uint64_t t = 0;
	int err;

	r->nids = 0;
	if (s->input != FG_FOLD_PERF) {
		r->to = r->p;
		r->to_samples = &r->win_samples;
		err = folded_sample(r, s);
		goto added;
	}
	const char *ev = cpu_event(r);
	bool clock_event = ev && is_clock_event(ev, fg_ps_event_base_len(ev, strlen(ev)));
	bool has_time = fg_psheader_time_ns(h, &t) == 0;

	if (s->extra_event)
		r->seen_off = true;
	else
		r->seen_cpu = true;
	if (!s->extra_event && clock_event && h->has_period && !r->clock_period)
		r->clock_period = h->period;
	/* the window, and so the profile, the sample's frames go into */
	if ((err = window_for(r, has_time, t)) != 0)
		return err;
	if (has_time) {
		if (!r->timed || t < r->first_ns)
			r->first_ns = t;
		if (!r->timed || t > r->last_ns)
			r->last_ns = t;
		r->timed = true;
	}
	perf_locations(r, s);
	if (r->nids == 0) {
		/* a sample without a frame: pprof's clients drop a sample without a location */
		FG_ALLOC_GROW(r->pf, 1, r->apf);
		r->pf[0] = (struct fg_pprof_frame){.name = "[unknown]", .name_len = 9};
		push_location(r, 1);
		r->st.no_frames++;
	}
	ps.values[COL_SAMPLES] = 1;
	if (s->extra_event) {
		ps.values[COL_OFFCPU] = h->has_period ? (int64_t)h->period : 0;
	} else {
		double per = ns_per_sample(r);

		ps.values[COL_EVENTS] = h->has_period ? (int64_t)h->period : 1;
		if (per > 0)
			ps.values[COL_CPU] = (int64_t)llround(per);
		else if (clock_event && h->has_period)
			ps.values[COL_CPU] =
			    (int64_t)h->period; /* perf's cpu-clock periods are ns */
		else
			r->cpu_ns_missing = true;
	}
	ps.has_pid = h->pid.len > 0;
	ps.pid = (int64_t)h->pid_num;
	ps.has_tid = h->tid_num != UINT64_MAX;
	ps.tid = (int64_t)h->tid_num;
	ps.comm = h->comm.p;
	ps.comm_len = h->comm.len;
	err = fg_pprof_add_ids(r->to, r->ids, r->nids, &ps);
added:
	if (err == -EOVERFLOW)
		logf_(r, "%s:%llu: a profile's total overflows 64 bits", r->name,
		      (unsigned long long)s->lineno);
	if (err)
		return err;
	r->st.samples++;
	(*r->to_samples)++;
	return 0;
}

/* --- inputs --- */

int fg_pprof_reader_read(struct fg_pprof_reader *r, int fd, const char *name)
{
	const struct fg_fold_stats *fs = fg_fold_stats(r->f);
	uint64_t refused = fs->refused;
	int err;

	r->name = name;
	err = fg_fold_read(r->f, fd, name);
	r->st.other_events = fs->other_events;
	r->st.bad_lines = fs->bad_lines;
	r->st.sideband = fs->sideband;
	r->st.event = fs->event;
	/* a period or a count past 2^64-1 (said, by line) spoils the profile's totals */
	if (err == 0 && fs->refused != refused)
		err = -EOVERFLOW;
	return err;
}

int fg_pprof_reader_finish(struct fg_pprof_reader *r)
{
	int err;

	r->st.freq_unknown = r->seen_cpu && r->cpu_ns_missing;
	r->st.freq = ns_per_sample(r) > 0 ? 1e9 / ns_per_sample(r) : 0;
	r->st.event = cpu_event(r);
	if (!r->o.every_ns)
		return emit_profile(r, r->p, r->win_samples, false, 0);
	err = emit_prev(r);
	if (!err && r->win_samples)
		err = emit_profile(r, r->p, r->win_samples, true, fg_window_start(&r->win));
	fg_pprof_free(r->p);
	r->p = r->to = fg_pprof_new();
	r->serial++;
	r->to_samples = &r->win_samples;
	r->win_samples = 0;
	return err;
}

const struct fg_pprof_stats *fg_pprof_reader_stats(const struct fg_pprof_reader *r)
{
	return &r->st;
}

struct fg_pprof_reader *fg_pprof_reader_new(const struct fg_pprof_reader_opts *opts,
					    fg_pprof_emit_fn emit, void *ctx, fg_log_fn log,
					    void *log_ctx)
{
	struct fg_pprof_reader *r = fg_xcalloc(1, sizeof(*r));
	struct fg_fold_opts fo = {
	    .input = opts->input,
	    .event_filter = opts->event_filter,
	    .extra_event = OFFCPU_EVENT,
	};
	struct fg_fold_hooks hooks = {
	    .sample = on_sample,
	    .flags = FG_FOLD_FRAMES | FG_FOLD_NO_TABLE,
	    .record = sideband,
	    .comment = comment,
	    .ctx = r,
	};

	r->o = *opts;
	r->emit = emit;
	r->ctx = ctx;
	r->log = log;
	r->log_ctx = log_ctx;
	r->f = fg_fold_new(&fo, log, log_ctx);
	fg_fold_set_hooks(r->f, &hooks);
	r->p = r->to = fg_pprof_new();
	r->serial = 1;
	r->to_samples = &r->win_samples;
	r->win.every_ns = opts->every_ns;
	r->build_ids = fg_hash_new(64);
	r->st.event = opts->event_filter;
	return r;
}

void fg_pprof_reader_free(struct fg_pprof_reader *r)
{
	if (!r)
		return;
	fg_fold_free(r->f);
	fg_pprof_free(r->p);
	fg_pprof_free(r->prev);
	fg_hash_free(r->build_ids);
	fg_buf_release(&r->bid_text);
	free(r->ids);
	free(r->pf);
	free(r->lcache[0]);
	free(r->lcache[1]);
	free(r);
}
