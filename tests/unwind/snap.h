/* SPDX-License-Identifier: BSD-2-Clause */
/* The file tests/unwind/snap.c writes and tests/tools/fgr-snap.c reads. */
#ifndef FG_TEST_SNAP_H
#define FG_TEST_SNAP_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#define SNAP_MAGIC "FGSNAP02"
/*
 * The registers, in the kernel's perf_regs order of the machine: x86-64's ax bx
 * cx dx si di bp sp ip (0-8), r8-r15 (16-23); arm64's x0-x30, sp, pc (0-32).
 */
#define SNAP_MAX_REGS 33
#if defined(__aarch64__)
#define SNAP_ABI 2 /* FG_USTACK_ABI_ARM64 */
#define SNAP_NREGS 33
#define SNAP_REGS_MASK 0x1ffffffffull
#define SNAP_SP_AT 31
#define SNAP_PC_AT 32
#else
#define SNAP_ABI 1 /* FG_USTACK_ABI_X86_64 */
#define SNAP_NREGS 17
#define SNAP_REGS_MASK 0xff01ffull
#define SNAP_SP_AT 7
#define SNAP_PC_AT 8
#endif

struct snap_file_hdr {
	char magic[8];
	uint32_t nslots;
	uint32_t maps_len;
	uint32_t data_max;
	uint32_t dropped;
	uint32_t abi;	    /* of struct fg_rec_ustack */
	uint32_t nregs;	    /* the registers of a slot (the bits of regs_mask) */
	uint64_t regs_mask; /* which perf_regs they are, in order */
	uint32_t sp_at;	    /* regs[sp_at] is the stack pointer, */
	uint32_t pc_at;	    /* regs[pc_at] the pc */
};

struct snap_slot {
	uint64_t time_ns;
	uint32_t pid, tid;
	uint64_t regs[SNAP_MAX_REGS];
	uint32_t size;
	uint32_t ready;
	uint8_t data[]; /* data_max bytes */
};

static inline size_t snap_slot_size(unsigned data_max)
{
	return sizeof(struct snap_slot) + data_max;
}

/*
 * Copy up to len bytes from address src (the stack pointer) up into dst, stopping at
 * the first page that cannot be read: how many.  process_vm_readv() where the kernel
 * serves it; qemu-user does not (ENOSYS), and there each page goes through a pipe,
 * whose write() fails on memory that cannot be read.  Async-signal-safe.
 */
static inline size_t snap_copy(void *dst, uint64_t src, size_t len)
{
	struct iovec local = {dst, len}, remote = {(void *)(uintptr_t)src, len};
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
	int p[2];
	size_t done = 0;

	if (n >= 0 || errno != ENOSYS)
		return n > 0 ? (size_t)n : 0;
	if (pipe(p) < 0)
		return 0;
	while (done < len) {
		size_t chunk = 4096 - ((src + done) & 4095);

		if (chunk > len - done)
			chunk = len - done;
		if (write(p[1], (const void *)(uintptr_t)(src + done), chunk) != (ssize_t)chunk ||
		    read(p[0], (char *)dst + done, chunk) != (ssize_t)chunk)
			break;
		done += chunk;
	}
	close(p[0]);
	close(p[1]);
	return done;
}

static inline int errno_save(void)
{
	return errno;
}

static inline void errno_restore(int e)
{
	errno = e;
}

#endif
