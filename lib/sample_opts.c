// SPDX-License-Identifier: BSD-2-Clause
/* fg-sample's options, checked. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fg/cpulist.h"
#include "fg/diag.h"
#include "fg/sample_opts.h"
#include "fg/util.h"

const struct option fg_sample_longopts[] = {
    {"event", required_argument, NULL, 'e'},
    {"count", required_argument, NULL, 'c'},
    {"list-events", no_argument, NULL, FG_SAMPLE_OPT_LIST_EVENTS},
    {"freq", required_argument, NULL, 'F'},
    {"duration", required_argument, NULL, 'd'},
    {"pid", required_argument, NULL, 'p'},
    {"tid", required_argument, NULL, 't'},
    {"cpu", required_argument, NULL, 'C'},
    {"idle", no_argument, NULL, 'I'},
    {"user-only", no_argument, NULL, FG_SAMPLE_OPT_USER_ONLY},
    {"kernel-only", no_argument, NULL, FG_SAMPLE_OPT_KERNEL_ONLY},
    {"max-depth", required_argument, NULL, FG_SAMPLE_OPT_MAX_DEPTH},
    {"call-graph", required_argument, NULL, FG_SAMPLE_OPT_CALL_GRAPH},
    {"cfi-check", no_argument, NULL, FG_SAMPLE_OPT_CFI_CHECK},
    {"kernel-unwind", required_argument, NULL, FG_SAMPLE_OPT_KERNEL_UNWIND},
    {"cfi-max-files", required_argument, NULL, FG_SAMPLE_OPT_CFI_MAX_FILES},
    {"cfi-max-mib", required_argument, NULL, FG_SAMPLE_OPT_CFI_MAX_MIB},
    {"cfi-max-procs", required_argument, NULL, FG_SAMPLE_OPT_CFI_MAX_PROCS},
    {"cfi-max-rows", required_argument, NULL, FG_SAMPLE_OPT_CFI_MAX_ROWS},
    {"mmap-pages", required_argument, NULL, 'm'},
    {"off-cpu", no_argument, NULL, FG_SAMPLE_OPT_OFF_CPU},
    {"wall", no_argument, NULL, FG_SAMPLE_OPT_WALL},
    {"min-block", required_argument, NULL, FG_SAMPLE_OPT_MIN_BLOCK},
    {"max-block", required_argument, NULL, FG_SAMPLE_OPT_MAX_BLOCK},
    {"kernel-threads", no_argument, NULL, FG_SAMPLE_OPT_KERNEL_THREADS},
    {"no-python", no_argument, NULL, FG_SAMPLE_OPT_NO_PYTHON},
    {"no-jvm-maps", no_argument, NULL, FG_SAMPLE_OPT_NO_JVM_MAPS},
    {"no-cache", no_argument, NULL, FG_SAMPLE_OPT_NO_CACHE},
    {"output", required_argument, NULL, 'o'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

static int add_id(uint32_t **v, size_t *n, size_t *alloc, const char *arg, const char *what,
		  char *why, size_t len)
{
	uint64_t id;

	if (fg_parse_u64(arg, 1, INT32_MAX, &id) < 0)
		return fg_refuse(why, len, "invalid %s '%s'", what, arg);
	FG_ALLOC_GROW(*v, *n + 1, *alloc);
	(*v)[(*n)++] = (uint32_t)id;
	return 0;
}

static int add_event(struct fg_sample_opts *o, const char *arg, char *why, size_t len)
{
	FG_ALLOC_GROW(o->events, o->nevents + 1, o->aevents);
	if (fg_ev_parse(arg, &o->events[o->nevents], why, len) < 0)
		return -EINVAL;
	o->nevents++;
	return 0;
}

/*
 * -e EVENT, or as perf takes them, a comma-separated list (-e
 * page-faults,cs); but a probe's path may hold a comma, so a probe is one
 * event, taken whole.
 */
static int add_events(struct fg_sample_opts *o, const char *arg, char *why, size_t len)
{
	char *list, *one, *save = NULL;
	int err = 0;

	if (!strchr(arg, ',') || !strncmp(arg, "uprobe:", 7) || !strncmp(arg, "uretprobe:", 10))
		return add_event(o, arg, why, len);
	if (arg[0] == ',' || arg[strlen(arg) - 1] == ',' || strstr(arg, ",,"))
		return fg_refuse(why, len, "invalid event list '%s': an empty event", arg);
	list = fg_xstrdup(arg);
	for (one = strtok_r(list, ",", &save); one && !err; one = strtok_r(NULL, ",", &save))
		err = add_event(o, one, why, len);
	free(list);
	return err;
}

/*
 * --call-graph fp | dwarf[,BYTES] | cfi[,BYTES], as perf spells the first two:
 * BYTES rounded up to 8, as perf does (with cfi: the snapshot of a fallback)
 */
static int call_graph(struct fg_sample_opts *o, const char *arg, char *why, size_t len)
{
	const char *size;
	size_t k;
	uint64_t v;

	o->cfi = false;
	o->call_graph_given = true;
	if (strcmp(arg, "fp") == 0) {
		o->snapshot = 0;
		return 0;
	}
	k = strncmp(arg, "dwarf", 5) == 0 ? 5 : strncmp(arg, "cfi", 3) == 0 ? 3 : 0;
	if (!k || (arg[k] != '\0' && arg[k] != ','))
		return fg_refuse(
		    why, len, "invalid --call-graph '%s' (fp, dwarf[,bytes] or cfi[,bytes])", arg);
#ifndef __x86_64__
	return fg_refuse(why, len, "--call-graph %s: x86-64 only", arg);
#endif
	o->cfi = k == 3;
	o->snapshot = FG_USTACK_SNAPSHOT_DEFAULT;
	if (arg[k] == '\0')
		return 0;
	size = arg + k + 1;
	if (fg_parse_u64(size, 1, FG_USTACK_SNAPSHOT_MAX, &v) < 0)
		return fg_refuse(why, len, "invalid stack dump size '%s' (1 to %u bytes)", size,
				 FG_USTACK_SNAPSHOT_MAX);
	o->snapshot = (unsigned)((v + 7) & ~7ull);
	return 0;
}

/* a limit of --call-graph cfi: `what` between min and max */
static int cfi_limit(unsigned *out, const char *arg, const char *what, uint64_t min, uint64_t max,
		     char *why, size_t len)
{
	uint64_t v;

	if (fg_parse_u64(arg, min, max, &v) < 0)
		return fg_refuse(why, len, "invalid limit '%s' (%" PRIu64 " to %" PRIu64 " %s)",
				 arg, min, max, what);
	*out = (unsigned)v;
	return 0;
}

/* The off-CPU options: waits, their length, their table. */
static int offcpu_opt(struct fg_sample_opts *o, int c, const char *arg, char *why, size_t len)
{
	uint64_t v;

	switch (c) {
	case FG_SAMPLE_OPT_OFF_CPU:
		o->offcpu = true;
		return 0;
	case FG_SAMPLE_OPT_WALL:
		o->offcpu = o->wall = true;
		return 0;
	case FG_SAMPLE_OPT_MIN_BLOCK:
	case FG_SAMPLE_OPT_MAX_BLOCK:
		/* microseconds, as offcputime takes them */
		if (fg_parse_u64(arg, 0, UINT64_MAX / 1000, &v) < 0)
			return fg_refuse(
			    why, len, "invalid %s '%s' (microseconds)",
			    c == FG_SAMPLE_OPT_MIN_BLOCK ? "--min-block" : "--max-block", arg);
		if (c == FG_SAMPLE_OPT_MIN_BLOCK)
			o->min_block_ns = v * 1000;
		else
			o->max_block_ns = v * 1000;
		return 0;
	case FG_SAMPLE_OPT_KERNEL_THREADS:
		o->kernel_threads = true;
		return 0;
	}
	return -ENOENT;
}

/* what the off-CPU options need of the others */
static int offcpu_check(const struct fg_sample_opts *o, char *why, size_t len)
{
	if (o->min_block_ns > o->max_block_ns)
		return fg_refuse(why, len, "--min-block %llu is above --max-block %llu",
				 (unsigned long long)(o->min_block_ns / 1000),
				 (unsigned long long)(o->max_block_ns / 1000));
	if (o->offcpu && o->snapshot)
		return fg_refuse(why, len,
				 "--call-graph %s and --%s exclude each other: waits carry "
				 "frame-pointer stacks only",
				 o->cfi ? "cfi" : "dwarf", o->wall ? "wall" : "off-cpu");
	if (o->offcpu && o->nevents)
		return fg_refuse(
		    why, len,
		    "-e and --%s exclude each other: waits weigh their time, and --wall "
		    "samples the CPU clock",
		    o->wall ? "wall" : "off-cpu");
	return 0;
}

int fg_sample_opt(struct fg_sample_opts *o, int c, const char *arg, char *why, size_t len)
{
	uint64_t v;

	switch (c) {
	case 'C':
		if (fg_cpulist_parse(arg, o->cpus, &o->ncpus, FG_SAMPLE_MAX_CPUS) < 0)
			return fg_refuse(why, len, "invalid CPU list '%s'", arg);
		o->cpus_given = true;
		return 0;
	case 'c':
		if (fg_parse_u64(arg, 1, UINT32_MAX, &o->period) < 0)
			return fg_refuse(why, len, "invalid count '%s' (a sample every N events)",
					 arg);
		return 0;
	case 'd':
		if (fg_parse_double(arg, 0.001, 1e7, &o->duration) < 0)
			return fg_refuse(why, len, "invalid duration '%s'", arg);
		return 0;
	case 'e':
		return add_events(o, arg, why, len);
	case 'F':
		if (fg_parse_u64(arg, 1, 100000, &v) < 0)
			return fg_refuse(why, len, "invalid frequency '%s'", arg);
		o->freq = (unsigned)v;
		o->freq_given = true;
		return 0;
	case 'I':
		o->idle = true;
		return 0;
	case 'm':
		if (fg_parse_u64(arg, 1, 1u << 20, &v) < 0 || (v & (v - 1)))
			return fg_refuse(why, len,
					 "invalid buffer size '%s' (pages, a power of two)", arg);
		o->pages = (unsigned)v;
		o->pages_given = true;
		return 0;
	case 'o':
		o->output = arg;
		return 0;
	case 'p':
		return add_id(&o->pids, &o->npids, &o->apids, arg, "pid", why, len);
	case 't':
		return add_id(&o->tids, &o->ntids, &o->atids, arg, "tid", why, len);
	case 'v':
		o->verbose++;
		return 0;
	case FG_SAMPLE_OPT_USER_ONLY:
		o->user_only = true;
		return 0;
	case FG_SAMPLE_OPT_KERNEL_ONLY:
		o->kernel_only = true;
		return 0;
	case FG_SAMPLE_OPT_CALL_GRAPH:
		return call_graph(o, arg, why, len);
	case FG_SAMPLE_OPT_CFI_CHECK:
		o->cfi_check = true;
		return 0;
	case FG_SAMPLE_OPT_NO_PYTHON:
		o->no_python = true;
		return 0;
	case FG_SAMPLE_OPT_NO_JVM_MAPS:
		o->no_jvm_maps = true;
		return 0;
	case FG_SAMPLE_OPT_NO_CACHE:
		o->no_cache = true;
		return 0;
	case FG_SAMPLE_OPT_KERNEL_UNWIND:
		o->kernel_unwind_given = true;
		if (!strcmp(arg, "orc"))
			o->kernel_unwind = FG_KUNWIND_ORC;
		else if (!strcmp(arg, "helper"))
			o->kernel_unwind = FG_KUNWIND_HELPER;
		else if (!strcmp(arg, "check"))
			o->kernel_unwind = FG_KUNWIND_CHECK;
		else
			return fg_refuse(
			    why, len, "invalid kernel unwinder '%s' (orc, helper or check)", arg);
		return 0;
	case FG_SAMPLE_OPT_CFI_MAX_FILES:
		return cfi_limit(&o->cfi_max_files, arg, "tables", 1, 1u << 20, why, len);
	case FG_SAMPLE_OPT_CFI_MAX_MIB:
		return cfi_limit(&o->cfi_max_mib, arg, "MiB of tables", 1, 1u << 16, why, len);
	case FG_SAMPLE_OPT_CFI_MAX_PROCS:
		return cfi_limit(&o->cfi_max_procs, arg, "processes", 1, 1u << 22, why, len);
	case FG_SAMPLE_OPT_CFI_MAX_ROWS:
		return cfi_limit(&o->cfi_max_rows, arg, "rows", 2, 1u << 24, why, len);
	case FG_SAMPLE_OPT_LIST_EVENTS:
		o->list_events = true;
		return 0;
	case FG_SAMPLE_OPT_MAX_DEPTH:
		if (fg_parse_u64(arg, 1, MAX_STACK_DEPTH, &v) < 0)
			return fg_refuse(why, len, "invalid stack depth '%s' (1 to %d)", arg,
					 MAX_STACK_DEPTH);
		o->depth = (unsigned)v;
		return 0;
	}
	return offcpu_opt(o, c, arg, why, len);
}

static bool spec_time_based(const struct fg_ev_spec *s)
{
	return s->kind == FG_EVENT_SOFTWARE && s->sw->time_based;
}

/* -F for clocks, -c for the others: each only where it means something */
static int check_events(const struct fg_sample_opts *o, char *why, size_t len)
{
	bool time = !o->nevents, count = false, probe = false;

	for (size_t i = 0; i < o->nevents; i++) {
		time |= spec_time_based(&o->events[i]);
		count |= !spec_time_based(&o->events[i]);
		probe |=
		    o->events[i].kind == FG_EVENT_UPROBE || o->events[i].kind == FG_EVENT_URETPROBE;
	}
	if (o->freq_given && !time)
		return fg_refuse(
		    why, len,
		    "-F applies to cpu-clock and task-clock: for the other events, -c n "
		    "takes a sample every n events");
	if (o->period && !count)
		return fg_refuse(
		    why, len,
		    "-c applies to events other than cpu-clock and task-clock, which -F "
		    "samples");
	if (probe && o->kernel_only)
		return fg_refuse(
		    why, len,
		    "--kernel-only and uprobes exclude each other: a uprobe has only a "
		    "user stack");
	return 0;
}

int fg_sample_opts_check(struct fg_sample_opts *o, char **rest, char *why, size_t len)
{
	if (o->list_events) {
		if (rest && rest[0] && rest[1])
			return fg_refuse(why, len, "--list-events takes one pattern at most");
		o->list_pattern = rest ? rest[0] : NULL;
		return 0;
	}
	if (check_events(o, why, len) < 0)
		return -EINVAL;
	/*
	 * The default call graph: cfi, whole stacks unwound in the BPF program,
	 * where it can be (x86-64; user stacks wanted; no waits, which carry
	 * frame-pointer stacks only) and for clocks alone: an event counted
	 * (-e: a tracepoint, a uprobe, page faults) may fire in bursts far above
	 * any clock's rate, in a process just started whose samples fall back to
	 * 8 KiB snapshots, more than the ring buffer holds.  fp otherwise.
	 */
	if (!o->call_graph_given) {
		bool clocks = true;

		for (size_t i = 0; i < o->nevents; i++)
			clocks &= spec_time_based(&o->events[i]);
#ifdef __x86_64__
		o->cfi = !o->kernel_only && !o->offcpu && clocks;
#endif
		o->snapshot = o->cfi ? FG_USTACK_SNAPSHOT_DEFAULT : 0;
	}
	if (o->user_only && o->kernel_only)
		return fg_refuse(why, len, "--user-only and --kernel-only exclude each other");
	if (o->kernel_only && o->snapshot)
		return fg_refuse(why, len, "--call-graph %s and --kernel-only exclude each other",
				 o->cfi ? "cfi" : "dwarf");
	if (o->cfi_check && !o->cfi)
		return fg_refuse(why, len, "--cfi-check needs --call-graph cfi");
#ifdef __x86_64__
	/* Python frames: in the user stacks of CPU samples (x86-64: found by fs_base) */
	o->python = !o->no_python && !o->kernel_only;
#endif
	if (rest && rest[0])
		o->command = rest;
	if (o->command && (o->npids || o->ntids))
		return fg_refuse(why, len, "a command and -p/-t exclude each other");
	return offcpu_check(o, why, len);
}

uint64_t fg_sample_opts_period(const struct fg_sample_opts *o)
{
	return o->period ? o->period : 1;
}

void fg_sample_opts_release(struct fg_sample_opts *o)
{
	for (size_t i = 0; i < o->nevents; i++)
		fg_ev_spec_release(&o->events[i]);
	free(o->events);
	o->events = NULL;
	o->nevents = o->aevents = 0;
	free(o->pids);
	free(o->tids);
	o->pids = o->tids = NULL;
	o->npids = o->ntids = o->apids = o->atids = 0;
}
