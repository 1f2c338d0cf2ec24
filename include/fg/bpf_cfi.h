/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --call-graph cfi: the maps through which fg-sample hands lib/cfi's tables
 * to the BPF program (bpf/cfi_unwind.h), and the program's counters of how
 * its walks ended.  Shared by both sides, so only __u32/__u64 types.
 *
 *	cfi_procs	hash, pid -> struct fg_cfi_proc: the executable mappings
 *			of a process, sorted by start, each naming its table
 *	cfi_files	array, table slot -> struct fg_cfi_file
 *	cfi_inodes	hash, struct fg_cfi_inode_key -> struct fg_cfi_inode: the
 *			loaded tables by the identity of their file, for a
 *			mapping the program finds in the kernel's own list of
 *			them (a process whose mappings are not loaded yet)
 *	cfi_mapped	LRU hash, pid -> where and when the process last
 *			exec'd or mapped over its mappings in cfi_procs: set by
 *			the program itself (tracepoints), before the records
 *	cfi_rows	array of maps, table slot -> array of struct fg_cfi_row
 *	cfi_rules	array of maps, table slot -> array of struct fg_cfi_rule
 *	cfi_stats	per-CPU array of counters (enum fg_cfi_stat)
 *
 * A table is loaded once per file (by device, inode and change time) and
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
	/*
	 * The time (CLOCK_MONOTONIC ns) of the newest record these mappings
	 * are from: the program takes one only while the process has exec'd
	 * or mapped nothing over it since (cfi_mapped), and otherwise finds
	 * the frame's file in the kernel's own list of the process' mappings.
	 */
	__u64 since;
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

/*
 * A file as the kernel names it: its inode's number and its superblock's
 * device (the kernel's encoding: major << 20 | minor), and the inode's
 * change time, which every write to the file moves: a file rewritten in
 * place, or a new file given a freed inode's number, is another key, so
 * that a table is never used for content it was not built from.
 */
struct fg_cfi_inode_key {
	__u64 ino;
	__u32 dev;
	__u32 ctime_nsec;
	__s64 ctime_sec;
};

/* the ELF segments of a file a mapping's offset is looked up in (a file with more: not there) */
#define FG_CFI_INODE_LOADS 4

/*
 * A loaded table by its file: its slot, and what turns a mapping's file
 * offset into the table's pcs (lib/cfi_load computes the same for a
 * process' mappings: sub = start - vaddr(pgoff) + base).
 */
struct fg_cfi_inode {
	__u32 table; /* slot of cfi_files */
	__u32 nloads;
	__u64 base; /* the table's rows are relative to this file address */
	struct {
		__u64 offset, filesz, vaddr;
	} loads[FG_CFI_INODE_LOADS];
	/*
	 * The lowest address of its code segments (PF_X), FG_CFI_NO_CODE when
	 * it has none: an executable's code starts there plus the load bias,
	 * where the kernel's mm->start_code says.
	 */
	__u64 xvaddr;
};
#define FG_CFI_NO_CODE (~0ull)

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
	/* why the samples fell back (each fallback is one of these) */
	FG_CFI_STAT_FALLBACK_PENDING, /* the mapping's table is being built, or over a limit */
	FG_CFI_STAT_FALLBACK_NOTABLE, /* a file whose table is not loaded */
	FG_CFI_STAT_FALLBACK_NOVMA,   /* code in no file the program could look up */
	FG_CFI_STAT_FALLBACK_GONE,    /* the table's slot was emptied */
	FG_CFI_STAT_VMA_LOOKUPS,      /* lookups in the kernel's list of the process' mappings */
	FG_CFI_STAT_VMA_MAPS,	      /* of which found a mapping with its table */
	FG_CFI_STAT_STALE,    /* walks of a process whose mappings were stale (code mapped over) */
	FG_CFI_STAT_EXE_MAPS, /* executables' code found from the address space, not the list */
	FG_CFI_STAT_MAX
};

#endif
