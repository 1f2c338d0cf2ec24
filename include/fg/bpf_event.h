/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The BPF program's events on the user side of fg-sample: each one checked
 * and turned into a sample record of the stream (fg-record(5)), and the size
 * of the ring buffer that carries them.  The layout of an event is the BPF
 * program's (fg/bpf_abi.h); the stream's format (fg/record.h) does not know
 * it.  Only fg-sample and its tests use this module.
 *
 *	struct fg_rec_sample s;
 *	const void *ips;
 *	if (fg_bpf_event_sample(data, size, &s, &ips) < 0)
 *		bad++;	// a malformed event: count it, drop it
 */
#ifndef FG_BPF_EVENT_H
#define FG_BPF_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "fg/bpf_abi.h"
#include "fg/record.h"

/*
 * A sample record from one event of the BPF program (struct fg_event, or
 * with FG_SAMPLE_F_USTACK_SNAPSHOT the layout fg/bpf_abi.h gives; `size`
 * bytes, any alignment): fills *s and points *ips at its nr_kernel +
 * nr_user IPs inside `data`.  0, or -EINVAL for an event that is too short,
 * has too many IPs or a malformed snapshot.
 */
int fg_bpf_event_sample(const void *data, size_t size, struct fg_rec_sample *s, const void **ips);
/*
 * The Python frames of an event with FG_SAMPLE_F_PYSTACK: *py filled, *frames
 * at its py->nr frames inside `data` (after the IPs).  0, -ENOENT without
 * them, -EINVAL as above.
 */
int fg_bpf_event_pystack(const void *data, size_t size, struct fg_rec_pystack *py,
			 const void **frames);
/*
 * The n (at most FG_PY_DEPTH) frames at `frames` as the record carries
 * them: out[i] the code object's address (and FG_PY_ENTRY), offsets[i] its
 * instruction's byte offset in its bytecode, FG_PY_NO_OFFSET when the
 * event has none (bits FG_PY_INSTR_SHIFT on, fg/sample_flags.h).
 */
void fg_bpf_event_pyoffsets(const void *frames, uint32_t n, uint64_t *out, uint32_t *offsets);
/*
 * The snapshot of an event with FG_SAMPLE_F_USTACK_SNAPSHOT (struct
 * fg_event_ustack) as the record's struct fg_rec_ustack: fills *u and points
 * *regs (u->nr_regs u64s) and *stack (u->size bytes) inside `data`.  0,
 * -ENOENT for an event without one, or -EINVAL for a malformed event.  In a
 * record the snapshot comes after the IPs; in an event, before them.
 */
int fg_bpf_event_ustack(const void *data, size_t size, struct fg_rec_ustack *u, const void **regs,
			const void **stack);

/*
 * The largest event with a snapshot of `snapshot` bytes and `depth` frames
 * of each stack, as it takes room in the ring buffer (its 8-byte header
 * included).
 */
uint64_t fg_bpf_event_max(unsigned snapshot, unsigned depth);

/*
 * The ring buffer's default size, pages of `page` bytes for each of `ncpus`
 * CPUs sampled at `hz`: 4 to 16 pages by the rate, or with snapshots
 * (`snapshot` bytes, `depth` frames) room for one second of the largest
 * events, one in `every` of them with a snapshot (1: each, as with
 * --call-graph dwarf; FG_RING_CFI_EVERY for cfi's fallbacks), within the
 * 1 GiB fg_bpf_ring_bytes() allows.  A power of two.
 */
#define FG_RING_CFI_EVERY 8
unsigned fg_bpf_ring_pages(unsigned hz, unsigned snapshot, unsigned every, unsigned depth,
			   int ncpus, size_t page);
/*
 * The ring buffer's size in bytes: `pages` for each CPU, rounded up to a
 * power of two as the kernel wants; 0 when above 1 GiB.
 */
uint32_t fg_bpf_ring_bytes(unsigned pages, int ncpus, size_t page);

/* The name of a per-CPU counter (enum fg_stat) in fg-sample -v's lines: "kstack-failed". */
const char *fg_bpf_stat_name(unsigned stat);

/*
 * n values of `size` bytes from src into the BPF_F_MMAPABLE array map fd,
 * through a mapping of it: a copy, where a batch update costs a syscall's
 * worth of checks per element.  The kernel lays the values out 8-byte
 * aligned.  0 or -errno.
 */
int fg_bpf_fill_mmapable(int fd, uint32_t n, size_t size, const void *src);

#endif
