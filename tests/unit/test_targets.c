// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for the processes a filtered run follows, and the filter of their records. */
#include "fg/record.h"
#include "fg/targets.h"
#include "unit.h"

static bool keep_task(struct fg_targets *t, uint32_t type, uint32_t pid, uint32_t ppid)
{
	struct fg_rec_task task = {.pid = pid, .tid = pid, .ppid = ppid, .ptid = ppid};

	return fg_targets_keep(t, type, &task, sizeof(task));
}

TEST(a_set_of_processes)
{
	struct fg_targets *t = fg_targets_new(false);

	fg_targets_add(t, 42);
	fg_targets_add(t, 7);
	fg_targets_add(t, 42);
	CHECK_INT(fg_targets_count(t), 2);
	CHECK_INT(fg_targets_at(t, 0), 42);
	CHECK_INT(fg_targets_at(t, 1), 7);
	CHECK(fg_targets_has(t, 7) && !fg_targets_has(t, 8));
	fg_targets_free(t);
	fg_targets_free(NULL);
}

/* Samples and losses always; side-band records of the processes followed only. */
TEST(records_kept)
{
	struct fg_targets *t = fg_targets_new(false);
	struct fg_rec_sample s = {.pid = 99};
	struct fg_rec_lost l = {.cpu = 1};
	struct fg_rec_mapping m = {.pid = 42};
	struct fg_rec_comm c = {.pid = 43};

	fg_targets_add(t, 42);
	CHECK(fg_targets_keep(t, FG_REC_SAMPLE, &s, sizeof(s)));
	CHECK(fg_targets_keep(t, FG_REC_LOST, &l, sizeof(l)));
	CHECK(fg_targets_keep(t, FG_REC_MAPPING, &m, sizeof(m)));
	CHECK(!fg_targets_keep(t, FG_REC_COMM, &c, sizeof(c)));
	CHECK(fg_targets_keep(t, FG_REC_COMM, &c, 3)); /* too short to tell */
	/* without follow, a child of a target is not one */
	CHECK(!keep_task(t, FG_REC_FORK, 50, 42));
	CHECK(!fg_targets_has(t, 50));
	fg_targets_free(t);
}

/* With follow, a fork of a process followed adds the child, and its records are kept. */
TEST(children_followed)
{
	struct fg_targets *t = fg_targets_new(true);

	fg_targets_add(t, 42);
	CHECK(keep_task(t, FG_REC_FORK, 50, 42));
	CHECK(fg_targets_has(t, 50));
	CHECK(keep_task(t, FG_REC_FORK, 51, 50)); /* a grandchild */
	CHECK(!keep_task(t, FG_REC_FORK, 60, 1)); /* another process's child */
	CHECK(!fg_targets_has(t, 60));
	CHECK(keep_task(t, FG_REC_EXIT, 51, 50));
	CHECK_INT(fg_targets_count(t), 3);
	fg_targets_free(t);
}

int main(void)
{
	RUN(a_set_of_processes);
	RUN(records_kept);
	RUN(children_followed);
	return unit_done();
}
