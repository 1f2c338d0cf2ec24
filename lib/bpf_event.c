// SPDX-License-Identifier: BSD-2-Clause
/* The BPF program's events into sample records, and the ring buffer's size (fg-sample). */
#include <errno.h>
#include <sys/mman.h>
#include <string.h>

#include "fg/bpf_event.h"

_Static_assert(FG_REC_COMM_LEN == TASK_COMM_LEN, "comm length");
/* the BPF program's snapshot header starts as the wire's */
_Static_assert(offsetof(struct fg_event_ustack, regs) == sizeof(struct fg_rec_ustack),
	       "snapshot header layout");
_Static_assert(offsetof(struct fg_event_ustack, nr_regs) == offsetof(struct fg_rec_ustack, nr_regs),
	       "snapshot header layout");
_Static_assert(offsetof(struct fg_event_ustack, regs_mask) ==
		   offsetof(struct fg_rec_ustack, regs_mask),
	       "snapshot header layout");
_Static_assert(offsetof(struct fg_event_ustack, sp) == offsetof(struct fg_rec_ustack, sp),
	       "snapshot header layout");
_Static_assert(offsetof(struct fg_event_ustack, size) == offsetof(struct fg_rec_ustack, size),
	       "snapshot header layout");
_Static_assert(FG_USTACK_NR_REGS == __builtin_popcountll(FG_USTACK_REGS_X86_64), "register count");

/* the fixed part of an event and, with a snapshot, its struct fg_event_ustack */
static int event_parts(const void *data, size_t size, struct fg_event *e, struct fg_event_ustack *u,
		       size_t *ips_at)
{
	const size_t head = offsetof(struct fg_event, ips);
	size_t nips;

	if (size < head)
		return -EINVAL;
	memcpy(e, data, head);
	if (e->nr_kernel > MAX_STACK_DEPTH || e->nr_user > MAX_STACK_DEPTH ||
	    e->nr_py > FG_PY_DEPTH || (e->nr_py && !(e->flags & FG_SAMPLE_F_PYSTACK)))
		return -EINVAL;
	/* a CPU sample weighs 1; a wait its nanoseconds, and says so */
	if (e->flags & FG_SAMPLE_F_OFFCPU ? !(e->flags & FG_SAMPLE_F_WEIGHT_NS)
					  : e->weight != 1 || (e->flags & FG_SAMPLE_F_WEIGHT_NS))
		return -EINVAL;
	nips = (size_t)e->nr_kernel + e->nr_user + e->nr_py;
	*ips_at = head;
	if (e->flags & FG_SAMPLE_F_USTACK_SNAPSHOT) {
		if (size < head + sizeof(*u))
			return -EINVAL;
		memcpy(u, (const uint8_t *)data + head, sizeof(*u));
		if (u->abi != FG_USTACK_ABI_X86_64 || u->nr_regs != FG_USTACK_NR_REGS ||
		    u->regs_mask != FG_USTACK_REGS_X86_64 || u->size > FG_USTACK_SNAPSHOT_MAX ||
		    u->size % 8)
			return -EINVAL;
		*ips_at = head + sizeof(*u) + u->size;
	}
	return size < *ips_at + 8 * nips ? -EINVAL : 0;
}

int fg_bpf_event_sample(const void *data, size_t size, struct fg_rec_sample *s, const void **ips)
{
	struct fg_event e; /* the fixed part only: perf raw data is 4-byte aligned */
	struct fg_event_ustack u;
	size_t at;

	if (event_parts(data, size, &e, &u, &at) < 0)
		return -EINVAL;
	memset(s, 0, sizeof(*s));
	s->time_ns = e.time_ns;
	s->cpu = e.cpu;
	s->pid = e.pid;
	s->tid = e.tid;
	s->flags = e.flags;
	s->weight = e.weight;
	s->nr_kernel = e.nr_kernel;
	s->nr_user = e.nr_user;
	memcpy(s->comm, e.comm, sizeof(s->comm));
	s->comm[sizeof(s->comm) - 1] = '\0';
	*ips = (const uint8_t *)data + at;
	return 0;
}

int fg_bpf_event_pystack(const void *data, size_t size, struct fg_rec_pystack *py,
			 const void **frames)
{
	struct fg_event e;
	struct fg_event_ustack eu;
	size_t at;

	if (event_parts(data, size, &e, &eu, &at) < 0)
		return -EINVAL;
	if (!(e.flags & FG_SAMPLE_F_PYSTACK))
		return -ENOENT;
	py->nr = e.nr_py;
	py->flags = e.py_flags;
	*frames = (const uint8_t *)data + at + 8 * ((size_t)e.nr_kernel + e.nr_user);
	return 0;
}

void fg_bpf_event_pyoffsets(const void *frames, uint32_t n, uint64_t *out, uint32_t *offsets)
{
	for (uint32_t i = 0; i < n && i < FG_PY_DEPTH; i++) {
		uint64_t f, units;

		memcpy(&f, (const uint8_t *)frames + 8 * (size_t)i, sizeof(f));
		units = f >> FG_PY_INSTR_SHIFT & FG_PY_INSTR_MASK;
		out[i] = (f & FG_PY_CODE_MASK) | (f & FG_PY_ENTRY);
		offsets[i] = units ? (uint32_t)(units - 1) * 2 : FG_PY_NO_OFFSET;
	}
}

int fg_bpf_event_ustack(const void *data, size_t size, struct fg_rec_ustack *u, const void **regs,
			const void **stack)
{
	struct fg_event e;
	struct fg_event_ustack eu;
	size_t at;

	if (event_parts(data, size, &e, &eu, &at) < 0)
		return -EINVAL;
	if (!(e.flags & FG_SAMPLE_F_USTACK_SNAPSHOT))
		return -ENOENT;
	memcpy(u, &eu, sizeof(*u)); /* laid out alike (the _Static_asserts above) */
	u->pad = 0;
	at = offsetof(struct fg_event, ips) + offsetof(struct fg_event_ustack, regs);
	*regs = (const uint8_t *)data + at;
	*stack = (const uint8_t *)data + at + 8 * (size_t)eu.nr_regs;
	return 0;
}

uint64_t fg_bpf_event_max(unsigned snapshot, unsigned depth)
{
	/*
	 * Python frames (8 * FG_PY_DEPTH bytes more at most) are left out: the
	 * samples of Python processes only, a ring that cannot take one counts it lost
	 */
	return 8 + offsetof(struct fg_event, ips) + sizeof(struct fg_event_ustack) + snapshot +
	       16 * (uint64_t)depth;
}

uint32_t fg_bpf_ring_bytes(unsigned pages, int ncpus, size_t page)
{
	uint64_t want = (uint64_t)pages * page * (uint64_t)ncpus;
	uint64_t size = page;

	while (size < want)
		size <<= 1;
	return size > (1u << 30) ? 0 : (uint32_t)size;
}

/*
 * About 25 samples of each CPU a page, 4 to 16 pages.  A ring larger than
 * needed costs time in each sample at low rates: its pages are revisited
 * seldom, and in a shadow-paged guest the first write to a page not written
 * for a while is slow (at 99 Hz the output step took about 1.7 us a sample
 * with 16 pages a CPU, 1.0 us with 4; README, Benchmarks).  The ring is
 * drained every 100 ms, so 4 pages at 100 Hz hold 1.6 KiB a sample, twice
 * the room 16 pages give at 1000 Hz.
 *
 * With a snapshot a sample is the size of its snapshot and more (8 KiB and
 * more by default): the ring holds one second of the largest samples of
 * each CPU (at 99 Hz and 8192 bytes, 256 pages, 1 MiB), at least the pages
 * above.  Less is not enough on a busy machine: writing the output file
 * there may stall for half a second (dirty pages written back under other
 * jobs' I/O), the ring is not read meanwhile, and with 200 ms of room 11 to
 * 67 samples were lost in such runs, none with one second (README,
 * Benchmarks).  Its pages are cold whatever its size (100 ms of samples pass
 * between two writes to a page), so a larger ring costs no more a sample:
 * 64, 256 pages a CPU measured the same.
 *
 * With --call-graph cfi a sample carries a snapshot only where the walk in
 * BPF falls back (1 to 5% of them under process churn, more in a run's first
 * samples): one second of the largest samples, one in eight of them with a
 * snapshot (at 999 Hz, 1024 pages, 4 MiB a CPU, rather than 16 MiB; about
 * 450 snapshots, or 7,000 samples of a 6-frame stack).  Allocating, charging
 * and mapping the larger ring took some 6 ms of each start, 12% of it.
 */
unsigned fg_bpf_ring_pages(unsigned hz, unsigned snapshot, unsigned every, unsigned depth,
			   int ncpus, size_t page)
{
	uint64_t snaps = every > 1 ? ((uint64_t)hz + every - 1) / every : hz;
	uint64_t want = snaps * fg_bpf_event_max(snapshot, depth) +
			((uint64_t)hz - snaps) * fg_bpf_event_max(0, depth);
	unsigned pages = 4;

	while (pages < 16 && pages * 25 < hz)
		pages <<= 1;
	if (!snapshot)
		return pages;
	while ((uint64_t)pages * page < want && fg_bpf_ring_bytes(pages * 2, ncpus, page))
		pages <<= 1;
	return pages;
}

const char *fg_bpf_stat_name(unsigned stat)
{
	static const char *const names[FG_STAT_MAX] = {
	    [FG_STAT_SAMPLES] = "samples",
	    [FG_STAT_RINGBUF_FULL] = "lost",
	    [FG_STAT_KSTACK_FAILED] = "kstack-failed",
	    [FG_STAT_USTACK_FAILED] = "ustack-failed",
	    [FG_STAT_USTACK_CUT] = "ustack-cut",
	    [FG_STAT_FILTERED] = "filtered",
	    [FG_STAT_USTACK_BYTES] = "ustack-bytes",
	    [FG_STAT_USTACK_NOFP] = "ustack-nofp",
	    [FG_STAT_SNAPSHOTS] = "snapshots",
	    [FG_STAT_SNAPSHOT_BYTES] = "snapshot-bytes",
	    [FG_STAT_SNAPSHOT_WHOLE] = "snapshot-whole",
	    [FG_STAT_BUSY] = "busy",
	    [FG_STAT_WAITS] = "waits",
	    [FG_STAT_WAITS_RINGBUF_FULL] = "waits-lost",
	    [FG_STAT_WAITS_UNSEEN] = "waits-unseen",
	    [FG_STAT_WAITS_SHORT] = "waits-short",
	    [FG_STAT_WAITS_LONG] = "waits-long",
	    [FG_STAT_WAITS_NO_START] = "waits-no-start",
	    [FG_STAT_WAITS_NO_END] = "waits-no-end",
	    [FG_STAT_KORC_WALKS] = "korc-walks",
	    [FG_STAT_KORC_FB_TEXT] = "korc-fallback-text",
	    [FG_STAT_KORC_FB_OTHER] = "korc-fallback-other",
	    [FG_STAT_KORC_CHECKED] = "korc-checked",
	    [FG_STAT_KORC_DIFFER] = "korc-differ",
	    [FG_STAT_PY_STACKS] = "py-stacks",
	    [FG_STAT_PY_FRAMES] = "py-frames",
	    [FG_STAT_PY_CUT] = "py-cut",
	    [FG_STAT_PY_NO_THREAD] = "py-no-thread",
	    [FG_STAT_PY_FAILED] = "py-failed",
	};

	return stat < FG_STAT_MAX && names[stat] ? names[stat] : "unknown";
}

int fg_bpf_fill_mmapable(int fd, uint32_t n, size_t size, const void *src)
{
	size_t stride = (size + 7) & ~(size_t)7, len = (size_t)n * stride;
	char *dst = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (dst == MAP_FAILED)
		return -errno;
	if (stride == size)
		memcpy(dst, src, len);
	else
		for (uint32_t i = 0; i < n; i++)
			memcpy(dst + i * stride, (const char *)src + i * size, size);
	munmap(dst, len);
	return 0;
}
