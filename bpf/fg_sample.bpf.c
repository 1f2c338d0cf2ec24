// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fg-sample's BPF program: on every tick of a CPU-clock perf event, send the
 * interrupted task's kernel stack and user stack through a BPF ring buffer.
 *
 * The user stack is walked by frame pointers inside a copy of the stack's
 * top: one bpf_probe_read_user() from the stack pointer to the end of its
 * page, then the chain is followed inside the copy, and further pages are
 * read only when the chain leaves it.  Each read of user memory is costly;
 * one read per frame (or bpf_get_stack(BPF_F_USER_STACK)) costs several
 * times more for the same frames.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "fg/sample.h"

#define PF_KTHREAD 0x00200000

_Static_assert(2 * MAX_STACK_DEPTH <= 256, "the IP index mask in walk_step()");
#define PAGE 4096u

/* set by fg-sample between open and load */
const volatile bool kernel_stacks = true;
const volatile bool user_stacks = true;
const volatile bool filter = false;	     /* only the pids/tids in `targets` */
const volatile bool follow_children = false; /* and their descendants (COMMAND) */
const volatile bool include_idle = false;
const volatile __u32 kernel_depth = MAX_STACK_DEPTH;
const volatile __u32 user_depth = MAX_STACK_DEPTH;

/*
 * Samples go out through one BPF ring buffer shared by the CPUs, copied from
 * the per-CPU scratch sample with their real size, and without a wakeup:
 * fg-sample drains it every 100 ms.  Keep the ring small.  Its pages are
 * vmap()ed, and in a guest with shadow paging each sample that lands on a
 * page not written for a while costs microseconds: with fixed 2 KiB slots in
 * 8 MiB the output took about 4 us a sample, with real sizes in 128 KiB
 * 0.6 us, 0.12 us more than bpf_perf_event_output() (README, Benchmarks).
 */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 128 << 10); /* fg-sample sets the size (-m) */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* pid or tid -> FG_TARGET_* bits */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} targets SEC(".maps");

/* per CPU: the sample being built, and the copy of the user stack's top (one page of slack) */
struct ustack_copy {
	struct fg_event ev;
	__u8 data[FG_USTACK_COPY_MAX + PAGE];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack_copy);
} ustack SEC(".maps");

static __always_inline void count(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);

	if (v)
		*v += n;
}

static __always_inline bool is_target(struct task_struct *task, __u32 pid, __u32 tid)
{
	__u32 *v = bpf_map_lookup_elem(&targets, &pid);

	if (v && (*v & FG_TARGET_PID))
		return true;
	v = bpf_map_lookup_elem(&targets, &tid);
	if (v && (*v & FG_TARGET_TID))
		return true;
	if (!follow_children)
		return false;
	/* a descendant of a target: remember it, so its own children are found at once */
	struct task_struct *p = task;
	for (int i = 0; i < 8; i++) {
		p = BPF_CORE_READ(p, real_parent);
		if (!p)
			break;
		__u32 ppid = BPF_CORE_READ(p, tgid);
		if (ppid <= 1)
			break;
		v = bpf_map_lookup_elem(&targets, &ppid);
		if (v && (*v & FG_TARGET_PID)) {
			__u32 val = FG_TARGET_PID;

			bpf_map_update_elem(&targets, &pid, &val, BPF_ANY);
			return true;
		}
	}
	return false;
}

/* the state of one walk, shared with the bpf_loop() callback */
struct walk {
	__u64 sp, fp;
	__u32 copied; /* bytes of the copy, from sp */
	__u32 nk;     /* kernel IPs before the user ones */
	__u32 nu;     /* user IPs found */
	__u32 flags;
};

/* One step of the frame-pointer walk: follow one frame, or copy one more page. */
static long walk_step(__u32 i, void *arg)
{
	struct walk *w = arg;
	__u32 zero = 0;
	struct ustack_copy *c = bpf_map_lookup_elem(&ustack, &zero);
	__u64 off, next, ret;
	__u32 nu = w->nu, idx = w->nk + nu;

	if (!c || w->fp == 0)
		return 1; /* the outermost frame */
	if (nu >= user_depth || idx >= 2 * MAX_STACK_DEPTH) {
		w->flags |= FG_SAMPLE_F_USTACK_CUT;
		return 1;
	}
	if (w->fp < w->sp || (w->fp & 7)) {
		/* not a frame pointer: a function compiled without them */
		w->flags |= FG_SAMPLE_F_USTACK_NOFP;
		return 1;
	}
	off = w->fp - w->sp;
	if (off > FG_USTACK_COPY_MAX - 16) {
		w->flags |= FG_SAMPLE_F_USTACK_CUT;
		return 1;
	}
	if (off + 16 > w->copied) {
		/* the chain left the copy: read the next page (a whole page cannot fail halfway) */
		__u32 at = w->copied;

		if (at > FG_USTACK_COPY_MAX ||
		    bpf_probe_read_user(c->data + at, PAGE, (void *)(w->sp + at)) < 0) {
			w->flags |= FG_SAMPLE_F_USTACK_CUT;
			return 1;
		}
		w->copied = at + PAGE;
		return 0;
	}
	next = *(__u64 *)(c->data + off);
	ret = *(__u64 *)(c->data + off + 8);
	if (ret == 0)
		return 1;
	/*
	 * idx < 2 * MAX_STACK_DEPTH was checked, but clang recomputes it from a
	 * 32-bit sum the verifier cannot bound: pin it, then mask it.
	 */
	barrier_var(idx);
	c->ev.ips[idx & 255] = ret;
	w->nu = nu + 1;
	if (next != 0 && next <= w->fp) {
		/* a chain must climb the stack: the caller keeps no frame pointer */
		w->flags |= FG_SAMPLE_F_USTACK_NOFP;
		return 1;
	}
	w->fp = next;
	return 0;
}

/*
 * Walk the user stack by frame pointers inside a copy of its top.  Writes
 * the user IPs after the `nk` kernel IPs of c->ev; returns how many.
 */
static __always_inline __u32 walk_user(struct task_struct *task, struct ustack_copy *c, __u32 nk)
{
	/* the user registers through libbpf's per-architecture names (__TARGET_ARCH_*) */
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct walk w = {
		.sp = PT_REGS_SP_CORE(regs),
		.fp = PT_REGS_FP_CORE(regs),
		.nk = nk,
		.nu = 1,
	};
	__u32 len;

	if (nk >= MAX_STACK_DEPTH)
		return 0;
	c->ev.ips[nk] = PT_REGS_IP_CORE(regs);
	len = PAGE - (w.sp & (PAGE - 1));
	if (bpf_probe_read_user(c->data, len, (void *)w.sp) < 0) {
		c->ev.flags |= FG_SAMPLE_F_USTACK_FAILED;
		count(FG_STAT_USTACK_FAILED, 1);
		return 1;
	}
	w.copied = len;
	/* frames, plus a page read now and then */
	bpf_loop(MAX_STACK_DEPTH + FG_USTACK_COPY_MAX / PAGE + 1, walk_step, &w, 0);
	c->ev.flags |= w.flags;
	count(FG_STAT_USTACK_BYTES, w.copied);
	if (w.flags & FG_SAMPLE_F_USTACK_CUT)
		count(FG_STAT_USTACK_CUT, 1);
	if (w.flags & FG_SAMPLE_F_USTACK_NOFP)
		count(FG_STAT_USTACK_NOFP, 1);
	return w.nu;
}

SEC("perf_event")
int fg_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id, zero = 0;
	struct task_struct *task = bpf_get_current_task_btf();
	struct ustack_copy *c;
	struct fg_event *e;
	__u32 nk = 0, nu = 0;
	__u64 size;

	if (tid == 0 ? !include_idle : filter && !is_target(task, pid, tid)) {
		count(FG_STAT_FILTERED, 1);
		return 0;
	}
	c = bpf_map_lookup_elem(&ustack, &zero);
	if (!c)
		return 0;
	e = &c->ev;
	e->time_ns = bpf_ktime_get_ns();
	e->cpu = bpf_get_smp_processor_id();
	e->pid = pid;
	e->tid = tid;
	e->flags = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
#ifdef __TARGET_ARCH_x86
	/* the context is read in whole words: cs shares its word with FRED's bits */
	if ((*(__u64 *)((void *)&ctx->regs + offsetof(struct pt_regs, cs)) & 3) == 3)
		e->flags |= FG_SAMPLE_F_USER_MODE;
#endif
	if (kernel_stacks && !(e->flags & FG_SAMPLE_F_USER_MODE)) {
		long n = bpf_get_stack(ctx, e->ips, kernel_depth * sizeof(__u64), 0);

		if (n < 0) {
			e->flags |= FG_SAMPLE_F_KSTACK_FAILED;
			count(FG_STAT_KSTACK_FAILED, 1);
		} else {
			nk = (__u32)n / sizeof(__u64);
			if (nk >= kernel_depth)
				e->flags |= FG_SAMPLE_F_KSTACK_CUT;
		}
	}
	if (BPF_CORE_READ(task, flags) & PF_KTHREAD || !BPF_CORE_READ(task, mm))
		e->flags |= FG_SAMPLE_F_KERNEL_THREAD;
	else if (user_stacks)
		nu = walk_user(task, c, nk);
	e->nr_kernel = nk;
	e->nr_user = nu;
	size = offsetof(struct fg_event, ips) + ((__u64)nk + nu) * sizeof(__u64);
	if (size > sizeof(*e))
		size = sizeof(*e);
	if (bpf_ringbuf_output(&events, e, size, BPF_RB_NO_WAKEUP) < 0) {
		count(FG_STAT_RINGBUF_FULL, 1);
		return 0;
	}
	count(FG_STAT_SAMPLES, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
