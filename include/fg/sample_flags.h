/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The numbers a stack sample carries alike in the BPF program's events
 * (fg/bpf_abi.h) and in the sample records of the stream (fg/record.h): the
 * sample flags, which fg-sample copies through unchanged, and the numbering
 * of a stack snapshot's registers.  Included by both the BPF program and
 * user space, so it holds constants only: no types, no libc.
 */
#ifndef FG_SAMPLE_FLAGS_H
#define FG_SAMPLE_FLAGS_H

/* sample flags (struct fg_event.flags in the ring buffer, fg_rec_sample.flags on the wire) */
#define FG_SAMPLE_F_KSTACK_FAILED (1u << 0) /* kernel stack could not be read */
#define FG_SAMPLE_F_USTACK_FAILED (1u << 1) /* user stack could not be read at all */
#define FG_SAMPLE_F_USTACK_CUT (1u << 2)    /* user chain cut short (unreadable or too deep) */
#define FG_SAMPLE_F_KSTACK_CUT (1u << 3)    /* kernel stack filled MAX_STACK_DEPTH */
#define FG_SAMPLE_F_KERNEL_THREAD (1u << 4) /* no user address space */
#define FG_SAMPLE_F_USER_MODE (1u << 5)	    /* interrupted in user mode */
#define FG_SAMPLE_F_USTACK_NOFP (1u << 6)   /* user chain ended at a frame without frame pointer */
/* carries Python frames after its IPs (and snapshot): struct fg_rec_pystack */
#define FG_SAMPLE_F_PYSTACK (1u << 7)
#define FG_SAMPLE_F_USTACK_SNAPSHOT (1u << 8) /* carries user registers + stack bytes (dwarf) */
#define FG_SAMPLE_F_WEIGHT_NS (1u << 9)	      /* weight is nanoseconds, not a count */
#define FG_SAMPLE_F_OFFCPU (1u << 10)	      /* a wait: weight ns off the CPU (--off-cpu) */
#define FG_SAMPLE_F_OPEN (1u << 11)	      /* a wait not over when the run ended */
/* user IPs unwound with CFI by the BPF program (--call-graph cfi) */
#define FG_SAMPLE_F_USTACK_CFI (1u << 12)
/* --call-graph cfi: no table for one of its pcs yet; the sample carries a snapshot */
#define FG_SAMPLE_F_CFI_FALLBACK (1u << 13)
/*
 * In the BPF program's event only (fg-sample clears it): with
 * FG_SAMPLE_F_CFI_FALLBACK, the process' mappings are not in the maps, or no
 * longer its own; the event woke fg-sample to read them.
 */
#define FG_SAMPLE_F_CFI_ASK (1u << 14)

/*
 * A wait's task state (with FG_SAMPLE_F_OFFCPU), in flags bits 16 to 19
 * (above the flags, below the event number of fg-sample -e):
 * how the thread left the CPU, as the kernel reports it (the letters of
 * /proc/PID/stat and of the sched_switch tracepoint's prev_state).
 */
#define FG_SAMPLE_STATE_SHIFT 16
#define FG_SAMPLE_STATE_MASK (0xfu << FG_SAMPLE_STATE_SHIFT)
#define FG_STATE_RUNNING 0	   /* R: gave the CPU up while runnable (sched_yield) */
#define FG_STATE_INTERRUPTIBLE 1   /* S: sleeping */
#define FG_STATE_UNINTERRUPTIBLE 2 /* D: uninterruptible sleep (disk I/O, some locks) */
#define FG_STATE_STOPPED 3	   /* T: stopped by a signal */
#define FG_STATE_TRACED 4	   /* t: stopped by a tracer */
#define FG_STATE_DEAD 5		   /* X */
#define FG_STATE_ZOMBIE 6	   /* Z */
#define FG_STATE_PARKED 7	   /* P: a parked kernel thread */
#define FG_STATE_IDLE 8		   /* I: an idle kernel thread (uninterruptible, no load) */
#define FG_STATE_PREEMPTED 9	   /* R+: preempted, runnable all along */
#define FG_STATE_MAX 9

/*
 * A Python frame as a sample carries it: its code object's address, with
 * FG_PY_ENTRY set on the outermost frame of each run that one C call of
 * the interpreter's eval loop (_PyEval_EvalFrameDefault) runs.
 */
#define FG_PY_ENTRY (1ull << 63)
#define FG_PYSTACK_F_CUT (1u << 0)    /* deeper than the walk's bound: the outer frames left out */
#define FG_PYSTACK_F_FAILED (1u << 1) /* a read failed: the frames beyond it left out */
/* the record: each frame's instruction offset follows the frames (struct fg_rec_pystack) */
#define FG_PYSTACK_F_OFFSETS (1u << 2)
/*
 * In the BPF program's event only: a frame's instruction, in code units (2
 * bytes) from the start of its bytecode, plus one (0: not known), in bits
 * 47 to 62 of the frame (user addresses lie below 1 << 47; a code object
 * above, or an instruction past 65534 units, carries none).  fg-sample
 * moves it to the record's offsets.
 */
#define FG_PY_INSTR_SHIFT 47
#define FG_PY_INSTR_MASK 0xffffull
#define FG_PY_CODE_MASK ((1ull << FG_PY_INSTR_SHIFT) - 1)

/*
 * The top 12 bits of the flags are the sample's event: its number among the
 * events of the run (fg-sample -e), 0 for the first (cpu-clock by default).
 * The flags above stay in the low 16 bits, a wait's state in bits 16 to 19.
 */
#define FG_SAMPLE_EVENT_SHIFT 20
#define FG_SAMPLE_F_MASK 0xffffu
#define FG_SAMPLE_EVENT(flags) ((flags) >> FG_SAMPLE_EVENT_SHIFT)

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
 * arm64's, in its perf_regs numbering (PERF_REG_ARM64_*): x0-x30 are 0-30 (x29
 * the frame pointer, x30 the link register), sp 31, pc 32.  Snapshots of arm64
 * processes carry abi FG_USTACK_ABI_ARM64; fg-sym unwinds them on any machine.
 */
#define FG_REG_ARM64_X29 29
#define FG_REG_ARM64_LR 30
#define FG_REG_ARM64_SP 31
#define FG_REG_ARM64_PC 32
#define FG_REG_ARM64_MAX 33
#define FG_USTACK_ABI_ARM64 2u		    /* fg_rec_ustack.abi: the registers above */
#define FG_USTACK_REGS_ARM64 0x1ffffffffull /* x0-x30, sp, pc */

#endif
