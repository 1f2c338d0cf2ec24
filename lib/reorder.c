// SPDX-License-Identifier: BSD-2-Clause
/* The time-ordering queue: records held until every source has passed their time. */
#include <stdlib.h>
#include <string.h>

#include "fg/buf.h"
#include "fg/diag.h"
#include "fg/reorder.h"

struct rq_ent {
	uint64_t time;
	uint64_t seq;
	size_t off; /* in the arena: struct fg_rec_hdr-less payload */
	uint32_t len;
	uint32_t type;
};

struct fg_rq {
	struct rq_ent *ents;
	size_t n, alloc;
	struct fg_buf arena;
	uint64_t seq;
	uint64_t written[FG_REC_TYPE_MAX + 1];
	uint64_t sample_flags[32]; /* samples written with each flag bit */
	uint64_t flushed;	   /* the last flush's time: later records are in order */
	bool any_flushed;
	uint64_t late; /* records queued with a time at or before a flush's */
};

struct fg_rq *fg_rq_new(void)
{
	return fg_xcalloc(1, sizeof(struct fg_rq));
}

void fg_rq_free(struct fg_rq *q)
{
	if (!q)
		return;
	free(q->ents);
	fg_buf_release(&q->arena);
	free(q);
}

size_t fg_rq_len(const struct fg_rq *q)
{
	return q->n;
}

uint64_t fg_rq_written(const struct fg_rq *q, uint32_t type)
{
	return type <= FG_REC_TYPE_MAX ? q->written[type] : 0;
}

uint64_t fg_rq_late(const struct fg_rq *q)
{
	return q->late;
}

uint64_t fg_rq_written_with(const struct fg_rq *q, uint32_t flag)
{
	int bit = flag ? __builtin_ctz(flag) : 0;

	return flag && !(flag & (flag - 1)) ? q->sample_flags[bit] : 0;
}

/* Count the flags of a sample written (its payload starts with struct fg_rec_sample). */
static void count_flags(struct fg_rq *q, const void *payload, size_t len)
{
	struct fg_rec_sample smp;

	if (len < sizeof(smp))
		return;
	memcpy(&smp, payload, sizeof(smp));
	for (uint32_t f = smp.flags; f; f &= f - 1)
		q->sample_flags[__builtin_ctz(f)]++;
}

void fg_rq_add(struct fg_rq *q, uint64_t time, uint32_t type, const void *p1, size_t l1,
	       const void *p2, size_t l2)
{
	struct rq_ent *e;

	if (q->any_flushed && time <= q->flushed)
		q->late++;
	FG_ALLOC_GROW(q->ents, q->n + 1, q->alloc);
	e = &q->ents[q->n++];
	e->time = time;
	e->seq = q->seq++;
	e->type = type;
	e->off = q->arena.len;
	e->len = (uint32_t)(l1 + l2);
	fg_buf_add(&q->arena, p1, l1);
	if (l2)
		fg_buf_add(&q->arena, p2, l2);
}

static int ent_cmp(const void *a, const void *b)
{
	const struct rq_ent *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int fg_rq_flush(struct fg_rq *q, uint64_t upto, struct fg_rec_writer *w, fg_rq_keep_fn keep,
		void *ctx)
{
	size_t i, kept = 0;
	struct fg_buf rest = FG_BUF_INIT;
	int err = 0;

	if (!q->any_flushed || upto > q->flushed)
		q->flushed = upto;
	q->any_flushed = true;
	if (!q->n)
		return fg_rec_writer_error(w);
	qsort(q->ents, q->n, sizeof(*q->ents), ent_cmp);
	for (i = 0; i < q->n && q->ents[i].time <= upto; i++) {
		struct rq_ent *e = &q->ents[i];

		if (keep && !keep(ctx, e->type, q->arena.data + e->off, e->len))
			continue;
		err = fg_rec_write(w, e->type, q->arena.data + e->off, e->len);
		if (err)
			break;
		if (e->type <= FG_REC_TYPE_MAX)
			q->written[e->type]++;
		if (e->type == FG_REC_SAMPLE)
			count_flags(q, q->arena.data + e->off, e->len);
	}
	if (err) {
		q->n = 0;
		fg_buf_reset(&q->arena);
		return err;
	}
	/* keep the later ones, compacting the arena */
	for (; i < q->n; i++) {
		struct rq_ent e = q->ents[i];

		fg_buf_add(&rest, q->arena.data + e.off, e.len);
		e.off = rest.len - e.len;
		q->ents[kept++] = e;
	}
	q->n = kept;
	fg_buf_release(&q->arena);
	q->arena = rest;
	return 0;
}
