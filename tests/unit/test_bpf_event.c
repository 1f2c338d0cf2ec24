// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for the BPF program's events: into sample records, and the ring buffer's size. */
#include <errno.h>
#include <stdlib.h>

#include "fg/bpf_event.h"
#include "unit.h"

/* A record as fg-sample writes one: its header, then the payload padded to 8.  Its size. */
static size_t put_record(uint8_t *at, const void *payload, size_t len)
{
	struct fg_rec_hdr h = {FG_REC_SAMPLE, (uint32_t)(8 + ((len + 7) & ~(size_t)7))};

	memset(at, 0, h.size);
	memcpy(at, &h, sizeof(h));
	memcpy(at + sizeof(h), payload, len);
	return h.size;
}

TEST(sample_from_a_bpf_event)
{
	/* an event at a 4-byte offset, as perf raw data lies */
	static uint8_t raw[4 + sizeof(struct fg_event)];
	struct fg_event e = {.time_ns = 7,
			     .weight = 1,
			     .cpu = 1,
			     .pid = 2,
			     .tid = 3,
			     .flags = 0x20,
			     .nr_kernel = 1,
			     .nr_user = 2};
	struct fg_rec_sample s;
	const void *eips;
	uint64_t v[3];
	size_t size = offsetof(struct fg_event, ips) + 3 * 8;

	memcpy(e.comm, "a-very-long-command-name", 16); /* not terminated */
	e.ips[0] = 0xffffffff81000000;
	e.ips[1] = 0x401000;
	e.ips[2] = 0x401100;
	memcpy(raw + 4, &e, size);
	CHECK_INT(fg_bpf_event_sample(raw + 4, size, &s, &eips), 0);
	CHECK_INT(s.time_ns, 7);
	CHECK_INT(s.tid, 3);
	CHECK_INT(s.weight, 1);
	CHECK_INT(s.flags, 0x20);
	CHECK_STR(s.comm, "a-very-long-com");
	memcpy(v, eips, sizeof(v));
	CHECK(v[0] == 0xffffffff81000000 && v[2] == 0x401100);
	CHECK_INT(fg_bpf_event_sample(raw + 4, size - 1, &s, &eips), -EINVAL);
	CHECK_INT(fg_bpf_event_sample(raw + 4, 10, &s, &eips), -EINVAL);
	e.nr_user = MAX_STACK_DEPTH + 1;
	memcpy(raw + 4, &e, offsetof(struct fg_event, ips));
	CHECK_INT(fg_bpf_event_sample(raw + 4, sizeof(e), &s, &eips), -EINVAL);
}

TEST(wait_events)
{
	struct fg_event e = {.time_ns = 5000,
			     .weight = 70000000,
			     .cpu = 1,
			     .pid = 2,
			     .tid = 3,
			     .flags = FG_SAMPLE_F_OFFCPU | FG_SAMPLE_F_WEIGHT_NS |
				      FG_STATE_UNINTERRUPTIBLE << FG_SAMPLE_STATE_SHIFT,
			     .nr_kernel = 1};
	size_t size = offsetof(struct fg_event, ips) + 8;
	struct fg_rec_sample s;
	const void *eips;

	/* a wait weighs its nanoseconds, its flags and state kept */
	CHECK_INT(fg_bpf_event_sample(&e, size, &s, &eips), 0);
	CHECK_INT(s.weight, 70000000);
	CHECK_INT(s.flags, e.flags);
	CHECK_STR(fg_rec_wait_state(s.flags), "D");
	/* a wait not in nanoseconds, a CPU sample that weighs other than 1 or says nanoseconds */
	e.flags = FG_SAMPLE_F_OFFCPU;
	CHECK_INT(fg_bpf_event_sample(&e, size, &s, &eips), -EINVAL);
	e.flags = 0;
	CHECK_INT(fg_bpf_event_sample(&e, size, &s, &eips), -EINVAL);
	e.weight = 1;
	CHECK_INT(fg_bpf_event_sample(&e, size, &s, &eips), 0);
	e.flags = FG_SAMPLE_F_WEIGHT_NS;
	CHECK_INT(fg_bpf_event_sample(&e, size, &s, &eips), -EINVAL);
}

/* An event with a snapshot, as the BPF program sends it (fg/bpf_abi.h), at `at` in buf. */
static size_t snapshot_event(uint8_t *buf, size_t at)
{
	const size_t head = offsetof(struct fg_event, ips);
	struct fg_event e = {.time_ns = 9,
			     .weight = 1,
			     .cpu = 1,
			     .pid = 5,
			     .tid = 6,
			     .flags = FG_SAMPLE_F_USTACK_SNAPSHOT | FG_SAMPLE_F_USER_MODE,
			     .nr_kernel = 1,
			     .nr_user = 2};
	struct fg_event_ustack u = {.abi = FG_USTACK_ABI_X86_64,
				    .nr_regs = FG_USTACK_NR_REGS,
				    .regs_mask = FG_USTACK_REGS_X86_64,
				    .sp = 0x7ffd1000,
				    .size = 24};
	uint64_t ips3[3] = {0xffffffff81000000, 0x401000, 0x401100};
	uint8_t stack[24];

	memcpy(e.comm, "snap", 5);
	for (int i = 0; i < FG_USTACK_NR_REGS; i++)
		u.regs[i] = 0x1000 + (uint64_t)i;
	for (int i = 0; i < 24; i++)
		stack[i] = (uint8_t)(0xa0 + i);
	memcpy(buf + at, &e, head);
	memcpy(buf + at + head, &u, sizeof(u));
	memcpy(buf + at + head + sizeof(u), stack, sizeof(stack));
	memcpy(buf + at + head + sizeof(u) + sizeof(stack), ips3, sizeof(ips3));
	return head + sizeof(u) + sizeof(stack) + sizeof(ips3);
}

TEST(snapshot_events_and_records)
{
	static uint8_t raw[4096];
	const size_t head = offsetof(struct fg_event, ips);
	size_t size = snapshot_event(raw, 4); /* perf raw data lies 4-byte aligned */
	struct fg_rec_sample s;
	struct fg_rec_ustack u;
	const void *eips, *regs, *stack;
	uint64_t v[3], r;

	/* the IPs come after the snapshot in an event */
	CHECK_INT(fg_bpf_event_sample(raw + 4, size, &s, &eips), 0);
	CHECK_INT(s.flags, FG_SAMPLE_F_USTACK_SNAPSHOT | FG_SAMPLE_F_USER_MODE);
	CHECK_INT(s.nr_user, 2);
	memcpy(v, eips, sizeof(v));
	CHECK(v[0] == 0xffffffff81000000 && v[1] == 0x401000 && v[2] == 0x401100);
	CHECK_INT(fg_bpf_event_ustack(raw + 4, size, &u, &regs, &stack), 0);
	CHECK_INT(u.abi, FG_USTACK_ABI_X86_64);
	CHECK_INT(u.nr_regs, 20);
	CHECK(u.regs_mask == FG_USTACK_REGS_X86_64 && u.sp == 0x7ffd1000);
	CHECK_INT(u.size, 24);
	memcpy(&r, (const uint8_t *)regs + 8 * 19, 8);
	CHECK(r == 0x1000 + 19);
	CHECK_INT(((const uint8_t *)stack)[23], 0xa0 + 23);
	/* short, or lying about its snapshot */
	CHECK_INT(fg_bpf_event_sample(raw + 4, size - 1, &s, &eips), -EINVAL);
	CHECK_INT(fg_bpf_event_ustack(raw + 4, size - 1, &u, &regs, &stack), -EINVAL);
	CHECK_INT(fg_bpf_event_sample(raw + 4, head + 8, &s, &eips), -EINVAL);
	static const struct {
		size_t off;
		uint32_t v;
	} lies[] = {
	    {offsetof(struct fg_event_ustack, abi), 2},
	    {offsetof(struct fg_event_ustack, nr_regs), 21},
	    {offsetof(struct fg_event_ustack, size), 20}, /* not a multiple of 8 */
	    {offsetof(struct fg_event_ustack, size), 32}, /* more than the event holds */
	    {offsetof(struct fg_event_ustack, size), FG_USTACK_SNAPSHOT_MAX + 8},
	};
	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		snapshot_event(raw, 4);
		memcpy(raw + 4 + head + lies[i].off, &lies[i].v, 4);
		CHECK_INT(fg_bpf_event_sample(raw + 4, size, &s, &eips), -EINVAL);
		CHECK_INT(fg_bpf_event_ustack(raw + 4, size, &u, &regs, &stack), -EINVAL);
	}
	/* an event without one */
	snapshot_event(raw, 4);
	uint32_t flags = FG_SAMPLE_F_USER_MODE;
	memcpy(raw + 4 + offsetof(struct fg_event, flags), &flags, 4);
	CHECK_INT(fg_bpf_event_ustack(raw + 4, size, &u, &regs, &stack), -ENOENT);

	/* the record fg-sample makes of it: sample, IPs, then the snapshot; read back */
	size = snapshot_event(raw, 0);
	CHECK_INT(fg_bpf_event_sample(raw, size, &s, &eips), 0);
	CHECK_INT(fg_bpf_event_ustack(raw, size, &u, &regs, &stack), 0);
	uint8_t rec_buf[1024];
	size_t len = 0;
#define PUT(p, n) (memcpy(rec_buf + len, (p), (n)), len += (n))
	PUT(&s, sizeof(s));
	PUT(eips, 24);
	PUT(&u, sizeof(u));
	PUT(regs, 8 * (size_t)u.nr_regs);
	PUT(stack, u.size);
#undef PUT
	/* as records in memory: that one, then the same sample without its snapshot */
	static uint64_t stream[2 * (8 + sizeof(rec_buf)) / 8]; /* records lie 8-aligned */
	struct {
		uint8_t *data;
		size_t len;
	} m = {(uint8_t *)stream, 0};
	size_t second;
	struct fg_rec rec;
	char why[160];

	m.len = put_record(m.data, rec_buf, len);
	second = m.len;
	s.flags = FG_SAMPLE_F_USER_MODE;
	memcpy(rec_buf, &s, sizeof(s));
	m.len += put_record(m.data + m.len, rec_buf, sizeof(s) + 24);
	CHECK_INT(fg_rec_parse(m.data, m.len, &rec, why, sizeof(why)), 0);
	CHECK(rec.ustack != NULL);
	CHECK_INT(rec.ustack->size, 24);
	CHECK(rec.uips[1] == 0x401100);
	CHECK(fg_rec_ustack_reg(&rec, FG_REG_X86_IP, &r) == 0 && r == 0x1000 + 8);
	CHECK(fg_rec_ustack_reg(&rec, FG_REG_X86_SS, &r) == 0 && r == 0x1000 + 11);
	CHECK(fg_rec_ustack_reg(&rec, FG_REG_X86_R8, &r) == 0 && r == 0x1000 + 12);
	CHECK(fg_rec_ustack_reg(&rec, FG_REG_X86_R15, &r) == 0 && r == 0x1000 + 19);
	CHECK_INT(fg_rec_ustack_reg(&rec, FG_REG_X86_DS, &r), -ENOENT);
	CHECK_INT(fg_rec_ustack_reg(&rec, 64, &r), -ENOENT);
	CHECK_INT(rec.ustack_data[0], 0xa0);
	CHECK_INT(fg_rec_parse(m.data + second, m.len - second, &rec, why, sizeof(why)), 0);
	CHECK(rec.ustack == NULL);
	CHECK_INT(fg_rec_ustack_reg(&rec, FG_REG_X86_IP, &r), -ENOENT);

	/* a record lying about its snapshot is refused, saying so */
	uint8_t *u0 = m.data + 8 + sizeof(s) + 24;
	uint32_t nr = 19;
	memcpy(u0 + offsetof(struct fg_rec_ustack, nr_regs), &nr, 4);
	CHECK_INT(fg_rec_parse(m.data, m.len, &rec, why, sizeof(why)), -EPROTO);
	CHECK_STR(why, "stack snapshot with 19 registers for mask 0xff0fff");
	nr = 20;
	memcpy(u0 + offsetof(struct fg_rec_ustack, nr_regs), &nr, 4);
	uint32_t big = 32;
	memcpy(u0 + offsetof(struct fg_rec_ustack, size), &big, 4);
	CHECK_INT(fg_rec_parse(m.data, m.len, &rec, why, sizeof(why)), -EPROTO);
	CHECK(strstr(why, "stack snapshot needs") != NULL);
}

/* The ring buffer: 4 to 16 pages a CPU by the rate; with snapshots, a second of the largest. */
TEST(ring_sizes)
{
	uint64_t big = fg_bpf_event_max(8192, MAX_STACK_DEPTH);

	CHECK_INT(fg_bpf_ring_pages(99, 0, 1, MAX_STACK_DEPTH, 2, 4096), 4);
	CHECK_INT(fg_bpf_ring_pages(100, 0, 1, MAX_STACK_DEPTH, 2, 4096), 4);
	CHECK_INT(fg_bpf_ring_pages(101, 0, 1, MAX_STACK_DEPTH, 2, 4096), 8);
	CHECK_INT(fg_bpf_ring_pages(999, 0, 1, MAX_STACK_DEPTH, 2, 4096), 16);
	CHECK_INT(fg_bpf_ring_pages(100000, 0, 1, MAX_STACK_DEPTH, 2, 4096), 16);
	/* an event with a snapshot: its fixed part, the snapshot's header and bytes, the IPs */
	CHECK_INT(big, 8 + offsetof(struct fg_event, ips) + sizeof(struct fg_event_ustack) + 8192 +
			   16 * MAX_STACK_DEPTH);
	CHECK_INT(fg_bpf_ring_pages(99, 8192, 1, MAX_STACK_DEPTH, 2, 4096), 256);
	CHECK(fg_bpf_ring_pages(99, 8192, 1, MAX_STACK_DEPTH, 2, 4096) * 4096ull >= 99 * big);
	/* cfi: one sample in FG_RING_CFI_EVERY with a snapshot, the others walked in BPF */
	uint64_t walked = fg_bpf_event_max(0, MAX_STACK_DEPTH);
	CHECK_INT(fg_bpf_ring_pages(999, 8192, FG_RING_CFI_EVERY, MAX_STACK_DEPTH, 2, 4096), 1024);
	CHECK(1024 * 4096ull >= 125 * big + 874 * walked);
	CHECK(512 * 4096ull < 125 * big + 874 * walked);
	CHECK_INT(fg_bpf_ring_pages(999, 8192, 1, MAX_STACK_DEPTH, 2, 4096), 4096);
	CHECK_INT(fg_bpf_ring_pages(99, 8192, FG_RING_CFI_EVERY, MAX_STACK_DEPTH, 2, 4096), 128);
	/* a rate below `every`: one snapshot still has room */
	CHECK(fg_bpf_ring_pages(1, 8192, FG_RING_CFI_EVERY, MAX_STACK_DEPTH, 2, 4096) * 4096ull >=
	      big);
	/* never past the 1 GiB the ring may take */
	CHECK_INT(fg_bpf_ring_pages(100000, FG_USTACK_SNAPSHOT_MAX, 1, MAX_STACK_DEPTH, 4096, 4096),
		  64);
	CHECK_INT(fg_bpf_ring_bytes(64, 4096, 4096), 1u << 30);
	CHECK_INT(fg_bpf_ring_bytes(128, 4096, 4096), 0);
	/* rounded up to a power of two */
	CHECK_INT(fg_bpf_ring_bytes(4, 3, 4096), 65536);
	CHECK_INT(fg_bpf_ring_bytes(1, 1, 4096), 4096);
	CHECK_STR(fg_bpf_stat_name(FG_STAT_RINGBUF_FULL), "lost");
	CHECK_STR(fg_bpf_stat_name(FG_STAT_SNAPSHOT_WHOLE), "snapshot-whole");
	CHECK_STR(fg_bpf_stat_name(FG_STAT_MAX), "unknown");
}

/* each Python frame's instruction out of the event's frame: the code object, and a byte offset */
TEST(python_instructions_out_of_the_frames)
{
	const uint64_t code = 0x7f1234567890ull;
	uint64_t in[4] = {code | 11ull << FG_PY_INSTR_SHIFT, code | FG_PY_ENTRY,
			  code | FG_PY_INSTR_MASK << FG_PY_INSTR_SHIFT | FG_PY_ENTRY,
			  code | 1ull << FG_PY_INSTR_SHIFT},
		 out[4];
	uint32_t off[4];

	fg_bpf_event_pyoffsets(in, 4, out, off);
	CHECK(out[0] == code && out[1] == (code | FG_PY_ENTRY));
	CHECK(out[2] == (code | FG_PY_ENTRY) && out[3] == code);
	CHECK_INT(off[0], 20); /* units plus one: 10 units, 20 bytes */
	CHECK_INT(off[1], FG_PY_NO_OFFSET);
	CHECK_INT(off[2], 2 * (FG_PY_INSTR_MASK - 1));
	CHECK_INT(off[3], 0);
}

int main(void)
{
	RUN(sample_from_a_bpf_event);
	RUN(wait_events);
	RUN(snapshot_events_and_records);
	RUN(ring_sizes);
	RUN(python_instructions_out_of_the_frames);
	return unit_done();
}
