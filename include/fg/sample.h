/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The contract between the BPF program (bpf/fg_sample.bpf.c) and fg-sample:
 * what one sample looks like in the BPF ring buffer, the per-CPU counters
 * and the sample flags.  Both sides include this file, so it uses only the
 * kernel's __u32/__u64 types (vmlinux.h in BPF, <linux/types.h> in user
 * space) and no libc.
 *
 * The sample flags are also the flags of the sample record on the wire
 * (include/fg/record.h): fg-sample copies them through unchanged.
 */
#ifndef FG_SAMPLE_H
#define FG_SAMPLE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#ifndef TASK_COMM_LEN
#define TASK_COMM_LEN 16
#endif

/* the most kernel or user frames one sample carries (each) */
#ifndef MAX_STACK_DEPTH
#define MAX_STACK_DEPTH 127
#endif

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

/* sample flags (struct fg_event.flags, and fg_rec_sample.flags on the wire) */
#define FG_SAMPLE_F_KSTACK_FAILED (1u << 0)  /* kernel stack could not be read */
#define FG_SAMPLE_F_USTACK_FAILED (1u << 1)  /* user stack could not be read at all */
#define FG_SAMPLE_F_USTACK_CUT (1u << 2)     /* user chain cut short (unreadable or too deep) */
#define FG_SAMPLE_F_KSTACK_CUT (1u << 3)     /* kernel stack filled MAX_STACK_DEPTH */
#define FG_SAMPLE_F_KERNEL_THREAD (1u << 4)  /* no user address space */
#define FG_SAMPLE_F_USER_MODE (1u << 5)      /* interrupted in user mode */
#define FG_SAMPLE_F_USTACK_NOFP (1u << 6)    /* user chain ended at a frame without frame pointer */
#define FG_SAMPLE_F_USTACK_SNAPSHOT (1u << 8) /* carries user registers + stack bytes (dwarf) */
#define FG_SAMPLE_F_WEIGHT_NS (1u << 9)       /* weight is nanoseconds (off-CPU, later) */

/* One sample as the BPF program sends it.  ips[] holds nr_kernel kernel IPs then nr_user user IPs. */
struct fg_event {
	__u64 time_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u32 cpu;
	__u32 pid; /* thread group id */
	__u32 tid;
	__u32 flags; /* FG_SAMPLE_F_* */
	__u32 nr_kernel;
	__u32 nr_user;
	char comm[TASK_COMM_LEN];
	__u64 ips[2 * MAX_STACK_DEPTH];
};

/*
 * A snapshot's registers: x86-64's user registers in the kernel's perf_regs
 * numbering (PERF_REG_X86_*), those perf records for --call-graph dwarf: all
 * but the segment registers ds, es, fs and gs.  regs[] holds the registers
 * of regs_mask in the order of their numbers.
 */
enum fg_reg_x86 {
	FG_REG_X86_AX,
	FG_REG_X86_BX,
	FG_REG_X86_CX,
	FG_REG_X86_DX,
	FG_REG_X86_SI,
	FG_REG_X86_DI,
	FG_REG_X86_BP,
	FG_REG_X86_SP,
	FG_REG_X86_IP,
	FG_REG_X86_FLAGS,
	FG_REG_X86_CS,
	FG_REG_X86_SS,
	FG_REG_X86_DS,
	FG_REG_X86_ES,
	FG_REG_X86_FS,
	FG_REG_X86_GS,
	FG_REG_X86_R8,
	FG_REG_X86_R9,
	FG_REG_X86_R10,
	FG_REG_X86_R11,
	FG_REG_X86_R12,
	FG_REG_X86_R13,
	FG_REG_X86_R14,
	FG_REG_X86_R15,
	FG_REG_X86_MAX
};

#define FG_USTACK_ABI_X86_64 1u		  /* fg_event_ustack.abi: the registers above */
#define FG_USTACK_REGS_X86_64 0xff0fffull /* every one but ds, es, fs, gs */
#define FG_USTACK_NR_REGS 20		  /* the bits of FG_USTACK_REGS_X86_64 */

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
	FG_STAT_MAX
};

/* values of the `targets` map: what a key matches */
#define FG_TARGET_PID 1u /* key is a thread group id */
#define FG_TARGET_TID 2u /* key is a thread id */

#endif
