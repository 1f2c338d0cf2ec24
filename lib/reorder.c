// SPDX-License-Identifier: BSD-2-Clause
/* The time-ordering queue: records held until every source has passed their time. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/reorder.h"

/*
 * Each record is held whole in the arena, as it goes out (struct fg_rec_hdr,
 * the payload, zeros to 8 bytes), so that a flush hands the writer runs of
 * records in place, with no copy of its own: a --call-graph dwarf sample is
 * some 8 KiB.
 */
struct rq_ent {
	uint64_t time;
	uint64_t seq;
	size_t off;   /* of the record's header in the arena */
	uint32_t len; /* of its payload */
	uint32_t type;
};

#define HDR sizeof(struct fg_rec_hdr)

/* bytes of e's record in the arena (an empty one in the place of one too large) */
static size_t ent_size(const struct rq_ent *e)
{
	return fg_rec_size(e->len == UINT32_MAX ? 0 : e->len);
}

struct fg_reorder {
	struct rq_ent *ents;
	size_t n, alloc;
	/* the records queued, and a spare into which a flush moves those left: both kept */
	struct fg_buf arena, spare;
	uint64_t seq;
	uint64_t written[FG_REC_TYPE_MAX + 1];
	uint64_t sample_flags[32]; /* samples written with each flag bit */
	uint64_t flushed;	   /* the last flush's time: later records are in order */
	bool any_flushed;
	uint64_t late; /* records queued with a time at or before a flush's */
};

struct fg_reorder *fg_reorder_new(void)
{
	return fg_xcalloc(1, sizeof(struct fg_reorder));
}

void fg_reorder_free(struct fg_reorder *q)
{
	if (!q)
		return;
	free(q->ents);
	fg_buf_release(&q->arena);
	fg_buf_release(&q->spare);
	free(q);
}

size_t fg_reorder_len(const struct fg_reorder *q)
{
	return q->n;
}

uint64_t fg_reorder_written(const struct fg_reorder *q, uint32_t type)
{
	return type <= FG_REC_TYPE_MAX ? q->written[type] : 0;
}

uint64_t fg_reorder_late(const struct fg_reorder *q)
{
	return q->late;
}

uint64_t fg_reorder_written_with(const struct fg_reorder *q, uint32_t flag)
{
	int bit = flag ? __builtin_ctz(flag) : 0;

	return flag && !(flag & (flag - 1)) ? q->sample_flags[bit] : 0;
}

/* Count the flags of a sample written (its payload starts with struct fg_rec_sample). */
static void count_flags(struct fg_reorder *q, const void *payload, size_t len)
{
	struct fg_rec_sample smp;

	if (len < sizeof(smp))
		return;
	memcpy(&smp, payload, sizeof(smp));
	for (uint32_t f = smp.flags; f; f &= f - 1)
		q->sample_flags[__builtin_ctz(f)]++;
}

void fg_reorder_addv(struct fg_reorder *q, uint64_t time, uint32_t type, const struct iovec *iov,
		     int n)
{
	struct rq_ent *e;
	size_t len = 0, size;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	size = fg_rec_size(len);
	if (q->any_flushed && time <= q->flushed)
		q->late++;
	FG_ALLOC_GROW(q->ents, q->n + 1, q->alloc);
	e = &q->ents[q->n++];
	e->time = time;
	e->seq = q->seq++;
	e->type = type;
	e->off = q->arena.len;
	e->len = (uint32_t)len;
	/* one too large for a record keeps its place, refused at the flush as the writer does */
	if (!size) {
		e->len = UINT32_MAX;
		n = 0;
		size = fg_rec_size(0);
	}
	fg_buf_grow(&q->arena, size);
	fg_rec_lay(q->arena.data + q->arena.len, type, iov, n);
	q->arena.len += size;
}

void fg_reorder_add(struct fg_reorder *q, uint64_t time, uint32_t type, const void *p1, size_t l1,
		    const void *p2, size_t l2)
{
	struct iovec iov[2] = {{(void *)p1, l1}, {(void *)p2, l2}};

	fg_reorder_addv(q, time, type, iov, 2);
}

static int ent_cmp(const void *a, const void *b)
{
	const struct rq_ent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int fg_reorder_flush(struct fg_reorder *q, uint64_t upto, struct fg_rec_writer *w,
		     fg_reorder_keep_fn keep, void *ctx)
{
	size_t i, kept = 0, run = 0, run_len = 0;
	struct fg_buf tmp;
	int err = 0;

	if (!q->any_flushed || upto > q->flushed)
		q->flushed = upto;
	q->any_flushed = true;
	if (!q->n)
		return fg_rec_writer_error(w);
	qsort(q->ents, q->n, sizeof(*q->ents), ent_cmp);
	/* the records kept, in runs that lie end to end in the arena, each handed over whole */
	for (i = 0; i < q->n && q->ents[i].time <= upto; i++) {
		struct rq_ent *e = &q->ents[i];
		const uint8_t *rec = (const uint8_t *)q->arena.data + e->off;

		if (e->len == UINT32_MAX) {
			err = -EMSGSIZE;
			break;
		}
		if (keep && !keep(ctx, e->type, rec + HDR, e->len))
			continue;
		if (run_len && run + run_len != e->off) {
			err = fg_rec_writer_put(w, q->arena.data + run, run_len);
			run_len = 0;
			if (err)
				break;
		}
		if (!run_len)
			run = e->off;
		run_len += ent_size(e);
		if (e->type <= FG_REC_TYPE_MAX)
			q->written[e->type]++;
		if (e->type == FG_REC_SAMPLE)
			count_flags(q, rec + HDR, e->len);
	}
	if (!err && run_len)
		err = fg_rec_writer_put(w, q->arena.data + run, run_len);
	if (err) {
		q->n = 0;
		fg_buf_reset(&q->arena);
		return err;
	}
	/* keep the later ones, moved to the spare arena, which then takes the arena's place */
	fg_buf_reset(&q->spare);
	for (; i < q->n; i++) {
		struct rq_ent e = q->ents[i];
		size_t size = ent_size(&e);

		fg_buf_add(&q->spare, q->arena.data + e.off, size);
		e.off = q->spare.len - size;
		q->ents[kept++] = e;
	}
	q->n = kept;
	tmp = q->arena;
	q->arena = q->spare;
	q->spare = tmp;
	return 0;
}
