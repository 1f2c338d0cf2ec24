/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What travels beside the samples: the mappings of processes and their
 * comm/exec, fork and exit events, as records of the stream (fg-record(5)).
 *
 *  - fg_maps_snapshot(): the executable mappings of running processes, from
 *    /proc/PID/maps, at the start of a run;
 *  - struct fg_sb: the kernel's mmap2/comm/task events during the run, from
 *    a dummy software perf event per CPU (as perf record does), with
 *    build-ids where the kernel supplies them;
 *  - struct fg_rq: a queue that puts samples and these events in time
 *    order before they are written, so a reader sees a process's mappings
 *    before its samples.
 */
#ifndef FG_SIDEBAND_H
#define FG_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/record.h"

/* --- the time-ordering queue --- */

struct fg_rq;

struct fg_rq *fg_rq_new(void);
void fg_rq_free(struct fg_rq *q);
/* Queue a record: `type`, then the bytes of p1 and p2 as its payload. */
void fg_rq_add(struct fg_rq *q, uint64_t time, uint32_t type, const void *p1, size_t l1,
	       const void *p2, size_t l2);
/*
 * Which records to write, asked in time order (so that a fork is seen
 * before the events of the child it creates): the record type and payload.
 */
typedef bool (*fg_rq_keep_fn)(void *ctx, uint32_t type, const void *payload, size_t len);
/*
 * Write the queued records with a time <= upto, oldest first (records of
 * equal time in the order queued), those `keep` accepts (NULL: all).
 * 0 or the writer's -errno.
 */
int fg_rq_flush(struct fg_rq *q, uint64_t upto, struct fg_rec_writer *w, fg_rq_keep_fn keep,
		void *ctx);
size_t fg_rq_len(const struct fg_rq *q);
/* Records written so far by type (index: enum fg_rec_type, up to FG_REC_TYPE_MAX). */
uint64_t fg_rq_written(const struct fg_rq *q, uint32_t type);
/*
 * Sample records written so far with `flag` (one FG_SAMPLE_F_* bit) set: the
 * counters of a summary that can never exceed the samples written.
 */
uint64_t fg_rq_written_with(const struct fg_rq *q, uint32_t flag);

/* --- who processes run as --- */

/* The effective uid and gid from /proc/PID/status text.  0, or -EINVAL. */
int fg_creds_parse(const char *status, struct fg_rec_creds *c);
/* The same read from PROC/PID/status (time_ns 0).  0 or -errno (-ENOENT: gone). */
int fg_creds_read(const char *proc, uint32_t pid, struct fg_rec_creds *c);

/* --- the /proc snapshot --- */

/*
 * Queue (time 0) a creds record for process `pid` and a mapping record for
 * every executable mapping of it, read from PROC/PID/status and PROC/PID/maps
 * (proc: "/proc" unless testing).  Returns the number of mappings, or -errno
 * (-ENOENT: the process is gone).
 */
int fg_maps_snapshot_pid(struct fg_rq *q, const char *proc, uint32_t pid);
/* The same for every process; returns the number of mappings. */
int fg_maps_snapshot_all(struct fg_rq *q, const char *proc);
/*
 * Parse one line of /proc/PID/maps into *m and *path (pointing into the
 * line).  1 for an executable mapping, 0 for another, -EINVAL for a line
 * that is not a maps line.
 */
int fg_maps_parse_line(const char *line, size_t len, struct fg_rec_mapping *m, const char **path,
		       size_t *pathlen);

/* --- the kernel's events --- */

struct fg_sb;

/*
 * Open a dummy perf event with mmap2, comm and task events on each CPU of
 * `cpus`, each with a buffer of `pages` pages (a power of two).  0, or
 * -errno with *failed_cpu set to the CPU that failed.
 */
int fg_sb_open(struct fg_sb **out, const int *cpus, int ncpus, unsigned pages, int *failed_cpu);
void fg_sb_close(struct fg_sb *sb);
/*
 * Move every event the kernel has written so far into the queue, as
 * records (executable mappings only), with a creds record after each fork
 * of a process and each exec (read from /proc at once: a process already
 * gone has none).  Returns the number of records queued.
 */
int fg_sb_drain(struct fg_sb *sb, struct fg_rq *q);
/* Events the kernel lost (its buffer was full), and queues lost records for them. */
uint64_t fg_sb_lost(const struct fg_sb *sb);

#endif
