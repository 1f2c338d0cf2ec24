/* SPDX-License-Identifier: BSD-2-Clause */
/* The file tests/unwind/snap.c writes and tests/tools/fgr-snap.c reads. */
#ifndef FG_TEST_SNAP_H
#define FG_TEST_SNAP_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define SNAP_MAGIC "FGSNAP01"
#define SNAP_NREGS 17
/* ax bx cx dx si di bp sp ip (perf_regs 0-8), r8-r15 (16-23) */
#define SNAP_REGS_MASK 0xff01ffull

struct snap_file_hdr {
	char magic[8];
	uint32_t nslots;
	uint32_t maps_len;
	uint32_t data_max;
	uint32_t dropped;
};

struct snap_slot {
	uint64_t time_ns;
	uint32_t pid, tid;
	uint64_t regs[SNAP_NREGS];
	uint32_t size;
	uint32_t ready;
	uint8_t data[]; /* data_max bytes */
};

static inline size_t snap_slot_size(unsigned data_max)
{
	return sizeof(struct snap_slot) + data_max;
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
