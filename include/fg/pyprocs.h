/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-sample's Python processes: which processes run a CPython (lib/python),
 * each one's struct fg_py_proc in the BPF program's py_procs map, so that
 * its samples carry their Python frames, and the names of those frames'
 * code objects, read from the process's memory while it runs and written
 * into the stream as FG_REC_PYCODE records (fg-record(5)).
 *
 *	struct fg_pyprocs *p = fg_pyprocs_new("/proc", &ops);
 *	fg_pyprocs_scan_all(p);			// the processes running
 *	fg_pyprocs_record(p, type, payload, len);	// each side-band record written
 *	fg_pyprocs_tick(p);			// the processes those made candidates
 *	fg_pyprocs_name(p, pid, time, frames, n);	// each sample's frames: names out
 *	fg_pyprocs_free(p);
 *
 * A process is a candidate when it maps a file whose name starts with
 * "python" or "libpython3."; only those are opened (fg_py_open reads their
 * symbols).  Names are cached by (pid, code object); a code object's
 * identity (its name's and file name's objects, its first line: one read)
 * is checked again at most once a tick when samples show it, and a record
 * written when it changed (an object freed and another made at its
 * address), so a name is wrong for a tick (20 to 100 ms) at most.  A
 * process's cache goes with its exit or exec.  Everything bounded, every
 * failure counted.
 */
#ifndef FG_PYPROCS_H
#define FG_PYPROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "fg/python.h"

#define FG_PYPROCS_NAMES_MAX (1u << 20) /* code objects named and cached, all processes */
#define FG_PYPROCS_PENDING_MAX 4096	/* candidates waiting for the next tick */
/*
 * Ticks a candidate is tried in before it is settled as not walked: a
 * process whose mapping record made it one may still be loading (its
 * interpreter's data not mapped yet)
 */
#define FG_PYPROCS_TRIES 10

/* struct fg_py_proc's fields, from what fg_py_open found: 0, or -ENOTSUP for a layout it cannot use
 */
struct fg_py_proc;
int fg_pyprocs_proc_of(const struct fg_py *py, struct fg_py_proc *out);

struct fg_pyprocs_ops {
	/* put pid's entry into the BPF map (proc, a struct fg_py_proc) or, proc NULL, delete it */
	int (*set)(void *ctx, uint32_t pid, const struct fg_py_proc *proc);
	/* a FG_REC_PYCODE record: payload of len bytes, at time_ns */
	void (*emit)(void *ctx, uint64_t time_ns, const void *payload, size_t len);
	void *ctx;
};

struct fg_pyprocs_stats {
	uint64_t procs;		  /* Python processes found, their stacks walked */
	uint64_t by_minor[16];	  /* of those, by 3.minor */
	uint64_t unknown;	  /* a CPython of a version, or a build, the table does not know */
	uint32_t unknown_minor;	  /* the last such version (3.minor, 0: not known) */
	uint32_t unknown_pid;	  /* and its process */
	uint64_t open_failed;	  /* candidates that could not be read (gone, no permission) */
	uint64_t map_failed;	  /* the BPF map refused a process (full) */
	uint64_t pending_dropped; /* candidates over FG_PYPROCS_PENDING_MAX */
	uint64_t named;		  /* code objects named (records written) */
	uint64_t renamed;	  /* names that changed at an address, written again */
	uint64_t name_failed;	  /* code objects that could not be read (process gone, bad) */
	uint64_t no_table;	  /* of those named, without their line table (cut, unreadable) */
	uint64_t names_full;	  /* frames not named: FG_PYPROCS_NAMES_MAX reached */
	uint64_t unknown_proc;	  /* frames of a process not (or no longer) known */
	struct fg_py_stats reads; /* the readers', all processes together */
};

struct fg_pyprocs;

struct fg_pyprocs *fg_pyprocs_new(const char *proc, const struct fg_pyprocs_ops *ops);
void fg_pyprocs_free(struct fg_pyprocs *p);
/* Every process running now (or, pid != 0, that one): opened at once. */
void fg_pyprocs_scan_all(struct fg_pyprocs *p);
void fg_pyprocs_scan(struct fg_pyprocs *p, uint32_t pid);
/* A record of the stream (mappings, exec, exit): candidates, and processes gone. */
void fg_pyprocs_record(struct fg_pyprocs *p, uint32_t type, const void *payload, size_t len);
/* Open the candidates the records made; a new tick begins (code objects checked again). */
void fg_pyprocs_tick(struct fg_pyprocs *p);
/* The frames of a sample of pid at time_ns (FG_PY_ENTRY bits ignored): names written as needed. */
void fg_pyprocs_name(struct fg_pyprocs *p, uint32_t pid, uint64_t time_ns, const uint64_t *frames,
		     size_t n);
void fg_pyprocs_stats(const struct fg_pyprocs *p, struct fg_pyprocs_stats *st);
/*
 * The stats as lines of fg-sample's report ("python: ..."), to f; nothing when nothing
 * happened.  Without verbose (fg-sample -v), only what was not walked or not known.
 */
void fg_pyprocs_report(FILE *f, const struct fg_pyprocs_stats *st, bool verbose);

#endif
