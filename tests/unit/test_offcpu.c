// SPDX-License-Identifier: BSD-2-Clause
/*
 * Off-CPU waits down the pipeline: a wait's task state in the sample flags
 * (fg/sample_flags.h, fg/record.h), what a reader counts of them and of their
 * losses (fg/capture.h), and fg-fold's wall-clock profiles and task state
 * filter (fg/fold.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "fg/capture.h"
#include "fg/fold.h"
#include "fg/record.h"
#include "unit.h"

static uint32_t state(uint32_t s)
{
	return FG_SAMPLE_F_OFFCPU | FG_SAMPLE_F_WEIGHT_NS | s << FG_SAMPLE_STATE_SHIFT;
}

TEST(wait_states)
{
	CHECK_STR(fg_rec_wait_state(state(FG_STATE_RUNNING)), "R");
	CHECK_STR(fg_rec_wait_state(state(FG_STATE_INTERRUPTIBLE)), "S");
	CHECK_STR(fg_rec_wait_state(state(FG_STATE_UNINTERRUPTIBLE)), "D");
	CHECK_STR(fg_rec_wait_state(state(FG_STATE_STOPPED)), "T");
	CHECK_STR(fg_rec_wait_state(state(FG_STATE_TRACED)), "t");
	CHECK_STR(fg_rec_wait_state(state(FG_STATE_DEAD)), "X");
	CHECK_STR(fg_rec_wait_state(state(FG_STATE_ZOMBIE)), "Z");
	CHECK_STR(fg_rec_wait_state(state(FG_STATE_PARKED)), "P");
	CHECK_STR(fg_rec_wait_state(state(FG_STATE_IDLE)), "I");
	CHECK_STR(fg_rec_wait_state(state(FG_STATE_PREEMPTED)), "R+");
	/* values this reader does not know, and the other flags left alone */
	CHECK_STR(fg_rec_wait_state(state(10)), "?");
	CHECK_STR(fg_rec_wait_state(state(15) | FG_SAMPLE_F_OPEN), "?");
	CHECK_STR(fg_rec_wait_state(0xffffffffu & ~FG_SAMPLE_STATE_MASK), "R");
	/* the state bits stay clear of every other flag */
	CHECK((FG_SAMPLE_STATE_MASK &
	       (FG_SAMPLE_F_KSTACK_FAILED | FG_SAMPLE_F_USTACK_FAILED | FG_SAMPLE_F_USTACK_CUT |
		FG_SAMPLE_F_KSTACK_CUT | FG_SAMPLE_F_KERNEL_THREAD | FG_SAMPLE_F_USER_MODE |
		FG_SAMPLE_F_USTACK_NOFP | FG_SAMPLE_F_USTACK_SNAPSHOT | FG_SAMPLE_F_WEIGHT_NS |
		FG_SAMPLE_F_OFFCPU | FG_SAMPLE_F_OPEN)) == 0);
}

TEST(capture_counts_waits_and_their_losses)
{
	struct fg_capture c = {0};
	struct fg_buf b = FG_BUF_INIT;
	struct fg_rec_sample cpu = {.time_ns = 1, .weight = 1},
			     wait = {.time_ns = 2,
				     .weight = 5000,
				     .flags = state(FG_STATE_UNINTERRUPTIBLE)},
			     open = {.time_ns = 3,
				     .weight = 7000,
				     .flags = state(FG_STATE_INTERRUPTIBLE) | FG_SAMPLE_F_OPEN};
	struct fg_rec_lost full = {.count = 4, .reason = FG_LOST_WAITS_RINGBUF_FULL},
			   unseen = {.count = 2, .reason = FG_LOST_WAITS_UNSEEN},
			   no_end = {.count = 1, .reason = FG_LOST_WAITS_NO_END};
	struct fg_rec r;

	r = (struct fg_rec){.type = FG_REC_SAMPLE, .sample = &cpu};
	fg_capture_add(&c, &r);
	r.sample = &wait;
	fg_capture_add(&c, &r);
	r.sample = &open;
	fg_capture_add(&c, &r);
	CHECK_INT(c.samples, 3);
	CHECK_INT(c.waits, 2);
	CHECK_INT(c.waits_open, 1);
	CHECK(!fg_capture_describe_lost(&c, &b));
	r = (struct fg_rec){.type = FG_REC_LOST, .lost = &full};
	fg_capture_add(&c, &r);
	r.lost = &unseen;
	fg_capture_add(&c, &r);
	r.lost = &no_end;
	fg_capture_add(&c, &r);
	CHECK(fg_capture_describe_lost(&c, &b));
	CHECK_STR(b.data, "4 waits (their ring buffer was full), 2 waits it did not follow (no "
			  "memory to keep them), 1 waits whose end the kernel did not report");
	CHECK_INT(c.other_lost.n, 0);
	fg_buf_release(&b);
}

/* the folded output of `in` with options `o`, as one string (caller frees) */
static char *fold(const struct fg_fold_opts *o, const char *in, struct fg_fold_stats *st_out)
{
	struct fg_fold *f = fg_fold_new(o, NULL, NULL);
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);

	if (fg_fold_read_mem(f, in, strlen(in), "test") < 0 || fg_fold_write(f, fp) < 0)
		fputs("FAILED", fp);
	fclose(fp);
	if (st_out) {
		*st_out = *fg_fold_stats(f);
		/* the event's name goes with f: keep whether it was cpu-clock */
		st_out->event = st_out->event && strcmp(st_out->event, "cpu-clock") == 0
				    ? "cpu-clock"
				: st_out->event ? "other"
						: NULL;
	}
	fg_fold_free(f);
	return out;
}

/* a CPU sample of 10 ms, a wait of 50 ms asleep, one of 3 ms preempted and still open */
static const char wall_in[] =
    "w  7/7  [001]  1.000100:   10000000 cpu-clock: \n"
    "\t1200 burn+0x10 (/w)\n"
    "\t1400 main+0x30 (/w)\n"
    "\n"
    "w  7/7  [001]  1.050000:   50000000 offcpu-time: prev_state=S\n"
    "\tffffffff81000000 schedule+0x10 ([kernel.kallsyms])\n"
    "\t1500 rest+0x10 (/w)\n"
    "\t1400 main+0x30 (/w)\n"
    "\n"
    "w  7/7  [001]  1.060000:    3000000 offcpu-time: prev_state=R+ open=1\n"
    "\t1400 main+0x30 (/w)\n"
    "\n";

TEST(fold_wall)
{
	struct fg_fold_opts o = {.wall = true};
	struct fg_fold_stats st;
	char *out = fold(&o, wall_in, &st);

	CHECK_STR(out, "w;main;[off-cpu] 3000000\n"
		       "w;main;burn 10000000\n"
		       "w;main;rest;schedule;[off-cpu] 50000000\n");
	CHECK_INT(st.waits, 2);
	CHECK_INT(st.samples, 3);
	CHECK_INT(st.other_events, 0);
	CHECK_STR(st.event, "cpu-clock"); /* the CPU event, never offcpu-time */
	free(out);
	/* without --wall: the first event seen, alone */
	o.wall = false;
	out = fold(&o, wall_in, &st);
	CHECK_STR(out, "w;main;burn 10000000\n");
	CHECK_INT(st.other_events, 2);
	free(out);
	/* waits first, then --wall still picks the CPU event to fold them with */
	o.wall = true;
	out = fold(&o, wall_in + 88, &st);
	CHECK_STR(out, "w;main;[off-cpu] 3000000\n"
		       "w;main;rest;schedule;[off-cpu] 50000000\n");
	CHECK(st.event == NULL);
	free(out);
	/* --event-filter offcpu-time: the waits alone, no marker */
	o.wall = false;
	o.event_filter = "offcpu-time";
	out = fold(&o, wall_in, &st);
	CHECK_STR(out, "w;main 3000000\nw;main;rest;schedule 50000000\n");
	free(out);
}

TEST(fold_state)
{
	const char *const d[] = {"D"}, *const sr[] = {"S", "R+"}, *const r[] = {"R"};
	struct fg_fold_opts o = {.states = sr, .n_states = 2};
	struct fg_fold_stats st;
	char *out = fold(&o, wall_in + 88, &st);

	CHECK_STR(out, "w;main 3000000\nw;main;rest;schedule 50000000\n");
	CHECK_INT(st.state_filtered, 0);
	free(out);
	/* R is not R+; the CPU sample names no state */
	o.states = r;
	o.n_states = 1;
	o.wall = true;
	out = fold(&o, wall_in, &st);
	CHECK_STR(out, "");
	CHECK_INT(st.state_filtered, 3);
	free(out);
	o.states = d;
	o.wall = false;
	o.event_filter = "offcpu-time";
	out = fold(&o, wall_in, &st);
	CHECK_STR(out, "");
	/* the CPU sample names no state: left out before its event is looked at */
	CHECK_INT(st.state_filtered, 3);
	CHECK_INT(st.other_events, 0);
	free(out);
	/* only a whole word prev_state=: not inside another field's name or value */
	o.states = sr;
	o.n_states = 2;
	out = fold(&o,
		   "w 7/7 [0] 1.0: 5 offcpu-time: xprev_state=S\n\t1 a (/w)\n\n"
		   "w 7/7 [0] 1.0: 6 offcpu-time: note=prev_state=S prev_state=D\n\t1 b (/w)\n\n"
		   "w 7/7 [0] 1.0: 7 offcpu-time: prev_state=S\n\t1 c (/w)\n\n",
		   &st);
	CHECK_STR(out, "w;c 7\n");
	CHECK_INT(st.state_filtered, 2);
	free(out);
}

int main(void)
{
	RUN(wait_states);
	RUN(capture_counts_waits_and_their_losses);
	RUN(fold_wall);
	RUN(fold_state);
	return unit_done();
}
