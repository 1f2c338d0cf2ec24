/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What travels beside the samples: the mappings of processes and their
 * comm/exec, fork and exit events, as records of the stream (fg-record(5)).
 *
 *  - fg_sideband_maps_pid(), fg_sideband_maps_all(): the executable mappings
 *    of running processes, from /proc/PID/maps, at the start of a run;
 *  - struct fg_sideband: the kernel's mmap2/comm/task events during the run, from
 *    a dummy software perf event per CPU (as perf record does), with
 *    build-ids where the kernel supplies them.
 *
 * Both queue their records on a struct fg_reorder (fg/reorder.h), which puts them
 * in time order with the samples.
 */
#ifndef FG_SIDEBAND_H
#define FG_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/procmaps.h"
#include "fg/record.h"
#include "fg/reorder.h"

/* --- who processes run as --- */

/* The effective uid and gid from /proc/PID/status text.  0, or -EINVAL. */
int fg_sideband_creds_parse(const char *status, struct fg_rec_creds *c);
/* The same read from PROC/PID/status (time_ns 0).  0 or -errno (-ENOENT: gone). */
int fg_sideband_creds_read(const char *proc, uint32_t pid, struct fg_rec_creds *c);

/* --- the /proc snapshot --- */

/*
 * Queue (time 0) a creds record for process `pid` and a mapping record for
 * every executable mapping of it, read from PROC/PID/status and PROC/PID/maps
 * (proc: "/proc" unless testing).  Returns the number of mappings, or -errno
 * (-ENOENT: the process is gone).
 */
int fg_sideband_maps_pid(struct fg_reorder *q, const char *proc, uint32_t pid);
/* The same for every process; returns the number of mappings. */
int fg_sideband_maps_all(struct fg_reorder *q, const char *proc);
/*
 * The mapping record of a /proc/PID/maps line parsed by fg_procmap_parse()
 * (the snapshot's: FG_MAP_F_SNAPSHOT, time 0; pid and tid left 0).  Its path
 * is the parser's, without " (deleted)".
 */
void fg_sideband_maps_record(const struct fg_procmap *pm, struct fg_rec_mapping *m);

/* --- the kernel's events --- */

struct fg_sideband;

/*
 * Open a dummy perf event with mmap2, comm, task and ksymbol events on
 * each CPU of `cpus` (ksymbol where the kernel has them: 5.1 on), each with
 * a buffer of `pages` pages (a power of two).  0, or -errno with
 * *failed_cpu set to the CPU that failed.
 */
int fg_sideband_open(struct fg_sideband **out, const int *cpus, int ncpus, unsigned pages,
		     int *failed_cpu);
void fg_sideband_close(struct fg_sideband *sb);
/*
 * Move every event the kernel has written so far into the queue, as
 * records (executable mappings only), with a creds record after each fork
 * of a process and each exec (read from /proc at once: a process already
 * gone has none).  Returns the number of records queued.
 */
int fg_sideband_drain(struct fg_sideband *sb, struct fg_reorder *q);
/* Events the kernel lost (its buffer was full), and queues lost records for them. */
uint64_t fg_sideband_lost(const struct fg_sideband *sb);
/* The kernel's BPF code loaded or unloaded meanwhile (ksym records queued). */
uint64_t fg_sideband_ksyms(const struct fg_sideband *sb);
/* A ksym record (fg-record(5)) of the code [addr, addr + len) named `name` into q. */
void fg_sideband_ksym(struct fg_reorder *q, uint64_t time_ns, uint64_t addr, uint32_t len,
		      uint32_t flags, const char *name);

#endif
