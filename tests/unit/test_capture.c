// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for lib/capture.c: what a reader knows of a capture, losses by kind. */
#include "fg/capture.h"
#include "unit.h"

static void add_lost(struct fg_capture *c, uint64_t count, uint32_t reason, uint64_t t)
{
	struct fg_rec_lost l = {.time_ns = t, .count = count, .cpu = 0, .reason = reason};
	struct fg_rec rec = {.type = FG_REC_LOST, .lost = &l};

	fg_capture_add(c, &rec);
}

TEST(saturating_add)
{
	CHECK(fg_sat_add(1, 2) == 3);
	CHECK(fg_sat_add(UINT64_MAX, 1) == UINT64_MAX);
	CHECK(fg_sat_add(7, UINT64_MAX) == UINT64_MAX);
	CHECK(fg_sat_add(UINT64_MAX - 1, 1) == UINT64_MAX);
}

TEST(losses_by_kind_never_wrap)
{
	struct fg_capture c = {0};
	struct fg_buf b = FG_BUF_INIT;

	CHECK(!fg_capture_describe_lost(&c, &b));
	CHECK_INT(b.len, 0);
	add_lost(&c, 7, FG_LOST_RINGBUF_FULL, 0);
	add_lost(&c, 2, FG_LOST_SIDEBAND, 0);
	CHECK(fg_capture_describe_lost(&c, &b));
	CHECK_STR(b.data, "7 samples (its ring buffer was full), 2 mapping, comm or task events "
			  "(its perf buffer overflowed)");
	/* 7 + 2^64-1 stays 2^64-1, said to be at least that */
	add_lost(&c, UINT64_MAX, FG_LOST_RINGBUF_FULL, 0);
	add_lost(&c, 0, FG_LOST_CPU_OFFLINE, 0);
	add_lost(&c, 0, FG_LOST_CPU_OFFLINE, 0);
	add_lost(&c, 3, 99, 0);
	fg_buf_reset(&b);
	CHECK(fg_capture_describe_lost(&c, &b));
	CHECK_STR(b.data, "at least 18446744073709551615 samples (its ring buffer was full), 2 "
			  "mapping, comm or task events (its perf buffer overflowed), 3 things for "
			  "reasons this fg-sym does not know");
	CHECK_INT(c.cpus_offline, 2);
	CHECK(c.samples_lost.n == UINT64_MAX && c.samples_lost.saturated);
	CHECK(!c.events_lost.saturated);
	/* once saturated, it stays so */
	add_lost(&c, 1, FG_LOST_RINGBUF_FULL, 0);
	CHECK(c.samples_lost.saturated);
	fg_buf_release(&b);
}

TEST(what_is_known_of_a_capture)
{
	struct fg_capture c = {0};
	struct fg_buf b = FG_BUF_INIT;
	struct fg_rec_sample s1 = {.time_ns = 5000000000ull}, s2 = {.time_ns = 6500000000ull};
	struct fg_rec_mapping m = {.time_ns = 0};
	struct fg_rec_summary sum = {.samples = 2};
	struct fg_rec r;

	fg_capture_describe(&c, &b);
	CHECK_STR(b.data, "0 records, 0 samples");
	r = (struct fg_rec){.type = FG_REC_MAPPING, .mapping = &m};
	fg_capture_add(&c, &r); /* the snapshot: no time */
	r = (struct fg_rec){.type = FG_REC_SAMPLE, .sample = &s2};
	fg_capture_add(&c, &r);
	r = (struct fg_rec){.type = FG_REC_SAMPLE, .sample = &s1};
	fg_capture_add(&c, &r);
	fg_buf_reset(&b);
	fg_capture_describe(&c, &b);
	CHECK_STR(b.data, "3 records, 2 samples over 1.50 s (from 5.000000 to 6.500000)");
	CHECK(!c.ended);
	r = (struct fg_rec){.type = FG_REC_SUMMARY, .summary = &sum};
	fg_capture_add(&c, &r);
	CHECK(c.ended);
	CHECK_INT(c.summary.samples, 2);
	fg_buf_release(&b);
}

int main(void)
{
	RUN(saturating_add);
	RUN(losses_by_kind_never_wrap);
	RUN(what_is_known_of_a_capture);
	return unit_done();
}
