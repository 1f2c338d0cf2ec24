/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The code of the swap fixtures (tests/unwind/swap.c, swap-dl.c), built
 * twice: with FRAME 0x20 (swap-a) and 0x40 (swap-b).  The two builds are
 * the same bytes at the same offsets but for swap_hot's frame, so that the
 * rows of one are wrong for the other at the very same pcs:
 *
 *	swap_mid(n)	a frame of 0x48 bytes, zeroed, then calls swap_hot(n)
 *	swap_hot(n)	a frame of FRAME bytes, zeroed, spins n times at
 *			swap_hot+SWAP_SPIN with CFA = rsp + FRAME + 8
 *
 * A row of one build applied to the other reads its return address in
 * zeroes (swap-a's rule on swap-b's stack: in swap_hot's frame; swap-b's on
 * swap-a's: in swap_mid's), a return address of 0: the walk ends there, at
 * swap_hot, one frame long, where the snapshot of the same sample has the
 * whole stack.  tests/fg-sample-cfi.bats checks the layout with nm and
 * cfi-dump before it relies on it.
 */
#ifndef FRAME
#error "FRAME: the bytes of swap_hot's frame"
#endif
/* where the loop starts in swap_hot, in both builds */
#define SWAP_SPIN 0x20

	.text
	.p2align 6
	.globl swap_mid
	.type swap_mid, @function
swap_mid:
	.cfi_startproc
	sub $0x48, %rsp
	.cfi_adjust_cfa_offset 0x48
	pxor %xmm0, %xmm0
	movups %xmm0, (%rsp)
	movups %xmm0, 0x10(%rsp)
	movups %xmm0, 0x20(%rsp)
	movups %xmm0, 0x30(%rsp)
	movq %xmm0, 0x40(%rsp)
	call swap_hot
	add $0x48, %rsp
	.cfi_adjust_cfa_offset -0x48
	ret
	.cfi_endproc
	.size swap_mid, .-swap_mid

	.p2align 6
	.type swap_hot, @function
swap_hot:
	.cfi_startproc
	sub $FRAME, %rsp
	.cfi_adjust_cfa_offset FRAME
	pxor %xmm0, %xmm0
	movups %xmm0, (%rsp)
	movups %xmm0, 0x10(%rsp)
#if FRAME > 0x20
	movups %xmm0, 0x20(%rsp)
	movups %xmm0, 0x30(%rsp)
#endif
	/* (nops up to the loop, as many as the other build's stores take) */
	.org swap_hot + SWAP_SPIN, 0x90
1:	dec %rdi
	jnz 1b
	add $FRAME, %rsp
	.cfi_adjust_cfa_offset -FRAME
	ret
	.cfi_endproc
	.size swap_hot, .-swap_hot

	.section .note.GNU-stack, "", @progbits
