// SPDX-License-Identifier: BSD-2-Clause
/* What a reader knows of a capture as a whole (fg/capture.h). */
#include <inttypes.h>

#include "fg/capture.h"

static void count(struct fg_capture_count *k, uint64_t n)
{
	if (k->n + n < k->n || (k->saturated && n))
		k->saturated = true;
	k->n = fg_sat_add(k->n, n);
}

static void saw_time(struct fg_capture *c, uint64_t t)
{
	if (!t)
		return; /* the /proc snapshot: no time */
	if (!c->first_ns || t < c->first_ns)
		c->first_ns = t;
	if (t > c->last_ns)
		c->last_ns = t;
}

void fg_capture_add(struct fg_capture *c, const struct fg_rec *rec)
{
	c->records++;
	switch (rec->type) {
	case FG_REC_SAMPLE:
		c->samples++;
		saw_time(c, rec->sample->time_ns);
		if (rec->sample->flags & FG_SAMPLE_F_OFFCPU) {
			c->waits++;
			if (rec->sample->flags & FG_SAMPLE_F_OPEN)
				c->waits_open++;
		}
		break;
	case FG_REC_MAPPING:
		saw_time(c, rec->mapping->time_ns);
		break;
	case FG_REC_COMM:
		saw_time(c, rec->comm->time_ns);
		break;
	case FG_REC_EXIT:
	case FG_REC_FORK:
		saw_time(c, rec->task->time_ns);
		break;
	case FG_REC_CREDS:
		saw_time(c, rec->creds->time_ns);
		break;
	case FG_REC_LOST:
		saw_time(c, rec->lost->time_ns);
		switch (rec->lost->reason) {
		case FG_LOST_RINGBUF_FULL:
			count(&c->samples_lost, rec->lost->count);
			break;
		case FG_LOST_SIDEBAND:
			count(&c->events_lost, rec->lost->count);
			break;
		case FG_LOST_CPU_OFFLINE:
			c->cpus_offline++;
			break;
		case FG_LOST_BUSY:
			count(&c->busy_lost, rec->lost->count);
			break;
		case FG_LOST_WAITS_RINGBUF_FULL:
			count(&c->waits_lost, rec->lost->count);
			break;
		case FG_LOST_WAITS_UNSEEN:
			count(&c->waits_unseen, rec->lost->count);
			break;
		case FG_LOST_WAITS_NO_END:
			count(&c->waits_no_end, rec->lost->count);
			break;
		default:
			count(&c->other_lost, rec->lost->count);
			break;
		}
		break;
	case FG_REC_SUMMARY:
		c->ended = true;
		c->summary = *rec->summary;
		break;
	}
}

void fg_capture_describe(const struct fg_capture *c, struct fg_buf *b)
{
	fg_buf_addf(b, "%" PRIu64 " records, %" PRIu64 " samples", c->records, c->samples);
	if (c->first_ns)
		fg_buf_addf(
		    b, " over %.2f s (from %" PRIu64 ".%06" PRIu64 " to %" PRIu64 ".%06" PRIu64 ")",
		    (double)(c->last_ns - c->first_ns) / 1e9, c->first_ns / 1000000000,
		    c->first_ns % 1000000000 / 1000, c->last_ns / 1000000000,
		    c->last_ns % 1000000000 / 1000);
}

static void add_count(struct fg_buf *b, bool *first, const struct fg_capture_count *k,
		      const char *what)
{
	if (!k->n)
		return;
	fg_buf_addf(b, "%s%s%" PRIu64 " %s", *first ? "" : ", ", k->saturated ? "at least " : "",
		    k->n, what);
	*first = false;
}

bool fg_capture_describe_lost(const struct fg_capture *c, struct fg_buf *b)
{
	bool first = true;

	add_count(b, &first, &c->samples_lost, "samples (its ring buffer was full)");
	add_count(b, &first, &c->events_lost,
		  "mapping, comm or task events (its perf buffer overflowed)");
	add_count(b, &first, &c->busy_lost,
		  "events (their CPU was inside another BPF program, taking a sample)");
	add_count(b, &first, &c->waits_lost, "waits (their ring buffer was full)");
	add_count(b, &first, &c->waits_unseen, "waits it did not follow (no memory to keep them)");
	add_count(b, &first, &c->waits_no_end, "waits whose end the kernel did not report");
	add_count(b, &first, &c->other_lost, "things for reasons this fg-sym does not know");
	return !first;
}
