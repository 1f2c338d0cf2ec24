// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * fg-sample's kernel-symbol lookup: a BPF_PROG_TYPE_SYSCALL program, run once
 * at start through BPF_PROG_TEST_RUN with a struct fg_ksym_args (fg/bpf_abi.h)
 * as its context, that asks the kernel for the addresses of a few symbols by
 * name.  Reading /proc/kallsyms for them instead makes the kernel format each
 * of its ~200000 lines; this is a binary search in the kernel's table each.
 * The helper refuses (-EPERM) where /proc/kallsyms would show zeros
 * (kernel.kptr_restrict); fg-sample then reads the file, as it does where the
 * kernel lacks the helper or this program type.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "fg/bpf_abi.h"

static __always_inline void lookup(struct fg_ksym_args *a, int i)
{
	char name[FG_KSYM_NAME];
	__u64 addr = 0;

	/* a syscall program's context is read at constant offsets only: hence the unrolled loop */
	__builtin_memcpy(name, a->name[i], sizeof(name));
	name[FG_KSYM_NAME - 1] = 0;
	a->err[i] = bpf_kallsyms_lookup_name(name, sizeof(name), 0, &addr);
	a->addr[i] = addr;
}

SEC("syscall")
int fg_ksym_lookup(struct fg_ksym_args *a)
{
	__u32 n = a->n;

#pragma unroll
	for (int i = 0; i < FG_KSYM_MAX; i++)
		if (i < n)
			lookup(a, i);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
