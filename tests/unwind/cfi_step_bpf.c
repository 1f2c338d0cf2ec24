// SPDX-License-Identifier: BSD-2-Clause
/*
 * include/fg/cfi_step.h compiled for BPF, as the `cfi` call-graph mode will
 * use it: a table's rows in a map value, its rules in an array map, the
 * stack read with bpf_probe_read_user, a walk of DEPTH frames.  The row is
 * found with bpf_loop(), one halving a call, and each frame is a bpf_loop()
 * call too: a search loop inside an unrolled walk makes the verifier explore
 * every path of both (over a million instructions at 16 frames), while one
 * step verifies at once.  tests/cfi.bats compiles it
 * with clang -target bpf and, as root, has the kernel's verifier load it.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct fg_bpf_mem {
	int unused;
};
#define FG_CFI_CTX struct fg_bpf_mem
#define FG_CFI_READ(ctx, addr, val)                                                                \
	(bpf_probe_read_user((val), 8, (const void *)(unsigned long)(addr))                        \
	     ? FG_CFI_END_UNREADABLE                                                               \
	     : 0)
#define FG_CFI_INLINE static __always_inline
#include "fg/cfi_step.h"

#define NROWS 4096
#define NRULES 256
#define DEPTH 64

/* one table: its rows in one map value, searched by the header's fg_cfi_find_row */
struct table {
	struct fg_cfi_row rows[NROWS];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct table);
} tables SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, NRULES);
	__type(key, __u32);
	__type(value, struct fg_cfi_rule);
} rules SEC(".maps");

__u64 pcs[DEPTH];

/* one halving of the search, as a bpf_loop() callback: the verifier checks it once */
struct search {
	const struct table *t;
	__u32 lo, hi, pc;
};

static long halve(__u32 i, void *arg)
{
	struct search *s = arg;
	__u32 mid;

	(void)i;
	if (s->lo >= s->hi)
		return 1;
	mid = s->lo + (s->hi - s->lo) / 2;
	if (mid >= NROWS)
		return 1;
	if (s->t->rows[mid].pc <= s->pc)
		s->lo = mid + 1;
	else
		s->hi = mid;
	return 0;
}

static __always_inline const struct fg_cfi_rule *lookup(const struct table *t, __u32 pc)
{
	struct search s = {t, 0, NROWS, pc};
	__u32 k, i;

	bpf_loop(32, halve, &s, 0);
	if (s.lo == 0 || s.lo > NROWS)
		return 0;
	i = s.lo - 1;
	if (i >= NROWS)
		return 0;
	k = t->rows[i].rule;
	return bpf_map_lookup_elem(&rules, &k);
}

/* the walk's state, shared with walk_step() */
struct walk {
	const struct table *t;
	struct fg_cfi_regs g;
	struct fg_bpf_mem mem;
	__u32 n; /* frames in pcs */
};

/* one frame of the walk, as a bpf_loop() callback: the verifier checks one step once, not
 * DEPTH unrolled copies of it (over a million instructions, refused on 6.18 with clang 14) */
static long walk_step(__u32 i, void *arg)
{
	struct walk *w = arg;
	const struct fg_cfi_rule *r;
	__u32 n;
	int res;

	(void)i;
	r = lookup(w->t, (__u32)w->g.r[FG_CFI_RIP]);
	if (!r)
		return 1;
	n = w->n; /* read once, bounded where it is used */
	if (n >= DEPTH)
		return 1;
	pcs[n] = w->g.r[FG_CFI_RIP];
	w->n = n + 1;
	res = fg_cfi_step(r, &w->g, &w->mem);
	return res != FG_CFI_OK && res != FG_CFI_OK_EXACT;
}

SEC("perf_event")
int walk(void *ctx)
{
	struct walk w = {};
	__u32 zero = 0;

	(void)ctx;
	w.t = bpf_map_lookup_elem(&tables, &zero);
	if (!w.t)
		return 0;
	w.g.valid = FG_CFI_BIT(FG_CFI_RIP) | FG_CFI_BIT(FG_CFI_RSP);
	bpf_loop(DEPTH, walk_step, &w, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
