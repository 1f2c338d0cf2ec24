/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --call-graph cfi: the table loader (fg/cfi_load.h) in a thread of its
 * own, so that whoever writes the records never waits for a table to be
 * built (milliseconds each) while the ring buffer of samples fills.
 *
 * The writer hands over the side-band records the loader wants (mappings,
 * execs, forks and exits of processes) through a bounded queue; the
 * worker feeds them to the loader as soon as they come and syncs the maps
 * after each batch.  A record that finds the queue full is left out and
 * counted, and the worker then reads every process' mappings again from
 * /proc, so that nothing stays wrong.  Every 5 s it sweeps the processes
 * gone without their exit record.
 *
 *	struct fg_cfi_worker *w;
 *	fg_cfi_worker_start(&w, loader, 4 << 20);	// the loader is the worker's now
 *	fg_cfi_worker_push(w, type, payload, len);	// each record written
 *	fg_cfi_worker_load(w, pid, false);		// a process not loaded at the start
 *	fg_cfi_worker_wake(w);				// after each batch of them
 *	fg_cfi_worker_stop(w, &st);			// what was queued, then joined
 */
#ifndef FG_CFI_WORKER_H
#define FG_CFI_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/buf.h"
#include "fg/cfi_load.h"

struct fg_cfi_worker_stats {
	uint64_t records;     /* records the loader was given */
	uint64_t dropped;     /* records left out: the queue was full */
	uint64_t rescans;     /* times every process was read again after that */
	uint64_t batches;     /* batches taken (each followed by a sync of the maps) */
	uint64_t queued_peak; /* bytes queued at most */
	uint64_t loads;	      /* processes read at their first samples (fg_cfi_worker_load) */
	uint64_t asked;	      /* of those, asked for by the program as it fell back (`now`) */
};

struct fg_cfi_worker;

/*
 * Start the thread; `max_bytes` bounds the queue.  Until fg_cfi_worker_stop()
 * returns, only the thread uses `l`.  0 or -errno.
 */
int fg_cfi_worker_start(struct fg_cfi_worker **out, struct fg_cfi_loader *l, size_t max_bytes);
/*
 * A record of the stream, copied into the queue when the loader wants it
 * (fg_cfi_loader_wants()).  Never waits for the worker.
 */
void fg_cfi_worker_push(struct fg_cfi_worker *w, uint32_t type, const void *payload, size_t len);
/*
 * Process pid's mappings read from /proc and their tables loaded, in the next
 * batch (fg_cfi_loader_rescan()): for a process running before the run, whose
 * tables are loaded when its samples first fall back rather than at the start;
 * `now`, for one the program found without its mappings (just started, just
 * exec'd) and woke fg-sample for.  Queued as a record is; never waits.
 */
void fg_cfi_worker_load(struct fg_cfi_worker *w, uint32_t pid, bool now);
/* The records pushed so far, to the loader now (one batch, one sync of the maps). */
void fg_cfi_worker_wake(struct fg_cfi_worker *w);
/*
 * The records queued handed to the loader and the maps synced, then the
 * thread joined and the worker freed (NULL: nothing); `st` may be NULL.
 */
void fg_cfi_worker_stop(struct fg_cfi_worker *w, struct fg_cfi_worker_stats *st);
/* fg-sample's summary line of those counts. */
void fg_cfi_worker_report(struct fg_buf *out, const struct fg_cfi_worker_stats *st);

#endif
