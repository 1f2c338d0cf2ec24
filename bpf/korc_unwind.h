// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The kernel stack of a tracepoint's event, unwound here with the kernel's
 * ORC tables rather than by bpf_get_stack(), which costs more than all the
 * rest of a sample: the kernel's unwinder behind it starts inside the
 * helper and walks up to the tracepoint's frame before it keeps any.  The
 * step is fg/korc_step.h's, the very rules of the kernel's unwinder, shared
 * with user space (lib/korc.c, tests/unit/test_korc.c).  fg-sample copies
 * the tables from the kernel's read-only data with fg_korc_copy (run through
 * BPF_PROG_TEST_RUN: there is no /proc/kcore to read them from), builds
 * them into korc_table, korc_rules and korc_lookup (fg/korc.h) and sets the globals
 * below (korc_ready once the tables are in) before the programs are attached.
 *
 * What the step does not follow (an address outside vmlinux's text, a
 * word it cannot read, ...) makes the event fall back to bpf_get_stack(),
 * counted (FG_STAT_KORC_FB_*).  With korc_check every stack unwound here is
 * also taken by bpf_get_stack() and compared (FG_STAT_KORC_CHECKED,
 * FG_STAT_KORC_DIFFER); the sample then carries the kernel's.  Included by
 * fg_sample.bpf.c once struct ustack_copy and count() are defined.
 */
const volatile bool korc_unwind = false; /* --kernel-unwind orc (or check) */
const volatile bool korc_check = false;	 /* --kernel-unwind check */
const volatile bool korc_perf =
    false; /* and the perf events' kernel stacks (not only tracepoints') */
const volatile __u64 korc_text_start = 0, korc_text_end = 0;
const volatile __u64 korc_graph_ret = 0, korc_rethook = 0;
const volatile __u32 korc_nr = 0, korc_nblocks = 0;

/* the tables, filled through mmap; fg-sample sets their sizes */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct fg_korc_entry);
} korc_table SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, FG_KORC_MAX_RULES);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct fg_korc_rule);
} korc_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, __u32);
} korc_lookup SEC(".maps");

/* fg_korc_copy's: FG_KORC_CHUNK bytes at most a run, from korc_src */
struct korc_chunk {
	__u8 b[FG_KORC_CHUNK];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE); /* read by fg-sample where it is */
	__type(key, __u32);
	__type(value, struct korc_chunk);
} korc_chunk SEC(".maps");

__u64 korc_src;
__u32 korc_len;
__s32 korc_err;
bool korc_ready; /* set once the tables are in */

/*
 * Copy korc_len bytes of the kernel at korc_src into korc_chunk (korc_err:
 * the helper's result).  fg-sample runs it through BPF_PROG_TEST_RUN, chunk
 * by chunk, to read the kernel's ORC tables; it is never attached.
 */
SEC("raw_tp")
int fg_korc_copy(void *ctx)
{
	__u32 zero = 0, len = korc_len;
	struct korc_chunk *c = bpf_map_lookup_elem(&korc_chunk, &zero);

	if (!c || len > FG_KORC_CHUNK) {
		korc_err = -7; /* E2BIG */
		return 0;
	}
	korc_err = bpf_probe_read_kernel(c->b, len, (void *)korc_src);
	return 0;
}

static __always_inline int korc_read(void *ctx, __u64 addr, __u64 *val)
{
	return bpf_probe_read_kernel(val, sizeof(*val), (void *)addr) ? -1 : 0;
}

static __always_inline const struct fg_korc_entry *korc_entry(__u32 i)
{
	return bpf_map_lookup_elem(&korc_table, &i);
}

static __always_inline const struct fg_korc_rule *korc_rule(__u32 i)
{
	return bpf_map_lookup_elem(&korc_rules, &i);
}

static __always_inline int korc_block(__u32 i, __u32 *val)
{
	__u32 *v = bpf_map_lookup_elem(&korc_lookup, &i);

	if (!v)
		return -1;
	*val = *v;
	return 0;
}

#define FG_KORC_CTX void
#define FG_KORC_READ(ctx, addr, val) korc_read((ctx), (addr), (val))
#define FG_KORC_ENTRY(ctx, i) korc_entry((i))
#define FG_KORC_RULE(ctx, i) korc_rule((i))
#define FG_KORC_BLOCK(ctx, i, val) korc_block((i), (val))
#define FG_KORC_INLINE static __always_inline
/* the search in a function of its own, which the verifier checks once, not at each call */
__noinline int korc_find(__u32 off);
#define FG_KORC_FIND(ctx, t, off) korc_find((off))
#include "fg/korc_step.h"

__noinline int korc_find(__u32 off)
{
	struct fg_korc_info t = {.nr = korc_nr, .nblocks = korc_nblocks};

	return (int)fg_korc_find(NULL, &t, off);
}

/* the tables' bounds and the addresses a tracer may put in place of return addresses */
#define KORC_INFO                                                                                  \
	{                                                                                          \
		.text_start = korc_text_start, .text_end = korc_text_end, .nr = korc_nr,           \
		.nblocks = korc_nblocks, .graph_ret = korc_graph_ret, .rethook = korc_rethook      \
	}

/*
 * One frame: its caller's, into the sample's IPs.  The walk's state is in
 * the slot (struct ustack_copy), not on the BPF stack: the verifier then
 * knows nothing of its values, and checks the callback once rather than for
 * each frame.
 */
static long korc_walk_step(__u32 i, void *arg)
{
	struct fg_korc_info t = KORC_INFO;
	struct ustack_copy *c = bpf_map_lookup_elem(&ustack, arg);
	__u32 n;

	if (!c)
		return 1;
	n = c->korc_n;
	if (n >= kernel_depth || n >= MAX_STACK_DEPTH)
		return 1;
	c->korc_result = fg_korc_step(NULL, &t, &c->korc);
	if (c->korc_result != FG_KORC_NEXT)
		return 1;
	c->ev.ips[n & 127] = c->korc.ip;
	c->korc_n = n + 1;
	return 0;
}

/*
 * The kernel stack of the event, into c->ev.ips: how many frames, or -1
 * when the walk gave up (counted; the caller then takes it with
 * bpf_get_stack()).  The registers the walk starts from are at the pointer
 * in the first 8 bytes of the context, which the verifier does not let the
 * program load itself: a tracepoint's buffer, where perf stores those it
 * made up for the event; a perf event's struct bpf_perf_event_data_kern,
 * whose first field points to the registers of the sample (an interrupt's,
 * or made up as a tracepoint's are, for context switches).
 */
static __always_inline long korc_kernel_stack(void *ctx, struct ustack_copy *c, __u32 slot)
{
	struct fg_korc_info t = KORC_INFO;
	__u64 regs_at, regs[4], bp; /* ip, cs, flags, sp */
	int r;

	if (bpf_probe_read_kernel(&regs_at, sizeof(regs_at), ctx) ||
	    bpf_probe_read_kernel(regs, sizeof(regs), (void *)(regs_at + FG_PTREGS_IP)) ||
	    bpf_probe_read_kernel(&bp, sizeof(bp), (void *)(regs_at + FG_PTREGS_BP))) {
		r = FG_KORC_FB_OTHER;
		goto fallback;
	}
	if (regs[2] & FG_EFLAGS_FIXED)
		r = fg_korc_start_regs(NULL, &t, regs_at, regs[0], regs[3], bp, &c->korc);
	else
		r = fg_korc_start(NULL, &t, regs[0], regs[3], regs[2], &c->korc);
	if (r != FG_KORC_NEXT)
		goto fallback;
	c->ev.ips[0] = regs[0];
	c->korc_n = 1;
	c->korc_result = r;
	bpf_loop(MAX_STACK_DEPTH, korc_walk_step, &slot, 0);
	r = c->korc_result;
	if (r == FG_KORC_NEXT || r == FG_KORC_DONE) {
		count(FG_STAT_KORC_WALKS, 1);
		return c->korc_n;
	}
fallback:
	count(r == FG_KORC_FB_TEXT ? FG_STAT_KORC_FB_TEXT : FG_STAT_KORC_FB_OTHER, 1);
	return -1;
}

/*
 * --kernel-unwind check: the n frames found here against bpf_get_stack()'s,
 * taken into the scratch copy of the user stack (not yet in use); the
 * sample gets the kernel's.
 */
static __always_inline long korc_compare(void *ctx, struct ustack_copy *c, long n)
{
	__u64 *theirs = (__u64 *)c->data;
	long m = bpf_get_stack(ctx, theirs, kernel_depth * sizeof(__u64), 0);
	bool differ;

	if (m < 0)
		return m;
	m /= sizeof(__u64);
	differ = m != n;
	for (int i = 0; i < MAX_STACK_DEPTH && !differ; i++) {
		if (i >= n)
			break;
		differ = c->ev.ips[i] != theirs[i];
	}
	count(FG_STAT_KORC_CHECKED, 1);
	if (differ) {
		count(FG_STAT_KORC_DIFFER, 1);
		barrier_var(m);
		if (m > MAX_STACK_DEPTH)
			m = MAX_STACK_DEPTH;
		if (m > 0 && bpf_probe_read_kernel(c->ev.ips, m * sizeof(__u64), theirs) < 0)
			return -1;
	}
	return m;
}
