/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The BPF program's interface: the contract between bpf/fg_sample.bpf.c and
 * fg-sample.  What one sample looks like in the BPF ring buffer (struct
 * fg_event, with a stack snapshot struct fg_event_ustack), the per-CPU
 * counters of its `stats` map, the values of its `targets` map, and the
 * limits both sides size their buffers by.  Both sides include this file,
 * so it uses only the kernel's __u32/__u64 types (vmlinux.h in BPF,
 * <linux/types.h> in user space) and no libc.
 *
 * Only the sampler side reads it: bpf/, cmd/fg-sample.c and lib/bpf_event.c,
 * which turns these events into the records of the stream.  The numbers a
 * sample carries alike in an event and in a record (its flags, the
 * snapshot's register numbering) are in fg/sample_flags.h.
 */
#ifndef FG_BPF_ABI_H
#define FG_BPF_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "fg/sample_flags.h"

#ifndef TASK_COMM_LEN
#define TASK_COMM_LEN 16
#endif

/* the most kernel or user frames one sample carries (each) */
#ifndef MAX_STACK_DEPTH
#define MAX_STACK_DEPTH 127
#endif

/*
 * The most Python frames one sample carries (fg-sample's Python walk,
 * struct fg_py_proc), after its kernel and user IPs; a deeper Python stack
 * is cut there, counted (FG_STAT_PY_CUT) and flagged (FG_PYSTACK_F_CUT).
 */
#define FG_PY_DEPTH 64

/* bytes of user stack the BPF program may copy per sample to walk it */
#ifndef FG_USTACK_COPY_MAX
#define FG_USTACK_COPY_MAX 16384
#endif

/*
 * --call-graph dwarf[,BYTES]: the user stack snapshot's size, at most and by
 * default, as perf's (a multiple of 8; perf's limit keeps a sample under 64 KiB).
 */
#define FG_USTACK_SNAPSHOT_MAX 65528
#define FG_USTACK_SNAPSHOT_DEFAULT 8192

/*
 * The attach cookie of each program (bpf_get_attach_cookie()): the event's
 * number, and with FG_COOKIE_ENTRY, a uprobe on a function's first
 * instruction, where the caller's return address is at the stack pointer
 * and not yet in a frame.
 */
#define FG_COOKIE_EVENT_MASK 0xffffull
#define FG_COOKIE_ENTRY (1ull << 32)

/* One sample as the BPF program sends it.  ips[] holds nr_kernel kernel IPs then nr_user user IPs.
 */
struct fg_event {
	__u64 time_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC; a wait's: when it ended */
	__u64 weight;  /* 1 for a CPU sample; a wait's nanoseconds off the CPU */
	__u32 cpu;
	__u32 pid; /* thread group id */
	__u32 tid;
	__u32 flags; /* FG_SAMPLE_F_* */
	__u32 nr_kernel;
	__u32 nr_user;
	char comm[TASK_COMM_LEN];
	__u32 nr_py;	/* Python frames after the user IPs (code objects, FG_PY_ENTRY) */
	__u32 py_flags; /* FG_PYSTACK_F_* */
	__u64 ips[2 * MAX_STACK_DEPTH + FG_PY_DEPTH];
};

/*
 * With FG_SAMPLE_F_USTACK_SNAPSHOT, an event is the fixed part of struct
 * fg_event (up to ips[]), then this, then `size` bytes of user stack (a
 * multiple of 8) copied from `sp` up, then the nr_kernel + nr_user IPs.  The
 * first 32 bytes are laid out as struct fg_rec_ustack on the wire.
 */
struct fg_event_ustack {
	__u32 abi; /* FG_USTACK_ABI_X86_64 */
	__u32 nr_regs;
	__u64 regs_mask;
	__u64 sp; /* the user stack pointer: where the data starts */
	__u32 size;
	__u32 pad;
	__u64 regs[FG_USTACK_NR_REGS];
};

/* per-CPU counters, the indices of the BPF program's `stats` array */
enum fg_stat {
	FG_STAT_SAMPLES,	/* samples the program was run for and kept */
	FG_STAT_RINGBUF_FULL,	/* samples lost: the ring buffer was full */
	FG_STAT_KSTACK_FAILED,	/* bpf_get_stack() of the kernel stack failed */
	FG_STAT_USTACK_FAILED,	/* the user stack could not be read at all */
	FG_STAT_USTACK_CUT,	/* the user chain was cut short */
	FG_STAT_FILTERED,	/* samples of other processes, left out by -p/-t/-I */
	FG_STAT_USTACK_BYTES,	/* bytes of user stack copied, for the overhead report */
	FG_STAT_USTACK_NOFP,	/* the user chain ended at a frame without a frame pointer */
	FG_STAT_SNAPSHOTS,	/* samples with a user stack snapshot (dwarf) */
	FG_STAT_SNAPSHOT_BYTES, /* bytes of stack in those snapshots */
	FG_STAT_SNAPSHOT_WHOLE, /* snapshots that reached the stack's end before BYTES */
	FG_STAT_BUSY,		/* events left out: the CPU was in another of our programs */
	/* --off-cpu: the program on sched_switch */
	FG_STAT_WAITS,		    /* waits sent through the ring buffer of waits */
	FG_STAT_WAITS_RINGBUF_FULL, /* waits lost: that ring buffer was full */
	FG_STAT_WAITS_UNSEEN,	    /* waits not followed: no memory to keep them */
	FG_STAT_WAITS_SHORT,	    /* waits left out: shorter than --min-block */
	FG_STAT_WAITS_LONG,	    /* waits left out: longer than --max-block */
	FG_STAT_WAITS_NO_START,	    /* waits of threads followed whose start was not seen */
	FG_STAT_WAITS_NO_END,	    /* waits lost: the switch that ended them was not seen */
	/* tracepoints: the kernel stack unwound in BPF with the kernel's ORC tables */
	FG_STAT_KORC_WALKS,    /* kernel stacks unwound so */
	FG_STAT_KORC_FB_TEXT,  /* taken by bpf_get_stack(): an address outside vmlinux text */
	FG_STAT_KORC_FB_OTHER, /* the same: a rule not followed, a word that could not be read */
	FG_STAT_KORC_CHECKED,  /* --kernel-unwind check: stacks taken both ways */
	FG_STAT_KORC_DIFFER,   /* of those, the ones that differ */
	/* Python: the stacks of the processes in py_procs (struct fg_py_proc) */
	FG_STAT_PY_STACKS,    /* samples of those processes with Python frames */
	FG_STAT_PY_FRAMES,    /* Python frames they carry */
	FG_STAT_PY_CUT,	      /* Python stacks cut at FG_PY_DEPTH */
	FG_STAT_PY_NO_THREAD, /* samples of a thread without a thread state, or no frame */
	FG_STAT_PY_FAILED,    /* a read of the interpreter's memory failed: stack ended there */
	FG_STAT_MAX
};

/*
 * The kernel's ORC unwind tables (x86-64), as fg-sample hands them to the BPF
 * program's kernel-stack unwinder (fg/korc.h builds them): one entry per
 * range of vmlinux text, sorted by `ip`, the offset from _stext where the
 * range starts, and the index of its rule in a table of the distinct rules
 * (korc_rules), each the kernel's struct orc_entry with its bit fields
 * spread into bytes.  A kernel has some 500,000 entries and a few hundred
 * distinct rules: 8 bytes an entry rather than 16 halve the pages fg-sample
 * writes at its start (each page's first touch costs a fault).  The block
 * index (korc_lookup) gives, for each block of 1 << FG_KORC_BLOCK_SHIFT
 * bytes of text, the first entry to search from, as the kernel's orc_lookup
 * does.
 */
struct fg_korc_entry {
	__u32 ip;
	__u32 rule; /* its index in korc_rules */
};

struct fg_korc_rule {
	__s16 sp_offset;
	__s16 bp_offset;
	__u8 sp_reg;
	__u8 bp_reg;
	__u8 type;
	__u8 signal;
};

/* distinct rules at most (a kernel with more is unwound by bpf_get_stack()) */
#define FG_KORC_MAX_RULES 4096u
#define FG_KORC_BLOCK_SHIFT 8
#define FG_KORC_MAX_ENTRIES (4u << 20)
/* the bytes of kernel memory the program that copies the tables copies at a time */
#define FG_KORC_CHUNK 65536

/*
 * The kernel symbols fg-sample needs at start (where the ORC tables are, and
 * --off-cpu's __schedule), looked up by bpf/fg_ksym.bpf.c's program, run once
 * through BPF_PROG_TEST_RUN with this as its context: it reads `name` (each
 * NUL-padded) and writes `addr` and `err` (bpf_kallsyms_lookup_name()'s 0,
 * -ENOENT or -EPERM) for the first `n`.  That saves formatting the whole of
 * /proc/kallsyms to find them.
 */
#define FG_KSYM_MAX 12
#define FG_KSYM_NAME 32
struct fg_ksym_args {
	char name[FG_KSYM_MAX][FG_KSYM_NAME];
	__u64 addr[FG_KSYM_MAX];
	__s64 err[FG_KSYM_MAX];
	__u32 n;
	__u32 pad;
};

/* the kernel's ORC_REG_* (arch/x86/include/asm/orc_types.h) */
#define FG_ORC_REG_UNDEFINED 0
#define FG_ORC_REG_PREV_SP 1
#define FG_ORC_REG_DX 2
#define FG_ORC_REG_DI 3
#define FG_ORC_REG_BP 4
#define FG_ORC_REG_SP 5
#define FG_ORC_REG_R10 6
#define FG_ORC_REG_R13 7
#define FG_ORC_REG_BP_INDIRECT 8
#define FG_ORC_REG_SP_INDIRECT 9
/* and its ORC_TYPE_* */
#define FG_ORC_TYPE_UNDEFINED 0
#define FG_ORC_TYPE_END_OF_STACK 1
#define FG_ORC_TYPE_CALL 2
#define FG_ORC_TYPE_REGS 3
#define FG_ORC_TYPE_REGS_PARTIAL 4

/*
 * A Python process, as fg-sample found its interpreter (lib/python,
 * fg_py_open): the value of the BPF program's py_procs map, keyed by pid.
 * The program finds the sampled thread's PyThreadState in its glibc
 * pthread_getspecific() slot of _PyRuntime's autoTSSkey (the thread pointer,
 * fs_base, is the thread's struct pthread), then follows its frames by
 * these offsets (-1: no such field in this version).
 */
struct fg_py_proc {
	__u64 tss_key;		    /* &_PyRuntime's Py_tss_t autoTSSkey: {int init; u32 key} */
	__s32 pthread_specific_off; /* specific_1stblock's offset in glibc's struct pthread */
	__s16 tstate_frame;	    /* PyThreadState: the frame, or the _PyCFrame (3.11, 3.12) */
	__s16 cframe_current_frame; /* _PyCFrame.current_frame (3.11, 3.12), else -1 */
	__s16 frame_previous;	    /* the frame: its caller's */
	__s16 frame_code;	    /* its code object */
	__s16 frame_owner;	    /* its owner byte (3.12+: FRAME_OWNED_BY_CSTACK is a shim) */
	__s16 frame_is_entry;	    /* its is_entry byte (3.11) */
	__s16 owner_cstack;	    /* FRAME_OWNED_BY_CSTACK (3.12+) */
	__u16 frame_read;	    /* bytes of a frame read: 8 to FG_PY_FRAME_READ_MAX */
	__u8 kind;		    /* FG_PY_KIND_* */
	__u8 minor;		    /* 3.minor, for the reports */
	__s16 frame_instr;	    /* the frame's instruction: f_lasti, prev_instr, instr_ptr */
	__s16 code_code;	    /* PyCodeObject.co_code_adaptive (3.11+) */
	__u8 instr_kind;	    /* FG_PY_INSTR_* */
	__u8 pad;
};

#define FG_PY_FRAME_READ_MAX 128
#define FG_PY_KIND_OBJECTS 0	  /* 3.8-3.10: PyFrameObject, one C call of the eval loop each */
#define FG_PY_KIND_IS_ENTRY 1	  /* 3.11: _PyInterpreterFrame, is_entry ends a C call's run */
#define FG_PY_KIND_CSTACK 2	  /* 3.12+: a frame owned by the C stack ends a run */
#define FG_PY_INSTR_NONE 0	  /* the instruction not read */
#define FG_PY_INSTR_LASTI_BYTES 1 /* f_lasti, an int: bytes (3.8, 3.9) */
#define FG_PY_INSTR_LASTI_UNITS 2 /* f_lasti: code units of 2 bytes (3.10) */
#define FG_PY_INSTR_POINTER 3	  /* a pointer into co_code_adaptive (3.11+) */
/* values of the `targets` map: what a key matches */
#define FG_TARGET_PID 1u /* key is a thread group id */
#define FG_TARGET_TID 2u /* key is a thread id */

#endif
