/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The time-ordering queue: fg-sample's samples (from the BPF ring buffer)
 * and side-band events (mappings, comm, fork, exit, creds: fg/sideband.h)
 * arrive from different buffers, each in its own order.  The queue holds
 * them as records of the stream, and writes those up to a time in time
 * order, so that a reader sees a process's mappings before its samples and
 * a fork before the child's events.  It counts what it wrote, for the
 * summary.
 *
 *	struct fg_reorder *q = fg_reorder_new();
 *	fg_reorder_add(q, t, FG_REC_SAMPLE, &s, sizeof(s), ips, 8 * n);
 *	fg_reorder_flush(q, now, writer, keep, ctx);	// every record up to `now`
 *	fg_reorder_free(q);
 */
#ifndef FG_REORDER_H
#define FG_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "fg/record.h"

struct fg_reorder;

struct fg_reorder *fg_reorder_new(void);
void fg_reorder_free(struct fg_reorder *q);
/* Queue a record: `type`, then the bytes of p1 and p2 as its payload. */
void fg_reorder_add(struct fg_reorder *q, uint64_t time, uint32_t type, const void *p1, size_t l1,
		    const void *p2, size_t l2);
/*
 * The same with the payload in `n` parts, copied once, into the record as it
 * will be written.  One over FG_REC_MAX_SIZE makes the flush that reaches it
 * fail with -EMSGSIZE, as fg_rec_write() would.
 */
void fg_reorder_addv(struct fg_reorder *q, uint64_t time, uint32_t type, const struct iovec *iov,
		     int n);
/*
 * Which records to write, asked in time order (so that a fork is seen
 * before the events of the child it creates): the record type and payload.
 */
typedef bool (*fg_reorder_keep_fn)(void *ctx, uint32_t type, const void *payload, size_t len);
/*
 * Write the queued records with a time <= upto, oldest first (records of
 * equal time in the order queued), those `keep` accepts (NULL: all).
 * 0 or the writer's -errno.
 */
int fg_reorder_flush(struct fg_reorder *q, uint64_t upto, struct fg_rec_writer *w,
		     fg_reorder_keep_fn keep, void *ctx);
size_t fg_reorder_len(const struct fg_reorder *q);
/*
 * Records queued with a time at or before one already flushed: they came
 * too late to be written in time order (written at the next flush).
 */
uint64_t fg_reorder_late(const struct fg_reorder *q);
/* Records written so far by type (index: enum fg_rec_type, up to FG_REC_TYPE_MAX). */
uint64_t fg_reorder_written(const struct fg_reorder *q, uint32_t type);
/*
 * Sample records written so far with `flag` (one FG_SAMPLE_F_* bit) set: the
 * counters of a summary that can never exceed the samples written.
 */
uint64_t fg_reorder_written_with(const struct fg_reorder *q, uint32_t flag);

#endif
