/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What a reader of a record stream knows of the capture as a whole: how many
 * records and samples it read, the time they span, what the sampler lost
 * (each kind apart), and whether the stream ended with its summary record
 * or was cut short (fg-sample killed, its disk full).
 *
 *	struct fg_capture c = { 0 };
 *	while (fg_rec_next(r, &rec) > 0)
 *		fg_capture_add(&c, &rec);
 *	fg_capture_describe(&c, &text);	// "1200 records, 1000 samples over 5.20 s"
 *	fg_capture_describe_lost(&c, &text);
 */
#ifndef FG_CAPTURE_H
#define FG_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "fg/buf.h"
#include "fg/record.h"

/* a + b, or UINT64_MAX when the sum does not fit: a count never wraps */
static inline uint64_t fg_sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

struct fg_capture_count {
	uint64_t n;	/* saturated at UINT64_MAX */
	bool saturated; /* the true count is UINT64_MAX or more */
};

struct fg_capture {
	uint64_t records; /* records read (of known types) */
	uint64_t samples;
	uint64_t first_ns, last_ns;	      /* earliest and latest timestamps seen; 0 when none */
	struct fg_capture_count samples_lost; /* the BPF ring buffer was full */
	struct fg_capture_count events_lost;  /* mmap, comm, task events: perf buffer overflowed */
	struct fg_capture_count busy_lost; /* events not sampled: their CPU was in another sample */
	struct fg_capture_count other_lost; /* lost records of a reason this reader does not know */
	uint64_t cpus_offline;		    /* CPUs that went offline during the run */
	uint64_t waits;			    /* of the samples, waits (fg-sample --off-cpu) */
	uint64_t waits_open;		    /* of those, still going on when the run ended */
	struct fg_capture_count waits_lost; /* waits: their ring buffer was full */
	struct fg_capture_count waits_unseen; /* waits not followed: no memory to keep them */
	struct fg_capture_count waits_no_end; /* waits whose end the kernel did not report */
	bool ended;			      /* the summary record was read */
	struct fg_rec_summary summary;	      /* when ended */
};

void fg_capture_add(struct fg_capture *c, const struct fg_rec *rec);
/*
 * Append what is known of the capture: "1200 records, 1000 samples over
 * 5.20 s (from 12.000000 to 17.200000)".
 */
void fg_capture_describe(const struct fg_capture *c, struct fg_buf *b);
/*
 * Append what the sampler lost, each kind apart ("7 samples (its ring buffer
 * was full), 2 mapping, comm or task events (its perf buffer overflowed)");
 * appends nothing and returns false when nothing was.  CPUs that went
 * offline are in cpus_offline.
 */
bool fg_capture_describe_lost(const struct fg_capture *c, struct fg_buf *b);

#endif
