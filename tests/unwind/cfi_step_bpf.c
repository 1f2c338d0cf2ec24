// SPDX-License-Identifier: BSD-2-Clause
/*
 * include/fg/cfi_step.h compiled for BPF, as the `cfi` call-graph mode will
 * use it: a table's rows in a map value, its rules in an array map, the
 * stack read with bpf_probe_read_user, a walk of DEPTH frames.  The row is
 * found with bpf_loop(), one halving a call: a search loop inside the walk's
 * loop makes the verifier explore every path of both (over a million
 * instructions at 16 frames), while the step itself verifies at once.  tests/cfi.bats compiles it
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

SEC("perf_event")
int walk(void *ctx)
{
	struct fg_bpf_mem mem = {0};
	struct fg_cfi_regs g = {};
	__u32 zero = 0;
	const struct table *t = bpf_map_lookup_elem(&tables, &zero);
	int i;

	(void)ctx;
	if (!t)
		return 0;
	g.valid = FG_CFI_BIT(FG_CFI_RIP) | FG_CFI_BIT(FG_CFI_RSP);
	for (i = 0; i < DEPTH; i++) {
		const struct fg_cfi_rule *r = lookup(t, (__u32)g.r[FG_CFI_RIP]);

		if (!r)
			break;
		pcs[i] = g.r[FG_CFI_RIP];
		int res = fg_cfi_step(r, &g, &mem);
		if (res != FG_CFI_OK && res != FG_CFI_OK_EXACT)
			break;
	}
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
