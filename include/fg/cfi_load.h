/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --call-graph cfi: the unwind tables of the processes fg-sample samples,
 * kept loaded in the BPF program's maps (fg/bpf_cfi.h) as processes map,
 * exec, fork and exit.
 *
 * A table is built (lib/cfi) once per file, identified by the device and
 * inode of the very file mapped (opened through /proc/PID/map_files), loaded
 * into a slot of the maps, and shared by every process that maps the file;
 * it is freed when the last mapping of it goes.  Each process' executable
 * mappings go to the program as one sorted array (struct fg_cfi_proc), which
 * it searches in log2(FG_CFI_PROC_MAPS) steps.  Every limit (bytes of
 * tables, rows of one table, tables, mappings of a process, processes) is
 * counted when hit; a mapping without its table makes the program fall
 * back to a snapshot, so that nothing is lost.
 *
 * The maps are written through `ops`, so that tests can watch them without
 * BPF (fg_cfi_load_bpf_ops() writes the real maps).
 *
 *	struct fg_cfi_loader *l = fg_cfi_loader_new("/proc", &limits, &ops);
 *	fg_cfi_loader_scan(l, pid);			// a running process
 *	fg_cfi_loader_record(l, type, payload, len);	// each record of the stream
 *	fg_cfi_loader_sync(l);				// the processes changed, to the maps
 *							// (again soon when true)
 *	fg_cfi_loader_free(l);
 *
 * A loader is not thread-safe: fg-sample hands it to a thread of its own
 * (fg/cfi_worker.h) once the running processes' tables are loaded.
 */
#ifndef FG_CFI_LOAD_H
#define FG_CFI_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/bpf_cfi.h"
#include "fg/buf.h"
#include "fg/cfi.h"
#include "fg/cfi_store.h"

struct fg_cfi_load_ops {
	/* Put table `c` into slot `slot` of the maps.  0 or -errno. */
	int (*load)(void *arg, uint32_t slot, const struct fg_cfi *c);
	/* Empty slot `slot`. */
	void (*unload)(void *arg, uint32_t slot);
	/* The mappings of process `pid` (p NULL: it is gone).  0 or -errno (-E2BIG: map full). */
	int (*set_proc)(void *arg, uint32_t pid, const struct fg_cfi_proc *p);
	/*
	 * Optional: make the loads, then the unloads, asked since the last
	 * call take effect, all at once (each update of an array of maps waits
	 * for an RCU grace period: milliseconds).  The loads are committed
	 * before the processes that use them are set, the unloads after the
	 * processes that used them are; a slot unloaded is used again only
	 * after the next sync.  0 or -errno.
	 */
	int (*commit_loads)(void *arg);
	int (*commit_unloads)(void *arg);
	void *arg;
	/*
	 * Optional: a loaded table by its file's identity (v NULL: no longer),
	 * for mappings the program finds itself.  Set once the table's load is
	 * committed, withdrawn before its slot is emptied.  0 or -errno.
	 */
	int (*set_file)(void *arg, const struct fg_cfi_inode_key *k, const struct fg_cfi_inode *v);
};

struct fg_cfi_load_limits {
	uint64_t max_bytes; /* of tables in the maps (--cfi-max-mib) */
	uint32_t max_rows;  /* of one table (--cfi-max-rows) */
	uint32_t max_files; /* tables loaded at once (--cfi-max-files): the slots */
	uint32_t max_procs; /* processes (--cfi-max-procs) */
	/*
	 * A table no process maps any more stays loaded this long (0: freed at
	 * once), so that the next process mapping its file (the next python3 of
	 * a loop, the next cc1 of a build) finds it without a parse.  Kept
	 * tables count in max_bytes and max_files and make room first.
	 */
	uint64_t keep_ns;
};

#define FG_CFI_LOAD_LIMITS_DEFAULT                                                                 \
	{                                                                                          \
		256ull << 20, 4u << 20, 4096, 8192, 0                                              \
	}

struct fg_cfi_load_stats {
	uint64_t tables;      /* loaded now */
	uint64_t bytes;	      /* of those tables in the maps, now */
	uint64_t bytes_peak;  /* the most at once */
	uint64_t procs;	      /* processes with mappings in the maps, now */
	uint64_t procs_peak;  /* the most at once */
	uint64_t proc_bytes;  /* of their mapping arrays, now */
	uint64_t loaded;      /* tables built and loaded during the run */
	uint64_t freed;	      /* tables freed: no process maps their file any more */
	uint64_t shared;      /* mappings that found their table already loaded */
	uint64_t reused;      /* of those, tables kept after their last process (keep_ns) */
	uint64_t kept;	      /* tables loaded now that no process maps (in tables) */
	uint64_t fp_files;    /* files without CFI (JIT, no .eh_frame): frame pointers */
	uint64_t unreadable;  /* mapped files that could not be opened */
	uint64_t refused;     /* files whose ELF headers claim more than the bounds */
	uint64_t gone;	      /* mappings of processes that exited before they were read */
	uint64_t swept;	      /* processes found gone without their exit record */
	uint64_t bad_entries; /* CIEs and FDEs skipped in the files read (corrupt, unsupported) */
	uint64_t
	    over_rows; /* files whose table has more rows than max_rows (or lib/cfi's bounds) */
	uint64_t over_bytes; /* tables not loaded: max_bytes reached */
	uint64_t over_files; /* tables not loaded: max_files reached */
	uint64_t room_reads; /* processes read again for those tables, once one was freed */
	uint64_t over_maps;  /* mappings left out: a process with more than FG_CFI_PROC_MAPS */
	uint64_t over_procs; /* processes left out: max_procs reached */
	uint64_t map_errors; /* other failures to write the maps */
	uint64_t build_ns;   /* time spent building and loading tables */
	/* with a store of tables (fg_cfi_loader_set_store()), its counts (fg/cfi_store.h) */
	bool store;
	struct fg_cfi_store_stats stored;
	uint64_t start_tables, start_bytes; /* loaded when fg_cfi_loader_started() was called */
};

struct fg_cfi_loader;

/* `proc`: "/proc" unless testing.  Never NULL. */
struct fg_cfi_loader *fg_cfi_loader_new(const char *proc, const struct fg_cfi_load_limits *lim,
					const struct fg_cfi_load_ops *ops);
void fg_cfi_loader_free(struct fg_cfi_loader *l);
/*
 * Read each file's table from `s` where it is there, and write those built
 * to it (fg/cfi_store.h); the loader does not own it.  NULL: none.
 */
void fg_cfi_loader_set_store(struct fg_cfi_loader *l, struct fg_cfi_store *s);
/* The executable mappings of a running process, from PROC/PID/maps.  0 or -errno. */
int fg_cfi_loader_scan(struct fg_cfi_loader *l, uint32_t pid);
/* The same for every process in PROC; returns how many were read. */
int fg_cfi_loader_scan_all(struct fg_cfi_loader *l);
/*
 * Process pid's mappings read again from PROC/PID/maps in place of those
 * known (after records were left out); its tables stay loaded meanwhile.
 * 0 or -errno (-ENOENT: gone, and dropped).
 */
int fg_cfi_loader_rescan(struct fg_cfi_loader *l, uint32_t pid);
/* The same for every process in PROC; returns how many were read. */
int fg_cfi_loader_rescan_all(struct fg_cfi_loader *l);
/* Whether fg_cfi_loader_record() does anything with this record. */
bool fg_cfi_loader_wants(uint32_t type, const void *payload, size_t len);
/*
 * A record of the stream (type, payload, len as fg_reorder_keep_fn has them): a
 * mapping adds to its process, an exec empties it, a fork copies the
 * parent's, an exit drops it.  Others are ignored.
 */
void fg_cfi_loader_record(struct fg_cfi_loader *l, uint32_t type, const void *payload, size_t len);
/* The tables loaded now are the start's (what the summary compares the end with). */
void fg_cfi_loader_started(struct fg_cfi_loader *l);
/*
 * Drop the processes that are gone although no exit record said so (the
 * kernel's side-band buffer overflowed): PROC/PID no longer there, at this
 * sweep and the one before (in between, an exit record read late would
 * have dropped it).  Returns how many were dropped (counted in
 * stats.swept).
 */
size_t fg_cfi_loader_sweep(struct fg_cfi_loader *l);
/*
 * Write the processes changed since the last sync to the maps (and free
 * the tables kept longer than keep_ns).  True when slots were freed at its
 * end while processes wait for room: the next sync reads them again
 * (rather than when the next record comes), so call it again soon.
 */
bool fg_cfi_loader_sync(struct fg_cfi_loader *l);
/* Free every table kept with no process mapping it (at the end of a run). */
void fg_cfi_loader_drop_kept(struct fg_cfi_loader *l);
void fg_cfi_loader_stats(const struct fg_cfi_loader *l, struct fg_cfi_load_stats *st);

/* The BPF program's maps, by descriptor, for fg_cfi_load_bpf_ops(). */
struct fg_cfi_bpf_maps {
	int rows, rules, files, procs, inodes; /* cfi_rows, cfi_rules, cfi_files, cfi_procs,
						  cfi_inodes */
	/* loads and unloads not committed yet */
	uint32_t *load_slots, *unload_slots;
	int *load_rows, *load_rules;
	struct fg_cfi_file *load_files;
	size_t nloads, aloads, nunloads, aunloads;
	/* an unload's values: no table, and an empty map of each kind (0: not made yet) */
	struct fg_cfi_file *unload_files;
	int *unload_rows, *unload_rules;
	size_t aunload_files, aunload_fds;
	int empty_rows, empty_rules;
	uint32_t gen; /* the last load's struct fg_cfi_file.gen */
	/* the program's cfi_procs_ver (in its mapped .bss), bumped after each write to procs */
	uint64_t *procs_ver;
};
/* ops that write those maps; free with fg_cfi_bpf_maps_release(). */
void fg_cfi_load_bpf_ops(struct fg_cfi_bpf_maps *m, struct fg_cfi_load_ops *ops);
void fg_cfi_bpf_maps_release(struct fg_cfi_bpf_maps *m);

/*
 * The lines of fg-sample's summary on --call-graph cfi: `bpf` the program's
 * counters (enum fg_cfi_stat), `fallbacks` the samples written with a
 * snapshot instead, `start_ns` what loading the running processes' tables took,
 * `begin_ns` the whole start-up (from fg-sample's start to sampling's, 0
 * unknown) (fg-sample -v).  Each limit hit names the option that raises it.
 */
void fg_cfi_load_report(struct fg_buf *out, const struct fg_cfi_load_stats *st,
			const struct fg_cfi_load_limits *lim, const uint64_t *bpf,
			uint64_t fallbacks, uint64_t start_ns, uint64_t begin_ns);
/* Only its lines that call for action (fg-sample without -v): limits hit, maps not updated. */
void fg_cfi_load_problems(struct fg_buf *out, const struct fg_cfi_load_stats *st,
			  const struct fg_cfi_load_limits *lim);

/* Bytes the maps hold for a table of `nrows` rows and `nrules` rules. */
uint64_t fg_cfi_load_table_bytes(uint32_t nrows, uint32_t nrules);

#endif
