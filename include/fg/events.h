/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The events fg-sample takes stacks on (-e EVENT): the perf software events
 * (cpu-clock, page-faults, context-switches, ...), kernel tracepoints
 * (tracepoint:CATEGORY:NAME) and user probes (uprobe:PATH:FUNCTION[+OFFSET],
 * uretprobe:PATH:FUNCTION), each named as perf names it so that the names
 * in fg-sym's output select them in fg-fold --event-filter.
 *
 * Two steps, so that a misspelt event is a usage error before anything is
 * opened: fg_ev_parse() checks the syntax of an argument, then
 * fg_evlist_add() looks it up on this system (tracefs for tracepoints, the
 * file's ELF symbols for probes) and appends the events it names to the
 * run's list, a glob one event for each match.
 *
 *	struct fg_ev_spec spec;
 *	if (fg_ev_parse(optarg, &spec, why, sizeof(why)) < 0) usage_error(why);
 *	...
 *	struct fg_evlist l = FG_EVLIST_INIT;
 *	if (fg_evlist_add(&l, &spec, &env, why, sizeof(why)) < 0) fg_diex("%s", why);
 *	for (size_t i = 0; i < l.n; i++) attach(&l.ev[i]);   // l.ev[i].id == i
 *	fg_evlist_release(&l);
 *	fg_ev_spec_release(&spec);
 */
#ifndef FG_EVENTS_H
#define FG_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fg/buf.h"
#include "fg/record.h"

/* the most events of one run, all arguments and glob matches together */
#define FG_EV_MAX 1024u
/* the most functions or tracepoints one argument may name through a glob */
#define FG_EV_GLOB_MAX 256u
/* the longest name perf gives a probe (its group, a colon and its event) */
#define FG_EV_PROBE_NAME_MAX 127u

/* One perf software event fg-sample knows. */
struct fg_ev_software {
	const char *name;  /* perf's name: "page-faults" */
	const char *alias; /* perf's other name ("faults"), or NULL */
	uint64_t config;   /* PERF_COUNT_SW_* */
	bool time_based;   /* a clock: sampled at a frequency (-F) rather than every Nth (-c) */
	const char *what;  /* for --list-events */
};

/* The software events, in the order --list-events shows them. */
extern const struct fg_ev_software fg_ev_software[];
extern const size_t fg_ev_nsoftware;
/* The software event `name` (or alias), or NULL. */
const struct fg_ev_software *fg_ev_software_find(const char *name);

/* An argument of -e, its syntax checked. */
struct fg_ev_spec {
	enum fg_event_kind kind;
	const struct fg_ev_software *sw; /* FG_EVENT_SOFTWARE */
	char *category, *tracepoint;	 /* FG_EVENT_TRACEPOINT; may hold globs */
	char *path;			 /* FG_EVENT_UPROBE, _URETPROBE: the file, as given */
	char *function;			 /* the function: its symbol, demangled name or a glob */
	uint64_t offset;		 /* +OFFSET into the function (uprobes only) */
	char *arg;			 /* the argument itself */
};

/*
 * Check the syntax of `arg`: a software event's name, tracepoint:CAT:NAME
 * (or perf's CAT:NAME), uprobe:PATH:FUNCTION[+OFFSET] or
 * uretprobe:PATH:FUNCTION.  0 with *spec filled (release it), or -EINVAL
 * with the reason in why ("unknown event 'x'").
 */
int fg_ev_parse(const char *arg, struct fg_ev_spec *spec, char *why, size_t len);
void fg_ev_spec_release(struct fg_ev_spec *spec);

/* One event of a run. */
struct fg_ev {
	uint32_t id;		 /* its place in the list: the number its samples carry */
	enum fg_event_kind kind; /* FG_EVENT_SOFTWARE, _TRACEPOINT, _UPROBE, _URETPROBE */
	char *name;		 /* as perf names it: "syscalls:sys_enter_write" */
	uint64_t config;	 /* SOFTWARE: PERF_COUNT_SW_*; TRACEPOINT: its id in tracefs */
	bool time_based;	 /* cpu-clock, task-clock */
	char *path;		 /* UPROBE, URETPROBE: the file probed (found) */
	char *symbol;		 /* the function's symbol in it */
	uint64_t addr;		 /* the symbol's address */
	uint64_t offset;	 /* +OFFSET into the function */
	uint64_t file_offset;	 /* where the probe goes: an offset in the file */
};

struct fg_evlist {
	struct fg_ev *ev;
	size_t n, alloc;
};

#define FG_EVLIST_INIT                                                                             \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

/* Where fg_evlist_add() and fg_ev_list() look. */
struct fg_ev_env {
	const char *tracefs; /* the tracefs directory (fg_ev_tracefs_find()); NULL: none */
	const char *path;    /* the directories of $PATH, ':'-separated, for a probe's bare name */
	/* directories of shared libraries, NULL-terminated, for a bare name ("libc"); or NULL */
	const char *const *libdirs;
};

/* The directories fg-sample searches for a library named by its bare name, NULL-terminated. */
extern const char *const fg_ev_libdirs[];

/*
 * Look `spec` up and append its events to `l`: one, or one for each
 * function or tracepoint a glob matches (in the order of the file's
 * addresses, of tracefs's names).  0, or an error with the reason in why:
 * -ENOENT the tracepoint, file or function does not exist; -E2BIG a glob
 * matches more than FG_EV_GLOB_MAX, or the list would pass FG_EV_MAX;
 * -EEXIST the same event is in the list already; -EINVAL an offset beyond
 * the function; -errno the file cannot be read (ENOEXEC: not ELF).  On an
 * error `l` is as it was.
 */
int fg_evlist_add(struct fg_evlist *l, const struct fg_ev_spec *spec, const struct fg_ev_env *env,
		  char *why, size_t len);
/* cpu-clock, the default, when the list is empty. */
void fg_evlist_default(struct fg_evlist *l);
void fg_evlist_release(struct fg_evlist *l);
/* Whether an event of the list is of `kind`; whether one is sampled at a frequency. */
bool fg_evlist_has(const struct fg_evlist *l, enum fg_event_kind kind);
bool fg_evlist_has_time(const struct fg_evlist *l);

/*
 * The name perf gives a probe on function `symbol` of file `path`:
 * "probe_" and the file's name up to its first character that is not a
 * letter, digit or '_', a colon, then the symbol up to its first '.' or '@'
 * (a leading '.' dropped) with other characters than letters, digits and
 * '_' as '_', and "__return" for a return probe.  At most
 * FG_EV_PROBE_NAME_MAX bytes.
 */
void fg_ev_probe_name(struct fg_buf *b, const char *path, const char *symbol, bool ret);

struct fg_elfsyms;

/* A function found in an ELF file's symbols. */
struct fg_ev_func {
	const char *symbol; /* its name in the file (the table's) */
	uint64_t addr, size;
};

/*
 * The functions of `e` that `pattern` names: by their symbol, their
 * demangled name (C++, Rust, as fg-sym shows them), or a glob (* ? [...]) of
 * either; their symbols' versions ("@GLIBC_2.2.5") do not count.  One entry
 * per address, in address order, at most `max` (then -E2BIG, with *n the
 * number of matches).  0 with *out to be freed (its names are e's), or
 * -ENOENT when none.
 */
int fg_ev_find_functions(const struct fg_elfsyms *e, const char *pattern, size_t max,
			 struct fg_ev_func **out, size_t *n);
/* The file offset of address `addr` of `e` (its PT_LOAD segments): 0, or -ENOENT. */
int fg_ev_addr_to_offset(const struct fg_elfsyms *e, uint64_t addr, uint64_t *off);

/*
 * --list-events [PATTERN]: what this system offers, one line each, a valid
 * -e argument first.  Without a pattern: the software events and the
 * tracepoint categories.  A pattern is a glob of -e arguments: of software
 * events and tracepoints ("sched:*", "tracepoint:syscalls:*write*"), or of
 * the functions of a file ("uprobe:/usr/bin/bash:read*").  Returns the
 * number of lines, or an error with the reason in why (as fg_evlist_add()).
 */
long fg_ev_list(struct fg_buf *out, const char *pattern, const struct fg_ev_env *env, char *why,
		size_t len);

/* --- tracefs --- */

/* The places tracefs is looked for, NULL-terminated: /sys/kernel/tracing, then under debugfs. */
extern const char *const fg_tracefs_dirs[];
/*
 * The first of `dirs` (NULL-terminated) where tracefs is mounted (it holds
 * "events"): 0 with its path in dir, or -ENOENT.
 */
int fg_ev_tracefs_find(const char *const *dirs, char *dir, size_t len);
/* Mount tracefs on `dir`, as perf does when it is not mounted: 0 or -errno. */
int fg_ev_tracefs_mount(const char *dir);

#endif
