/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fg-sample's options: their values checked one by one as getopt_long()
 * hands them out, then together.  The tool keeps the option table, the
 * usage text and the checks against the running system (does pid N exist,
 * is CPU N online); this module holds what an option means.  A refusal is
 * -EINVAL with the reason in `why` ("invalid frequency '0'"), which the
 * tool prints before its usage, exit status 2.
 *
 *	struct fg_sample_opts o = FG_SAMPLE_OPTS_INIT;
 *	while ((c = getopt_long(argc, argv, FG_SAMPLE_SHORTOPTS, fg_sample_longopts, NULL)) != -1)
 *		if (fg_sample_opt(&o, c, optarg, why, sizeof(why)) < 0) usage_error(why);
 *	if (fg_sample_opts_check(&o, argv + optind, why, sizeof(why)) < 0) usage_error(why);
 */
#ifndef FG_SAMPLE_OPTS_H
#define FG_SAMPLE_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/bpf_abi.h"
#include "fg/events.h"

#define FG_SAMPLE_MAX_CPUS 4096

struct fg_sample_opts {
	unsigned freq;	 /* -F */
	double duration; /* -d; 0: until stopped */
	uint32_t *pids;	 /* -p */
	uint32_t *tids;	 /* -t */
	size_t npids, ntids, apids, atids;
	int cpus[FG_SAMPLE_MAX_CPUS]; /* -C */
	int ncpus;
	bool idle, user_only, kernel_only;
	unsigned verbose;  /* -v: every count at the end; -vv: libbpf's debug messages too */
	unsigned depth;	   /* --max-depth */
	unsigned pages;	   /* -m; 0: by the rate (fg_bpf_ring_pages()) */
	unsigned snapshot; /* --call-graph dwarf,BYTES (cfi,BYTES: a fallback's); 0 for fp */
	bool cfi;	   /* --call-graph cfi: unwound in BPF */
	/* --call-graph was given; else fg_sample_opts_check() sets the default */
	bool call_graph_given;
	bool cfi_check;	   /* --cfi-check: and a snapshot with every sample */
	int kernel_unwind; /* --kernel-unwind: FG_KUNWIND_* */
	/* it was given: orc's tables copied at the start, not once they would pay */
	bool kernel_unwind_given;
	unsigned cfi_max_files, cfi_max_mib, cfi_max_procs, cfi_max_rows; /* 0: the defaults */
	const char *output;
	char **command;		   /* NULL, or the command and its arguments */
	struct fg_ev_spec *events; /* -e, parsed (looked up on the system later) */
	size_t nevents, aevents;
	uint64_t period; /* -c; 0: not given (each event) */
	bool freq_given, cpus_given;
	bool list_events;	  /* --list-events [PATTERN] */
	const char *list_pattern; /* its PATTERN, or NULL */
	/* off-CPU time: waits, from sched_switch */
	bool offcpu;	       /* --off-cpu, or --wall: waits are recorded */
	bool wall;	       /* --wall: and CPU samples, weighing their period in ns */
	bool kernel_threads;   /* --kernel-threads: their waits too */
	uint64_t min_block_ns; /* --min-block (given in microseconds) */
	uint64_t max_block_ns; /* --max-block; UINT64_MAX: no limit */
	bool pages_given;      /* -m was given: it sizes the waits' ring too */
	bool no_python;	       /* --no-python: no Python frames (fg_sample_opts_check: python) */
	bool python;	  /* the Python stacks are walked: not --no-python, user stacks taken */
	bool no_cache;	  /* --no-cache: no unwind tables kept between runs (fg/cfi_store.h) */
	bool no_jvm_maps; /* --no-jvm-maps: the JVMs sampled not asked for their perf maps at the
			     end */
};

/*
 * --kernel-unwind: how a tracepoint's kernel stack is taken: unwound in BPF
 * with the kernel's ORC tables (the default; bpf_get_stack() where that
 * gives up, or for the whole run when the tables cannot be read), always by
 * bpf_get_stack(), or both ways for each event, compared (a test).
 */
enum { FG_KUNWIND_ORC, FG_KUNWIND_HELPER, FG_KUNWIND_CHECK };

/* --off-cpu's defaults: offcputime's (1 us, no limit) */
#define FG_SAMPLE_MIN_BLOCK_NS 1000
/* the ring buffer of waits, pages a CPU, unless -m says: waits come as fast as threads switch */
#define FG_SAMPLE_WAIT_PAGES 64

#define FG_SAMPLE_OPTS_INIT                                                                        \
	{                                                                                          \
		.freq = 99, .depth = MAX_STACK_DEPTH, .min_block_ns = FG_SAMPLE_MIN_BLOCK_NS,      \
		.max_block_ns = UINT64_MAX                                                         \
	}

/* A CPU sample's weight in nanoseconds with --wall: the period the kernel samples at -F hz. */
static inline uint64_t fg_sample_period_ns(unsigned hz)
{
	return 1000000000ull / (hz ? hz : 1);
}

/* the options that have no short form */
enum {
	FG_SAMPLE_OPT_USER_ONLY = 256,
	FG_SAMPLE_OPT_KERNEL_ONLY,
	FG_SAMPLE_OPT_MAX_DEPTH,
	FG_SAMPLE_OPT_CALL_GRAPH,
	FG_SAMPLE_OPT_CFI_CHECK,
	FG_SAMPLE_OPT_KERNEL_UNWIND,
	FG_SAMPLE_OPT_CFI_MAX_FILES,
	FG_SAMPLE_OPT_CFI_MAX_MIB,
	FG_SAMPLE_OPT_CFI_MAX_PROCS,
	FG_SAMPLE_OPT_CFI_MAX_ROWS,
	FG_SAMPLE_OPT_LIST_EVENTS,
	/* off-CPU time */
	FG_SAMPLE_OPT_OFF_CPU,
	FG_SAMPLE_OPT_WALL,
	FG_SAMPLE_OPT_MIN_BLOCK,
	FG_SAMPLE_OPT_MAX_BLOCK,
	FG_SAMPLE_OPT_KERNEL_THREADS,
	FG_SAMPLE_OPT_NO_PYTHON,
	FG_SAMPLE_OPT_NO_JVM_MAPS,
	FG_SAMPLE_OPT_NO_CACHE,
};

/* '+': the options end at the command */
#define FG_SAMPLE_SHORTOPTS "+C:c:d:e:F:hIm:o:p:t:Vv"
extern const struct option fg_sample_longopts[];

/*
 * Option `c` with its argument (getopt_long's optarg), into *o.  0, or
 * -EINVAL with the reason in why; -ENOENT for a `c` this module does not
 * take (-h, -V and getopt's '?' are the tool's).
 */
int fg_sample_opt(struct fg_sample_opts *o, int c, const char *arg, char *why, size_t len);
/*
 * The options together, once all are in; `rest` (the operands, NULL-ended)
 * is the command when not empty, or with --list-events its pattern.  -F is
 * for the clocks, -c for the other events; --kernel-only refuses a uprobe.
 * 0, or -EINVAL with the reason in why.
 */
int fg_sample_opts_check(struct fg_sample_opts *o, char **rest, char *why, size_t len);
/* The period of the counted events: -c, or 1 (each event). */
uint64_t fg_sample_opts_period(const struct fg_sample_opts *o);
/* Free the pid, tid and event lists. */
void fg_sample_opts_release(struct fg_sample_opts *o);

#endif
