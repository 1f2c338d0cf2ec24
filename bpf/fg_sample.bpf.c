// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fg-sample's BPF programs: on every tick of a CPU-clock perf event, or on
 * each event it is asked to sample (-e: another perf software event, a
 * tracepoint, a uprobe), send the task's kernel stack and user stack through
 * a BPF ring buffer.  The three programs (perf_event, tracepoint, uprobe)
 * differ only in how they are entered: they take a sample alike, and the
 * number of the event, their attach cookie, goes into the sample's flags.
 *
 * The user stack is walked by frame pointers inside a copy of the stack's
 * top: one bpf_probe_read_user() from the stack pointer to the end of its
 * page, then the chain is followed inside the copy, and further pages are
 * read only when the chain leaves it.  Each read of user memory is costly;
 * one read per frame (or bpf_get_stack(BPF_F_USER_STACK)) costs several
 * times more for the same frames.
 *
 * With --call-graph dwarf the sample also carries the user registers and a
 * snapshot of the user stack, BYTES from the stack pointer up, for fg-sym to
 * unwind with the binaries' CFI later (perf's method).  The snapshot is the
 * same copy, extended page by page to BYTES or to the first page that cannot
 * be read (the stack's end); the frame-pointer walk then runs inside it.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "fg/bpf_abi.h"
#define FG_KORC_TYPES_ONLY /* the step itself in korc_unwind.h */
#include "fg/korc_step.h"
#undef FG_KORC_TYPES_ONLY

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
const volatile __u32 snapshot_bytes = 0; /* --call-graph dwarf,BYTES: a multiple of 8; 0 for fp */
/* tracepoints and uprobes: a sample every `count_period` events (-c; perf counts the others) */
const volatile __u64 count_period = 1;
const volatile bool cpu_filter = false; /* tracepoints and uprobes: only the CPUs in `cpus` (-C) */
const volatile bool python = false;	/* the Python stacks of the processes in py_procs */

/*
 * Samples go out through a BPF ring buffer of their CPU's, copied from the
 * per-CPU scratch sample with their real size, and without a wakeup:
 * fg-sample drains them every 100 ms.  Keep the rings small.  Their pages
 * are vmap()ed, and in a guest with shadow paging each sample that lands on
 * a page not written for a while costs microseconds: with fixed 2 KiB slots
 * in 8 MiB the output took about 4 us a sample, with real sizes in 128 KiB
 * 0.6 us, 0.12 us more than bpf_perf_event_output() (README, Benchmarks).
 * One ring shared by the CPUs cost 50 to 175 ns more a sample on 2 CPUs:
 * its lock and producer position went from one CPU's cache to the other's.
 */
struct events_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096); /* fg-sample sets the size (-m) */
};

/* CPU -> its ring; fg-sample sets the size (the possible CPUs) and a ring for each CPU sampled */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct events_ring);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, FG_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/*
 * pid or tid -> FG_TARGET_* bits.  fg-sample sizes it: the ids of -p and -t
 * alone, or 65536 when a command's descendants are added as they are found.
 * A hash of 65536 has 1 MiB of buckets, and every tick of an untargeted
 * task looked into it cold.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} targets SEC(".maps");

/* per CPU, per event (its number): the events since its last sample, with -c N */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* fg-sample sets it: the number of events */
	__type(key, __u32);
	__type(value, __u64);
} evcount SEC(".maps");

/* -C for the programs that run on every CPU (tracepoints, uprobes): CPU -> 1 when sampled */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* fg-sample sets it: the possible CPUs */
	__type(key, __u32);
	__type(value, __u32);
} cpus SEC(".maps");

/*
 * From 3.11 CPython keeps a thread's frames one after another in its data
 * stack, each caller's below its callee's: the Python walk reads up to this
 * many bytes ending with a frame (not below its page), so that one read
 * serves the frames of several calls.  (A read of user memory costs a guest
 * tens of nanoseconds, and little more for 1 KiB than for 72 bytes.)
 */
#define PY_WIN 1024u
/* the copy of the user stack: a snapshot's size, rounded up to a page, and one page of slack */
#define COPY_CAP (((FG_USTACK_SNAPSHOT_MAX + PAGE - 1) & ~(PAGE - 1)) + PAGE)
_Static_assert(COPY_CAP >= FG_USTACK_COPY_MAX + PAGE, "the fp walk's copy");
#define NIPS (2 * MAX_STACK_DEPTH + FG_PY_DEPTH) /* kernel, user and Python frames */
_Static_assert(COPY_CAP >= FG_USTACK_SNAPSHOT_MAX + 8 * NIPS, "the IPs after it");
_Static_assert(NIPS <= 512, "the IP index mask in py_step()");

/*
 * Per CPU: the sample being built, and the copy of the user stack's top.  A
 * sample without a snapshot goes out from `ev` (its fixed part, then its
 * IPs); one with a snapshot from `head`, a copy of ev's fixed part, followed
 * by the registers, the stack bytes and, moved there at the end, the IPs.
 * Too large for a per-CPU array (32 KiB at most): an array indexed by CPU,
 * fg-sample sets its size to the possible CPUs.
 *
 * Programs may run within one another on a CPU: a clock tick's program
 * while a uprobe's runs (the kernel keeps perf_event and tracepoint programs
 * apart, not uprobes), or a uprobe's program preempted by another task's.
 * `busy` guards the slot: taken with an atomic add, a program that finds it
 * taken leaves the event out and counts it (FG_STAT_BUSY).
 */
struct ustack_copy {
	__u32 busy;
	__u32 pad;
	struct fg_event ev;
	/*
	 * Bytes of the copy, from sp, and whether a page could not be read (the
	 * copy then holds the stack to its end).  Here rather than in the walk's
	 * state on the BPF stack: the verifier then knows nothing of them, and
	 * checks the bpf_loop() callbacks without a state for each value.
	 */
	__u32 copied;
	__u32 ended;
	/* the kernel stack's walk (korc_unwind.h): its frame, its frames found, its last step */
	struct fg_korc_state korc;
	__u32 korc_n;
	__s32 korc_result;
	__u8 pywin[PY_WIN + FG_PY_FRAME_READ_MAX]; /* the Python walk's frames, as read */
	__u8 head[__builtin_offsetof(struct fg_event, ips)];
	struct fg_event_ustack snap;
	__u8 data[COPY_CAP];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* fg-sample sets it: the possible CPUs */
	__type(key, __u32);
	__type(value, struct ustack_copy);
} ustack SEC(".maps");

/* Add n to counter `which` of a per-CPU array of counters. */
static __always_inline void map_add(void *counters, __u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(counters, &which);

	if (v)
		*v += n;
}

/*
 * A global function, as cfi_count(): the verifier checks its body once, not
 * on every path through each of its 40-odd callers, and inlines its map
 * lookup once (each inlining copies the whole program and its state).
 */
__noinline int count(__u32 which, __u64 n)
{
	map_add(&stats, which, n);
	return 0;
}

static __always_inline bool is_target(struct task_struct *task, __u32 pid, __u32 tid)
{
	__u32 *v = bpf_map_lookup_elem(&targets, &pid);

	if (v && (*v & FG_TARGET_PID))
		return true;
	/* a main thread: its tid is its pid, looked up already */
	if (tid == pid) {
		if (v && (*v & FG_TARGET_TID))
			return true;
	} else {
		v = bpf_map_lookup_elem(&targets, &tid);
		if (v && (*v & FG_TARGET_TID))
			return true;
	}
	if (!follow_children)
		return false;
	/* a descendant of a target: remember it, so its own children are found at once */
	struct task_struct *p = task;
	for (int i = 0; i < 8; i++) {
		p = p->real_parent; /* read in place, as the verifier allows */
		if (!p)
			break;
		__u32 ppid = p->tgid;
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

/*
 * Whether the current task has user memory: not a kernel thread, and its mm
 * not yet let go of at exit.  A global function, so that the verifier checks
 * it once, not on every path that reaches it: each load of task->mm, a
 * pointer into the kernel's types, costs the verifier searches of the whole
 * kernel BTF by name (whether that field is trusted, or trusted or NULL).
 */
__noinline int current_user_task(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return !(task->flags & PF_KTHREAD) && task->mm;
}

/*
 * The command name of `task`, a pointer the verifier trusts (the current
 * task): read in place, rather than with bpf_get_current_comm().  The kernel
 * keeps it NUL-terminated and padded with NULs (strscpy_pad), as that helper
 * would copy it.
 */
static __always_inline void task_comm(char *dst, struct task_struct *task)
{
	/* in two words, not sixteen bytes: the verifier lets a load span the array */
	const __u64 *from = (const __u64 *)task->comm;
	__u64 *to = (__u64 *)dst;

	_Static_assert(TASK_COMM_LEN == 16, "two words");
	to[0] = from[0];
	to[1] = from[1];
}

/* the state of one walk, shared with the bpf_loop() callbacks */
struct walk {
	__u64 sp, fp;
	__u32 nk; /* kernel IPs before the user ones */
	__u32 nu; /* user IPs found */
	__u32 flags;
	__u32 slot; /* the key of this walk's ustack_copy */
};

/*
 * Copy one more page of the stack, at the end of the copy: false when
 * another page does not fit, or cannot be read (the end of the stack).
 */
static __always_inline bool copy_page(struct walk *w, struct ustack_copy *c)
{
	__u32 at = c->copied;

	if (c->ended || at > COPY_CAP - PAGE)
		return false;
	/* a whole page, aligned: it cannot fail halfway */
	if (bpf_probe_read_user(c->data + at, PAGE, (void *)(w->sp + at)) < 0) {
		c->ended = 1;
		return false;
	}
	c->copied = at + PAGE;
	return true;
}

/* One step of the snapshot: one more page, until it holds snapshot_bytes. */
static long snapshot_step(__u32 i, void *arg)
{
	struct walk *w = arg;
	struct ustack_copy *c = bpf_map_lookup_elem(&ustack, &w->slot);

	if (!c || c->copied >= snapshot_bytes)
		return 1;
	return copy_page(w, c) ? 0 : 1;
}

/*
 * Whether the frame-pointer walk ends before its next frame, with the flag
 * it ends with set in w->flags, as far as the frame pointer alone tells: at
 * the outermost frame, at the depth asked for, at a value that cannot be a
 * frame pointer (a function compiled without them keeps anything in it), or
 * at a frame beyond the most the copy of the stack may hold.
 */
static __always_inline bool fp_walk_ends(struct walk *w)
{
	if (w->fp == 0)
		return true; /* the outermost frame */
	if (w->nu >= user_depth || w->nk + w->nu >= 2 * MAX_STACK_DEPTH) {
		w->flags |= FG_SAMPLE_F_USTACK_CUT;
		return true;
	}
	if (w->fp < w->sp || (w->fp & 7)) {
		w->flags |= FG_SAMPLE_F_USTACK_NOFP;
		return true;
	}
	/* the copy ends below FG_USTACK_COPY_MAX + PAGE (walk_step()) */
	if (w->fp - w->sp > FG_USTACK_COPY_MAX + PAGE - 16) {
		w->flags |= FG_SAMPLE_F_USTACK_CUT;
		return true;
	}
	return false;
}

/* One step of the frame-pointer walk: follow one frame, or copy one more page. */
static long walk_step(__u32 i, void *arg)
{
	struct walk *w = arg;
	struct ustack_copy *c = bpf_map_lookup_elem(&ustack, &w->slot);
	__u64 off, next, ret;
	__u32 nu = w->nu, idx = w->nk + nu;

	if (!c || fp_walk_ends(w))
		return 1;
	off = w->fp - w->sp;
	if (off + 16 > c->copied) {
		/* the chain left the copy: read the next page, up to FG_USTACK_COPY_MAX */
		if (c->copied >= FG_USTACK_COPY_MAX || !copy_page(w, c)) {
			w->flags |= FG_SAMPLE_F_USTACK_CUT;
			return 1;
		}
		return 0;
	}
	if (off > COPY_CAP - 16)
		return 1; /* cannot happen (off + 16 <= copied): for the verifier */
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

#include "cfi_unwind.h"
#include "korc_unwind.h"

#ifdef __TARGET_ARCH_x86
/*
 * The user registers into the snapshot, in perf_regs order: those the task
 * saved when it entered the kernel (its pt_regs at the top of its kernel
 * stack), so a sample taken in kernel mode gets the user registers too.
 * x86-64 only (the abi of the snapshot): fg-sample refuses --call-graph
 * dwarf elsewhere.
 */
static __always_inline void snapshot_regs(struct fg_event_ustack *u, struct pt_regs *regs)
{
	u->abi = FG_USTACK_ABI_X86_64;
	u->nr_regs = FG_USTACK_NR_REGS;
	u->regs_mask = FG_USTACK_REGS_X86_64;
	u->regs[0] = regs->ax;
	u->regs[1] = regs->bx;
	u->regs[2] = regs->cx;
	u->regs[3] = regs->dx;
	u->regs[4] = regs->si;
	u->regs[5] = regs->di;
	u->regs[6] = regs->bp;
	u->regs[7] = regs->sp;
	u->regs[8] = regs->ip;
	u->regs[9] = regs->flags;
	u->regs[10] = regs->cs;
	u->regs[11] = regs->ss;
	u->regs[12] = regs->r8; /* 12 to 15: perf_regs 16 to 23, ds es fs gs are not in the mask */
	u->regs[13] = regs->r9;
	u->regs[14] = regs->r10;
	u->regs[15] = regs->r11;
	u->regs[16] = regs->r12;
	u->regs[17] = regs->r13;
	u->regs[18] = regs->r14;
	u->regs[19] = regs->r15;
}
#endif

/* A snapshot begun: its registers and stack pointer, its bytes still to come. */
static __always_inline void snapshot_begin(struct ustack_copy *c, struct pt_regs *regs, __u64 sp)
{
#ifdef __TARGET_ARCH_x86
	snapshot_regs(&c->snap, regs);
	c->snap.sp = sp;
	c->snap.size = 0;
	c->ev.flags |= FG_SAMPLE_F_USTACK_SNAPSHOT;
#endif
}

/*
 * Walk the user stack by frame pointers inside a copy of its top, which
 * becomes the snapshot with --call-graph dwarf when `snapshot` (a sample's
 * walk; the off-CPU program's has none, and a CFI walk state of its own).
 * Writes the user IPs after the `nk` kernel IPs of c->ev, the `slot` of the
 * ustack map; returns how many.
 */
static __always_inline __u32 walk_user(void *ctx, bool ctx_regs, struct task_struct *task,
				       struct ustack_copy *c, __u32 nk, __u32 slot, bool snapshot,
				       bool entry)
{
	/*
	 * The user registers: the program's context when `ctx_regs` (a uprobe;
	 * a constant, so that each program reads one kind of pointer), else
	 * those the task saved when it entered the kernel.  Read in place, not
	 * with a helper call each (BPF_CORE_READ).  The names are libbpf's for
	 * each architecture.
	 */
	struct pt_regs *regs = ctx_regs ? ctx : (struct pt_regs *)bpf_task_pt_regs(task);
	struct walk w = {
	    .sp = PT_REGS_SP(regs),
	    .fp = PT_REGS_FP(regs),
	    .nk = nk,
	    .nu = 1,
	    .slot = slot,
	};
	__u64 sp = w.sp;
	__u32 len;
	bool snap = snapshot && snapshot_bytes, cfi_done = false;

	if (nk >= MAX_STACK_DEPTH)
		return 0;
	c->ev.ips[nk] = PT_REGS_IP(regs);
	/*
	 * A frame-pointer walk alone, in code without frame pointers, ends
	 * before its first frame: then the stack is not read.  That read, of the
	 * rest of the stack's first page, was half the cost of such a sample
	 * (README, Benchmarks, fg-sample --call-graph cfi).
	 */
	if (!snap && !cfi_unwind && !entry && fp_walk_ends(&w)) {
		c->copied = 0;
		c->ended = 0;
		c->ev.flags |= w.flags;
		goto done;
	}
	len = PAGE - (w.sp & (PAGE - 1));
	if (bpf_probe_read_user(c->data, len, (void *)w.sp) < 0) {
		if (snap)
			snapshot_begin(c, regs, sp); /* the registers alone */
		c->ev.flags |= FG_SAMPLE_F_USTACK_FAILED;
		count(FG_STAT_USTACK_FAILED, 1);
		return 1;
	}
	c->copied = len;
	c->ended = 0;
	/* --call-graph cfi: unwound here; a snapshot only to fall back (or to check) */
	if (cfi_unwind &&
	    cfi_walk(regs, c, &w, c->ev.pid, snapshot ? CFI_STATE_SAMPLE : CFI_STATE_OFFCPU))
		cfi_done = true;
	/* the registers copied only for a snapshot that goes out, not for every cfi walk */
	if (snap && (!cfi_done || cfi_check))
		snapshot_begin(c, regs, sp);
	/*
	 * On a function's first instruction (a uprobe on its entry) the return
	 * address into the caller is at the stack pointer, and the frame
	 * pointer is still the caller's: without this the caller would be
	 * missing from the stack (perf's walk misses it too).  (The CFI walk
	 * knows it from the function's CFI.)
	 */
	if (!cfi_done && entry && user_depth > 1 && nk + 1 < 2 * MAX_STACK_DEPTH) {
		c->ev.ips[(nk + 1) & 255] = *(__u64 *)c->data;
		w.nu = 2;
	}
	if (snapshot_bytes && (c->ev.flags & FG_SAMPLE_F_USTACK_SNAPSHOT)) {
		__u32 size;

		/* the rest of the snapshot, page by page, before the walk uses it */
		bpf_loop(FG_USTACK_SNAPSHOT_MAX / PAGE + 1, snapshot_step, &w, 0);
		size = c->copied < snapshot_bytes ? c->copied : snapshot_bytes;
		c->snap.size = size & ~7u; /* the IPs follow, 8-aligned */
	}
	if (cfi_done)
		goto done;
	/* frames, plus a page read now and then */
	bpf_loop(MAX_STACK_DEPTH + FG_USTACK_COPY_MAX / PAGE + 1, walk_step, &w, 0);
	c->ev.flags |= w.flags;
done:
	count(FG_STAT_USTACK_BYTES, c->copied);
	if (w.flags & FG_SAMPLE_F_USTACK_CUT)
		count(FG_STAT_USTACK_CUT, 1);
	if (w.flags & FG_SAMPLE_F_USTACK_NOFP)
		count(FG_STAT_USTACK_NOFP, 1);
	return w.nu;
}

/*
 * --- Python stacks ---
 *
 * pid -> struct fg_py_proc, for the processes fg-sample found a CPython in
 * (lib/python); fg-sample sizes it.  A sample of one of them carries its
 * thread's Python frames after its user IPs: the code objects, innermost
 * first, FG_PY_ENTRY on the outermost frame of each C call of the eval loop.
 * Filled by fg-sample alone, so not preallocated (as cfi_procs): its 4,096
 * entries are not made at each start for the few Python processes there are.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct fg_py_proc);
} py_procs SEC(".maps");

/* (the walk reads the thread pointer: x86-64's fs_base; other architectures take none yet) */
#ifdef __TARGET_ARCH_x86
struct py_walk {
	struct fg_py_proc p;
	__u64 frame; /* the next frame to read */
	__u64 win;   /* the address of pywin's first byte */
	__u64 end;   /* and of the byte after the last one read */
	__u32 slot;  /* the key of the walk's ustack_copy */
	__u32 at;    /* the index of the first Python frame in ips[] */
	__u32 n;     /* Python frames found */
	__u32 flags; /* FG_PYSTACK_F_* */
};

/*
 * A frame's instruction (f_lasti, or prev_instr/instr_ptr in its code
 * object's bytecode), as the event carries it in the frame's bits 47 to 62:
 * code units from the start, plus one; 0 when not known or out of range.
 */
static __always_inline __u64 py_instr(const struct py_walk *w, const __u8 *f, __u64 code)
{
	__u64 units = 0;

	if (code > FG_PY_CODE_MASK)
		return 0;
	if (w->p.instr_kind == FG_PY_INSTR_POINTER) {
		__u64 ip = *(const __u64 *)(f + (w->p.frame_instr & 0x78));
		__u64 start = code + (__u64)(__s64)w->p.code_code;

		if (ip >= start && (ip - start) / 2 < FG_PY_INSTR_MASK)
			units = (ip - start) / 2 + 1;
	} else if (w->p.instr_kind != FG_PY_INSTR_NONE) {
		__s32 lasti = *(const __s32 *)(f + (w->p.frame_instr & 0x7c));
		__u64 u = (__u32)lasti;

		if (w->p.instr_kind == FG_PY_INSTR_LASTI_BYTES)
			u >>= 1;
		if (lasti >= 0 && u < FG_PY_INSTR_MASK)
			units = u + 1;
	}
	return units << FG_PY_INSTR_SHIFT;
}

/*
 * The first `size` bytes of the frame at w->frame into c->pywin, read with
 * the bytes below it (3.11 on: PY_WIN), unless the last read had them: their
 * offset there (below PY_WIN - 8), or -1 if they cannot be read.
 */
static __always_inline int py_read(struct py_walk *w, struct ustack_copy *c, __u32 size)
{
	__u64 lo = w->frame, page;
	__u32 len;

	if (lo < w->win || lo + size > w->end) {
		if (w->p.kind != FG_PY_KIND_OBJECTS) {
			page = lo & ~(__u64)(PAGE - 1);
			lo = w->frame + size - PY_WIN > page ? w->frame + size - PY_WIN : page;
			if (lo > w->frame) /* (a frame at the top of the address space) */
				lo = w->frame;
		}
		len = w->frame + size - lo;
		barrier_var(len);
		if (len > PY_WIN || bpf_probe_read_user(c->pywin, len, (void *)lo) < 0)
			return -1;
		w->win = lo;
		w->end = lo + len;
	}
	return w->frame - w->win;
}

/*
 * One Python frame: read it (its first bytes), keep its code object, go to
 * its caller; 1 at the end.  A global function, which the verifier checks
 * once: as the bpf_loop() callback's own body it was checked over and over
 * with each step's state (the windowed read made that 13 ms at each start).
 */
__noinline int py_frame_step(struct py_walk *w)
{
	struct ustack_copy *c;
	__u32 size, idx;
	const __u8 *f;
	__u64 code, prev;
	bool entry;
	int off;

	if (!w || !(c = bpf_map_lookup_elem(&ustack, &w->slot)) || !w->frame)
		return 1;
	size = w->p.frame_read;
	idx = w->at + w->n;
	if (w->n >= FG_PY_DEPTH || idx >= NIPS) {
		w->flags |= FG_PYSTACK_F_CUT;
		return 1;
	}
	barrier_var(size);
	size &= FG_PY_FRAME_READ_MAX - 1;
	if (size < 8 || (off = py_read(w, c, size)) < 0) {
		w->flags |= FG_PYSTACK_F_FAILED;
		return 1;
	}
	f = c->pywin + (off & (PY_WIN - 1));
	/* the offsets are 8-aligned pointers within the first 64 bytes (fg-sample checks) */
	prev = *(__u64 *)(f + (w->p.frame_previous & 0x38));
	code = *(__u64 *)(f + (w->p.frame_code & 0x38));
	if (w->p.kind == FG_PY_KIND_CSTACK &&
	    f[w->p.frame_owner & (FG_PY_FRAME_READ_MAX - 1)] == w->p.owner_cstack) {
		/* the eval loop's own entry frame: the frame before it began the call's run */
		if (w->n)
			c->ev.ips[(idx - 1) & 511] |= FG_PY_ENTRY;
		w->frame = prev;
		return 0;
	}
	if (w->p.kind == FG_PY_KIND_IS_ENTRY)
		entry = f[w->p.frame_is_entry & (FG_PY_FRAME_READ_MAX - 1)] != 0;
	else
		entry = w->p.kind == FG_PY_KIND_OBJECTS;
	barrier_var(idx);
	c->ev.ips[idx & 511] =
	    (code & ~FG_PY_ENTRY) | py_instr(w, f, code) | (entry ? FG_PY_ENTRY : 0);
	w->n++;
	w->frame = prev;
	return 0;
}

static long py_step(__u32 i, void *arg)
{
	return py_frame_step(arg) != 0; /* (the verifier wants 0 or 1 of a callback) */
}

#endif

/*
 * The Python frames of the current thread, if its process is in py_procs,
 * into c->ev.ips[at..]: how many.  Its PyThreadState is its slot of
 * _PyRuntime's autoTSSkey, as pthread_getspecific() finds it from the
 * thread's struct pthread, which the thread pointer (fs_base) points to.
 * A global function, which the verifier checks once on its own: inlined,
 * it checked the sample's output after it on every path through the walk
 * (36,886 instructions for the program, 26,284 now).
 */
__noinline int walk_python(__u32 at, __u32 slot, __u32 pid)
{
#ifdef __TARGET_ARCH_x86
	struct fg_py_proc *p = bpf_map_lookup_elem(&py_procs, &pid);
	struct ustack_copy *c = bpf_map_lookup_elem(&ustack, &slot);
	struct py_walk w = {.slot = slot, .at = at};
	__u64 base, tstate = 0, frame = 0;
	__u32 tss[2]; /* Py_tss_t: _is_initialized, _key */

	if (!p || !c)
		return 0;
	base = bpf_get_current_task_btf()->thread.fsbase;
	w.p = *p;
	if (bpf_probe_read_user(tss, sizeof(tss), (void *)w.p.tss_key) < 0) {
		count(FG_STAT_PY_FAILED, 1);
		return 0;
	}
	/* the key's slot: specific_1stblock[key], {seq, data}; keys past 32 are not followed */
	if (!tss[0] || tss[1] >= 32 ||
	    bpf_probe_read_user(&tstate, sizeof(tstate),
				(void *)(base + w.p.pthread_specific_off + 16 * tss[1] + 8)) < 0 ||
	    !tstate) {
		count(FG_STAT_PY_NO_THREAD, 1);
		return 0;
	}
	if (bpf_probe_read_user(&frame, sizeof(frame), (void *)(tstate + w.p.tstate_frame)) < 0 ||
	    (w.p.cframe_current_frame >= 0 && frame &&
	     bpf_probe_read_user(&frame, sizeof(frame),
				 (void *)(frame + w.p.cframe_current_frame)) < 0)) {
		count(FG_STAT_PY_FAILED, 1);
		return 0;
	}
	if (!frame) {
		count(FG_STAT_PY_NO_THREAD, 1);
		return 0;
	}
	w.frame = frame;
	/* the shims of the C stack are not counted in the depth: twice the steps */
	bpf_loop(2 * FG_PY_DEPTH, py_step, &w, 0);
	if (w.frame && w.n >= FG_PY_DEPTH)
		w.flags |= FG_PYSTACK_F_CUT;
	if (w.n) {
		/* the outermost frame began the outermost run */
		__u32 last = at + w.n - 1;

		barrier_var(last);
		c->ev.ips[last & 511] |= FG_PY_ENTRY;
		count(FG_STAT_PY_STACKS, 1);
		count(FG_STAT_PY_FRAMES, w.n);
	}
	if (w.flags & FG_PYSTACK_F_CUT)
		count(FG_STAT_PY_CUT, 1);
	if (w.flags & FG_PYSTACK_F_FAILED)
		count(FG_STAT_PY_FAILED, 1);
	c->ev.py_flags = w.flags;
	if (w.n || w.flags)
		c->ev.flags |= FG_SAMPLE_F_PYSTACK;
	return w.n;
#else
	return 0;
#endif
}

/*
 * Send a sample with a snapshot: the fixed part of the event, the registers
 * and the stack bytes, then the IPs, moved to follow the stack bytes.
 */
static __always_inline long output_snapshot(void *ring, struct ustack_copy *c, __u32 nips)
{
	__u32 size = c->snap.size;
	__u64 ips_len, len;

	/* both are in bounds already; pinned and masked, so that the verifier sees it */
	barrier_var(nips);
	barrier_var(size);
	size &= 0xfff8;
	ips_len = (nips & 511) * sizeof(__u64);
	if (size > FG_USTACK_SNAPSHOT_MAX || ips_len > 8 * NIPS)
		return -1;
	__builtin_memcpy(c->head, &c->ev, sizeof(c->head));
	if (ips_len && bpf_probe_read_kernel(c->data + size, ips_len, c->ev.ips) < 0)
		return -1;
	len = sizeof(c->head) + sizeof(c->snap) + size + ips_len;
	/* (a fallback that asks for its process' mappings wakes fg-sample: cfi_walk()) */
	return bpf_ringbuf_output(ring, c->head, len,
				  c->ev.flags & FG_SAMPLE_F_CFI_ASK ? BPF_RB_FORCE_WAKEUP
								    : BPF_RB_NO_WAKEUP);
}

/*
 * Take one sample of the current task for event `cookie` (its number, and
 * FG_COOKIE_ENTRY for a uprobe on a function's entry).  `user_mode`: the
 * task is in user mode (no kernel stack).  `each`: the program runs on every
 * event on every CPU (tracepoints, uprobes), so -c and -C are applied here;
 * perf applies them to its own events.  `tracepoint`, `perf`: ctx is a
 * tracepoint's buffer, a perf event's data, whose kernel stack may be
 * unwound here (korc_unwind.h).
 */
static __always_inline int take_sample(void *ctx, __u64 cookie, bool user_mode, bool each,
				       bool tracepoint, bool perf)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 pid = task->tgid, tid = task->pid, cpu = bpf_get_smp_processor_id();
	__u32 event = cookie & FG_COOKIE_EVENT_MASK;
	struct ustack_copy *c;
	struct fg_event *e;
	void *ring;
	__u32 nk = 0, nu = 0, npy = 0;
	__u64 size;
	long err;

	if (each && cpu_filter) {
		__u32 *on = bpf_map_lookup_elem(&cpus, &cpu);

		if (!on || !*on) {
			count(FG_STAT_FILTERED, 1);
			return 0;
		}
	}
	if (tid == 0 ? !include_idle : filter && !is_target(task, pid, tid)) {
		count(FG_STAT_FILTERED, 1);
		return 0;
	}
	if (each && count_period > 1) {
		__u64 *n = bpf_map_lookup_elem(&evcount, &event);

		if (n && ++*n < count_period)
			return 0;
		if (n)
			*n = 0;
	}
	c = bpf_map_lookup_elem(&ustack, &cpu);
	if (!c)
		return 0;
	if (__sync_fetch_and_add(&c->busy, 1) != 0) {
		__sync_fetch_and_add(&c->busy, -1);
		count(FG_STAT_BUSY, 1);
		return 0;
	}
	e = &c->ev;
	e->time_ns = bpf_ktime_get_ns();
	e->weight = 1;
	e->cpu = cpu;
	e->pid = pid;
	e->tid = tid;
	e->flags = event << FG_SAMPLE_EVENT_SHIFT;
	e->nr_py = 0;
	e->py_flags = 0;
	if (user_mode)
		e->flags |= FG_SAMPLE_F_USER_MODE;
	task_comm(e->comm, task);
	if (kernel_stacks && !user_mode) {
		long n = -1;

		/* unwound here, unless the walk gives up (korc_unwind.h) */
		if ((tracepoint || (perf && korc_perf)) && korc_unwind && korc_ready) {
			n = korc_kernel_stack(ctx, c, cpu);
			if (n >= 0 && korc_check)
				n = korc_compare(ctx, c, n);
		}
		if (n < 0) {
			n = bpf_get_stack(ctx, e->ips, kernel_depth * sizeof(__u64), 0);
			if (n > 0)
				n /= sizeof(__u64);
		}
		if (n < 0) {
			e->flags |= FG_SAMPLE_F_KSTACK_FAILED;
			count(FG_STAT_KSTACK_FAILED, 1);
		} else {
			nk = (__u32)n;
			if (nk >= kernel_depth)
				e->flags |= FG_SAMPLE_F_KSTACK_CUT;
		}
	}
	if (!current_user_task())
		e->flags |= FG_SAMPLE_F_KERNEL_THREAD;
	else if (user_stacks)
		nu = walk_user(ctx, user_mode && each, task, c, nk, cpu, true,
			       cookie & FG_COOKIE_ENTRY);
	if (python && user_stacks && current_user_task())
		npy = walk_python(nk + nu, cpu, pid);
	if (npy > FG_PY_DEPTH)
		npy = 0; /* (cannot be: for the verifier, which checks walk_python() on its own) */
	e->nr_kernel = nk;
	e->nr_user = nu;
	e->nr_py = npy;
	ring = bpf_map_lookup_elem(&events, &cpu);
	if (!ring) {
		err = -1; /* a CPU not sampled (-C): cannot happen, counted as lost */
	} else if (e->flags & FG_SAMPLE_F_USTACK_SNAPSHOT) {
		err = output_snapshot(ring, c, nk + nu + npy);
		if (!err) {
			count(FG_STAT_SNAPSHOTS, 1);
			count(FG_STAT_SNAPSHOT_BYTES, c->snap.size);
			/* shorter than asked: the copy reached a page it could not read */
			if (c->snap.size && c->snap.size < snapshot_bytes)
				count(FG_STAT_SNAPSHOT_WHOLE, 1);
		}
	} else {
		size = offsetof(struct fg_event, ips) + ((__u64)nk + nu + npy) * sizeof(__u64);
		if (size > sizeof(*e))
			size = sizeof(*e);
		err = bpf_ringbuf_output(ring, e, size, BPF_RB_NO_WAKEUP);
	}
	__sync_fetch_and_add(&c->busy, -1);
	if (err < 0) {
		count(FG_STAT_RINGBUF_FULL, 1);
		return 0;
	}
	count(FG_STAT_SAMPLES, 1);
	return 0;
}

/* --- off-CPU time (--off-cpu): where threads wait --- */

/* set by fg-sample between open and load */
const volatile __u64 min_block_ns = 1000;   /* --min-block */
const volatile __u64 max_block_ns = ~0ull;  /* --max-block */
const volatile bool kernel_threads = false; /* --kernel-threads: their waits too */
const volatile __u32 wait_slots = 0;	    /* the waits' ustack slots follow the CPUs' */

/*
 * The waits: each thread off the CPU keeps its stacks as it left, and
 * time_ns when it did, in storage of its own (task storage: no table to fill,
 * no key, no lock).  Made at the first switch that takes the thread off a
 * CPU, kept until it exits or the map goes; time_ns is 0 while the thread
 * runs.  Only the IPs taken are copied in, not the whole event.  The idle
 * tasks (thread id 0), which fg-sample's iterator of tasks does not reach,
 * keep theirs in an array by CPU instead.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct fg_event);
} waits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1); /* fg-sample sets it: the possible CPUs */
	__type(key, __u32);
	__type(value, struct fg_event);
} idle_waits SEC(".maps");

/* the wait kept for thread `tid`, task `p`, on `cpu`; made when `create` */
static __always_inline struct fg_event *wait_of(struct task_struct *p, __u32 tid, __u32 cpu,
						bool create)
{
	if (!tid)
		return bpf_map_lookup_elem(&idle_waits, &cpu);
	return bpf_task_storage_get(&waits, p, NULL, create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);
}

/* The waits that ended go out through a ring buffer of their own: fg-sample sizes it. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} wait_events SEC(".maps");

/* the kernel's task states (include/linux/sched.h), as sched_switch reports prev_state */
#define TASK_REPORT 0x7f /* interruptible ... parked */
#define TASK_DEAD 0x80
#define TASK_IDLE 0x402 /* uninterruptible, no load */
#define TASK_RTLOCK_WAIT 0x1000

/*
 * A wait's kernel stack starts at __schedule, which took the thread off the
 * CPU: the frames above it are this program's and the tracepoint's
 * (bpf_prog_*, bpf_trace_run4), and the program is gone by the time fg-sym
 * would name its frame.  Which frame __schedule is, is found at the first
 * switch: the same call chain leads here every time.  Its address comes
 * from the kallsyms fg-sample reads for the ORC tables (not through a
 * __ksym, for which libbpf would read and scan all of kallsyms a second
 * time at every start); 0 (hidden, or not found): nothing is left out.
 */
const volatile __u64 schedule_addr = 0;
#define KSKIP_SEARCH 4	   /* frames looked at for __schedule's */
#define SCHEDULE_SIZE 8192 /* return addresses within this of its start are in it */
__u32 kskip;
bool kskip_known;

static __always_inline __u32 kernel_skip(void *ctx)
{
	__u64 lo = schedule_addr, top[KSKIP_SEARCH];
	long n;

	if (kskip_known || !lo)
		return kskip;
	n = bpf_get_stack(ctx, top, sizeof(top), 0);
	for (int i = 0; i < KSKIP_SEARCH && i < n / 8; i++) {
		if (top[i] >= lo && top[i] - lo < SCHEDULE_SIZE) {
			kskip = i;
			break;
		}
	}
	kskip_known = true;
	return kskip;
}

/* FG_STATE_*: the kernel's task_state_index() of how a thread left the CPU */
static __always_inline __u32 wait_state(bool preempt, __u32 state, struct task_struct *p)
{
	__u32 st, i;

	if (preempt)
		return FG_STATE_PREEMPTED;
	if ((state & TASK_IDLE) == TASK_IDLE)
		return FG_STATE_IDLE;
	if (state & TASK_RTLOCK_WAIT)
		return FG_STATE_UNINTERRUPTIBLE;
	st = (state | (__u32)p->exit_state) & TASK_REPORT;
	/* the highest bit set, counted from 1: S 1, D 2, T 3, t 4, X 5, Z 6, P 7 */
	for (i = 0; st; i++)
		st >>= 1;
	return i;
}

/*
 * Whether the waits of `p` are recorded: the idle task, kernel threads, -p,
 * -t, a command.  sched_switch's tasks are pointers the verifier trusts (BTF):
 * their fields are read directly here, not with a helper call each
 * (BPF_CORE_READ).
 */
static __always_inline bool followed(struct task_struct *p)
{
	__u32 pid = p->tgid, tid = p->pid;

	if (tid == 0 ? !include_idle : (p->flags & PF_KTHREAD) && !kernel_threads)
		return false;
	return !filter || is_target(p, pid, tid);
}

/* `next` runs again: its wait, if one was kept, goes out weighing its time */
static __always_inline void wait_end(struct task_struct *next, __u64 now, __u32 cpu)
{
	struct fg_event *e = wait_of(next, next->pid, cpu, false);
	__u64 delta, size;

	if (!e || !e->time_ns) {
		/* a thread followed whose wait began before the run, or was not seen to begin */
		if (followed(next))
			count(FG_STAT_WAITS_NO_START, 1);
		return;
	}
	delta = now - e->time_ns;
	if (delta < min_block_ns) {
		count(FG_STAT_WAITS_SHORT, 1);
	} else if (delta > max_block_ns) {
		count(FG_STAT_WAITS_LONG, 1);
	} else {
		e->time_ns = now;
		e->weight = delta;
		size = offsetof(struct fg_event, ips) +
		       ((__u64)e->nr_kernel + e->nr_user) * sizeof(__u64);
		if (size > sizeof(*e))
			size = sizeof(*e);
		/* wake fg-sample when the ring is half full, rather than wait for its next read */
		if (bpf_ringbuf_output(&wait_events, e, size,
				       bpf_ringbuf_query(&wait_events, BPF_RB_AVAIL_DATA) >
					       bpf_ringbuf_query(&wait_events, BPF_RB_RING_SIZE) / 2
					   ? BPF_RB_FORCE_WAKEUP
					   : BPF_RB_NO_WAKEUP) < 0)
			count(FG_STAT_WAITS_RINGBUF_FULL, 1);
		else
			count(FG_STAT_WAITS, 1);
	}
	e->time_ns = 0;
}

/* `prev` leaves the CPU: unless it is left out, its stacks go into its storage */
static __always_inline void wait_begin(void *ctx, struct task_struct *prev, bool preempt,
				       __u32 state, __u64 now, __u32 cpu)
{
	__u32 pid = prev->tgid, tid = prev->pid;
	__u32 slot = wait_slots + cpu, nk = 0, nu = 0, n;
	bool kthread = prev->flags & PF_KTHREAD;
	struct ustack_copy *c;
	struct fg_event *e, *w;

	if (state & TASK_DEAD)
		return; /* exiting: it never runs again */
	if (cpu_filter) {
		/* -C: only the waits that begin on these CPUs */
		__u32 *on = bpf_map_lookup_elem(&cpus, &cpu);

		if (!on || !*on)
			return;
	}
	if (!followed(prev))
		return;
	w = wait_of(prev, tid, cpu, true);
	if (!w) {
		/* no memory for it, or the storage was busy on this CPU */
		count(FG_STAT_WAITS_UNSEEN, 1);
		return;
	}
	/*
	 * A wait still kept: the switch that ended it was not reported (both
	 * this program and others miss one now and then).  When it ended is
	 * not known: it is counted, and replaced by this one.
	 */
	if (w->time_ns)
		count(FG_STAT_WAITS_NO_END, 1);
	w->time_ns = 0; /* until the whole wait is in */
	c = bpf_map_lookup_elem(&ustack, &slot);
	if (!c)
		return;
	e = &c->ev;
	e->time_ns = now;
	e->weight = 0;
	e->cpu = cpu;
	e->pid = pid;
	e->tid = tid;
	e->nr_py = 0;
	e->py_flags = 0;
	e->flags = FG_SAMPLE_F_OFFCPU | FG_SAMPLE_F_WEIGHT_NS |
		   wait_state(preempt, state, prev) << FG_SAMPLE_STATE_SHIFT;
	/* prev is the task running this program: its comm, its kernel stack, its user memory */
	task_comm(e->comm, prev);
	if (kernel_stacks) {
		long r = bpf_get_stack(ctx, e->ips, kernel_depth * sizeof(__u64),
				       kernel_skip(ctx) & BPF_F_SKIP_FIELD_MASK);

		if (r < 0) {
			e->flags |= FG_SAMPLE_F_KSTACK_FAILED;
		} else {
			nk = (__u32)r / sizeof(__u64);
			if (nk >= kernel_depth)
				e->flags |= FG_SAMPLE_F_KSTACK_CUT;
		}
	}
	if (kthread || !prev->mm)
		e->flags |= FG_SAMPLE_F_KERNEL_THREAD;
	else if (user_stacks)
		nu = walk_user(ctx, false, prev, c, nk, slot, false, false);
	e->nr_kernel = nk;
	e->nr_user = nu;
	/* into the thread's storage: the fixed part, and only the IPs taken */
	n = nk + nu;
	barrier_var(n);
	if (n > 2 * MAX_STACK_DEPTH)
		n = 2 * MAX_STACK_DEPTH;
	if (n && bpf_probe_read_kernel(w->ips, n * sizeof(__u64), e->ips) < 0)
		return;
	__builtin_memcpy(w, e, offsetof(struct fg_event, ips));
}

SEC("tp_btf/sched_switch")
int BPF_PROG(fg_offcpu, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	__u32 cpu = bpf_get_smp_processor_id();

	wait_end(next, now, cpu);
	wait_begin(ctx, prev, preempt, prev_state, now, cpu);
	return 0;
}

/*
 * The waits still going on when the run ends, for fg-sample: each thread's,
 * a whole struct fg_event (the idle tasks' are in idle_waits).
 */
SEC("iter/task")
int fg_open_waits(struct bpf_iter__task *ctx)
{
	struct task_struct *task = ctx->task;
	struct fg_event *e;

	if (!task)
		return 0;
	e = bpf_task_storage_get(&waits, task, NULL, 0);
	if (e && e->time_ns)
		bpf_seq_write(ctx->meta->seq, e, sizeof(*e));
	return 0;
}

/* a perf event: a clock's tick (cpu-clock, the default) or another software event */
SEC("perf_event")
int fg_sample(struct bpf_perf_event_data *ctx)
{
	bool user_mode = false;

#ifdef __TARGET_ARCH_x86
	/* the context is read in whole words: cs shares its word with FRED's bits */
	user_mode = (*(__u64 *)((void *)&ctx->regs + offsetof(struct pt_regs, cs)) & 3) == 3;
#endif
	return take_sample(ctx, bpf_get_attach_cookie(ctx), user_mode, false, false, true);
}

/* a tracepoint (tracepoint:CATEGORY:NAME): always in the kernel */
SEC("tracepoint")
int fg_tracepoint(void *ctx)
{
	return take_sample(ctx, bpf_get_attach_cookie(ctx), false, true, true, false);
}

/* a uprobe or uretprobe: in user mode, at the probed instruction or return */
SEC("uprobe")
int fg_uprobe(struct pt_regs *ctx)
{
	return take_sample(ctx, bpf_get_attach_cookie(ctx), true, true, false, false);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
