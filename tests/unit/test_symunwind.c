// SPDX-License-Identifier: BSD-2-Clause
/*
 * lib/symbolize unwinding a stack snapshot: this very process' stack, taken
 * as fg-sample --call-graph dwarf takes one (registers, then the stack from
 * rsp up), named through /proc/self as a live process, with the tables, with
 * libdwfl and not at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "fg/symbolize.h"
#include "unit.h"
#include "../unwind/snap.h"

static uint8_t snap_data[16384];
/*
 * The registers a snapshot needs, in perf_regs order: x86-64's bp, sp, ip (6, 7, 8);
 * arm64's x29, x30, sp, pc (29-32)
 */
#if defined(__aarch64__)
#define SELF_ABI FG_USTACK_ABI_ARM64
#define SELF_NREGS 4
#define SELF_MASK 0x1e0000000ull
#define SELF_SP 2
#define SELF_PC 3
#else
#define SELF_ABI FG_USTACK_ABI_X86_64
#define SELF_NREGS 3
#define SELF_MASK 0x1c0ull
#define SELF_SP 1
#define SELF_PC 2
#endif
static uint64_t snap_regs[SELF_NREGS];

/* The registers here and a copy of the stack from here up. */
__attribute__((noinline)) static size_t snapshot(void)
{
	uint64_t sp;

#if defined(__aarch64__)
	uint64_t pc, fp, lr;

	__asm__ volatile("adr %0, .\n\tmov %1, sp\n\tmov %2, x29\n\tmov %3, x30"
			 : "=r"(pc), "=r"(sp), "=r"(fp), "=r"(lr));
	snap_regs[0] = fp;
	snap_regs[1] = lr;
	snap_regs[2] = sp;
	snap_regs[3] = pc;
#else
	uint64_t ip, bp;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	snap_regs[0] = bp;
	snap_regs[1] = sp;
	snap_regs[2] = ip;
#endif
	return snap_copy(snap_data, sp, sizeof(snap_data));
}

__attribute__((noinline)) static size_t sym_deeper(int n)
{
	size_t r = n ? sym_deeper(n - 1) : snapshot();

	__asm__ volatile("" : "+r"(r));
	return r;
}

/* fg-sym's text of the snapshot written `times` times with `unwinder`, and its statistics */
static char *unwound_times(enum fg_sym_unwinder unwinder, uint32_t abi, size_t size,
			   struct fg_sym_stats *st, int times)
{
	struct fg_sym_opts o = {.kallsyms = "/nonexistent", .unwinder = unwinder};
	struct fg_rec_ustack u = {.abi = abi,
				  .nr_regs = SELF_NREGS,
				  .regs_mask = SELF_MASK,
				  .sp = snap_regs[SELF_SP],
				  .size = (uint32_t)size};
	uint64_t fp_ip = snap_regs[SELF_PC];
	struct fg_sym_sample smp = {
	    .comm = "unit",
	    .pid = (uint32_t)getpid(),
	    .tid = (uint32_t)getpid(),
	    .weight = 1,
	    .uips = &fp_ip,
	    .nuips = 1,
	    .ustack = &u,
	    .ustack_regs = snap_regs,
	    .ustack_data = snap_data,
	};
	struct fg_symbolizer *s = fg_symbolizer_new(&o);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	for (int i = 0; i < times; i++)
		if (fg_symbolizer_write(s, f, &smp) < 0)
			abort();
	fclose(f);
	fg_symbolizer_stats(s, st);
	fg_symbolizer_free(s);
	return text;
}

static char *unwound(enum fg_sym_unwinder unwinder, uint32_t abi, size_t size,
		     struct fg_sym_stats *st)
{
	return unwound_times(unwinder, abi, size, st, 1);
}

TEST(symbolizer_unwinds_this_process)
{
	struct fg_sym_stats st, dst, nst;
	size_t size = sym_deeper(6);
	char *t, *d, *n;

	CHECK(size > 256);
	t = unwound(FG_SYM_UNWIND_TABLE, SELF_ABI, size, &st);
	d = unwound(FG_SYM_UNWIND_LIBDW, SELF_ABI, size, &dst);
	n = unwound(FG_SYM_UNWIND_NONE, SELF_ABI, size, &nst);
	/* snapshot, sym_deeper x 7, this test (unless inlined), main, libc's start, _start */
	CHECK_INT(st.unwind.stacks, 1);
	CHECK_INT(st.unwind.ends[FG_UNWIND_END_STOP], 1);
	CHECK(st.unwind.frames >= 12);
#if defined(__aarch64__)
	/* Debian's arm64 libc.so.6 keeps no symbol of __libc_start_call_main, which calls main */
	CHECK_INT(st.named + 1, st.unwind.frames);
	CHECK_INT(st.unnamed[FG_UNNAMED_NOSYMS], 1);
#else
	CHECK_INT(st.named, st.unwind.frames);
	CHECK_INT(st.unnamed[FG_UNNAMED_NOSYMS], 0);
#endif
	CHECK(strstr(t, " snapshot+"));
	CHECK(strstr(t, " sym_deeper+"));
	CHECK(strstr(t, " main+"));
	CHECK(strstr(t, " _start+"));
	/* the oracle: the same text */
	CHECK_STR(d, t);
	CHECK_INT(dst.unwind.frames, st.unwind.frames);
	/* not unwound: the one frame-pointer frame, said */
	CHECK_INT(nst.unwind_skipped, 1);
	CHECK_INT(nst.unwind.stacks, 0);
	CHECK(strstr(n, " snapshot+"));
	CHECK(!strstr(n, " main+"));
	free(t);
	free(d);
	free(n);
}

TEST(symbolizer_same_stack_again)
{
	struct fg_sym_stats st, st3;
	size_t size = sym_deeper(6);
	char *t, *t3, *three;
	size_t len;

	/* the second and third time, the callers' text comes from the chain cache */
	t = unwound(FG_SYM_UNWIND_TABLE, SELF_ABI, size, &st);
	t3 = unwound_times(FG_SYM_UNWIND_TABLE, SELF_ABI, size, &st3, 3);
	len = strlen(t);
	three = malloc(3 * len + 1);
	CHECK(three != NULL);
	for (int i = 0; i < 3; i++)
		memcpy(three + i * len, t, len + 1);
	CHECK_STR(t3, three);
	CHECK_INT(st3.named, 3 * st.named);
	CHECK_INT(st3.unwind.frames, 3 * st.unwind.frames);
	for (int i = 0; i < FG_UNNAMED_COUNT; i++)
		CHECK_INT(st3.unnamed[i], 3 * st.unnamed[i]);
	CHECK_INT(st3.chains_replaced, 0);
	CHECK_INT(st3.chains_unkept, 0);
	free(t);
	free(t3);
	free(three);
}

TEST(symbolizer_counts_a_snapshot_it_cannot_use)
{
	struct fg_sym_stats st;
	size_t size = sym_deeper(1);
	char *t;

	/* registers of an unknown kind: the frame-pointer frame is written, and counted */
	t = unwound(FG_SYM_UNWIND_TABLE, 99, size, &st);
	CHECK_INT(st.unwind_badregs, 1);
	CHECK_INT(st.unwind.stacks, 0);
	CHECK_INT(st.named, 1);
	CHECK(strstr(t, " snapshot+"));
	free(t);
}

int main(void)
{
	RUN(symbolizer_unwinds_this_process);
	RUN(symbolizer_same_stack_again);
	RUN(symbolizer_counts_a_snapshot_it_cannot_use);
	return unit_done();
}
