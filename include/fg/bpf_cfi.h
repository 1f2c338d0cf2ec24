/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --call-graph cfi: the maps through which fg-sample hands lib/cfi's tables
 * to the BPF program (bpf/cfi_unwind.h), and the program's counters of how
 * its walks ended.  Shared by both sides, so only __u32/__u64 types.
 *
 *	cfi_procs	hash, pid -> struct fg_cfi_proc: the executable mappings
 *			of a process, sorted by start, each naming its table
 *	cfi_files	array, table slot -> struct fg_cfi_file
 *	cfi_rows	array of maps, table slot -> array of struct fg_cfi_row
 *	cfi_rules	array of maps, table slot -> array of struct fg_cfi_rule
 *	cfi_stats	per-CPU array of counters (enum fg_cfi_stat)
 *
 * A table is loaded once per file (by build-id or device and inode) and
 * shared by every process that maps the file; fg-sample frees it when the
 * last one is gone.
 */
#ifndef FG_BPF_CFI_H
#define FG_BPF_CFI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* executable mappings of one process the program can look up (a bound of its search) */
#define FG_CFI_PROC_MAPS 256
/* halvings that search FG_CFI_PROC_MAPS mappings */
#define FG_CFI_PROC_MAPS_LOG 9

/* struct fg_cfi_map.table: a slot of cfi_files, or one of these */
/* code without CFI (JIT, no .eh_frame): frame pointers */
#define FG_CFI_TABLE_FP 0xffffffffu
/* a table not loaded (yet, or over a limit): the sample falls back */
#define FG_CFI_TABLE_PENDING 0xfffffffeu

struct fg_cfi_map {
	__u64 start; /* first address */
	__u64 end;   /* one past the last */
	__u64 sub;   /* pc - sub is the pc of the table's rows (fits 32 bits in the mapping) */
	__u32 table; /* slot, FG_CFI_TABLE_FP or FG_CFI_TABLE_PENDING */
	__u32 pad;
};

struct fg_cfi_proc {
	__u32 n;     /* mappings in maps[] */
	__u32 flags; /* FG_CFI_PROC_F_* */
	/*
	 * Which version of the process' mappings this is (never 0, new at every
	 * update): the program keeps the mappings it found from one sample to
	 * the next of the same version.
	 */
	__u32 gen;
	__u32 pad;
	struct fg_cfi_map maps[FG_CFI_PROC_MAPS];
};

/* more executable mappings than FG_CFI_PROC_MAPS: a pc in none of maps[] falls back */
#define FG_CFI_PROC_F_PARTIAL 1u

struct fg_cfi_file {
	__u32 nrows; /* rows of the table (the closing FG_CFI_NONE row included) */
	__u32 nrules;
	/*
	 * Which load of the slot this is (never 0 for a table): the program's
	 * per-CPU cache of rows found tells a slot's tables apart by it.
	 */
	__u32 gen;
	__u32 pad;
};

/* The BPF program's counters, per CPU: how the in-kernel walks ended. */
enum fg_cfi_stat {
	FG_CFI_STAT_WALKS,	 /* user stacks unwound in BPF */
	FG_CFI_STAT_FRAMES,	 /* frames they found */
	FG_CFI_STAT_FP_FRAMES,	 /* of which through frame pointers (code without CFI) */
	FG_CFI_STAT_END_STOP,	 /* ended at the outermost frame: whole */
	FG_CFI_STAT_END_NOINFO,	 /* a pc with no rule, and no frame pointer to follow */
	FG_CFI_STAT_END_INVALID, /* a rule lib/cfi does not hold */
	FG_CFI_STAT_END_NOREG,	 /* a rule needed a register not recovered */
	FG_CFI_STAT_END_UNREAD,	 /* the stack could not be read */
	FG_CFI_STAT_END_LOOP,	 /* the stack pointer did not climb */
	FG_CFI_STAT_END_DEPTH,	 /* --max-depth frames */
	FG_CFI_STAT_FALLBACK,	 /* a pc in no loaded table: the sample took a snapshot instead */
	FG_CFI_STAT_FALLBACK_NOPROC, /* of which: the process had no mappings loaded */
	FG_CFI_STAT_CHECK,	     /* samples with both the walk and a snapshot (check mode) */
	FG_CFI_STAT_MAX
};

#endif
