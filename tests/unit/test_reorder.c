// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for the time-ordering queue: order, what waits, what is kept, what is counted. */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fg/reorder.h"
#include "unit.h"

static bool keep_odd_pids(void *ctx, uint32_t type, const void *payload, size_t len)
{
	uint32_t pid;

	(*(int *)ctx)++;
	if (type != FG_REC_EXIT || len < 4)
		return true;
	memcpy(&pid, payload, 4);
	return pid & 1;
}

/* a writer on a new memory file, its header written */
static struct fg_rec_writer *new_stream(int *fd)
{
	struct fg_rec_writer *w;
	struct fg_rec_header h;

	*fd = memfd_create("fg-unit-rq", MFD_CLOEXEC);
	w = fg_rec_writer_new(*fd);
	fg_rec_header_init(&h);
	fg_rec_write_header(w, &h);
	return w;
}

TEST(queue_orders_by_time_and_keeps_the_rest)
{
	struct fg_reorder *q = fg_reorder_new();
	int fd;
	struct fg_rec_writer *w = new_stream(&fd);
	uint64_t times[] = {50, 10, 30, 10, 70, 20};
	int asked = 0;

	for (uint32_t i = 0; i < 6; i++) {
		struct fg_rec_task t = {.pid = i, .time_ns = times[i]};

		fg_reorder_add(q, times[i], FG_REC_EXIT, &t, sizeof(t), NULL, 0);
	}
	CHECK_INT(fg_reorder_flush(q, 40, w, keep_odd_pids, &asked), 0);
	CHECK_INT(asked, 4);				  /* 10, 10, 20, 30 */
	CHECK_INT(fg_reorder_len(q), 2);		  /* 50 and 70 wait */
	CHECK_INT(fg_reorder_written(q, FG_REC_EXIT), 3); /* pids 1, 3 and 5 */
	CHECK_INT(fg_reorder_flush(q, UINT64_MAX, w, NULL, NULL), 0);
	CHECK_INT(fg_reorder_len(q), 0);
	CHECK_INT(fg_rec_writer_free(w), 0);

	lseek(fd, 0, SEEK_SET);
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "q");
	struct fg_rec rec;
	uint32_t want_pid[] = {1, 3, 5, 0, 4}; /* times 10, 10 (queued later), 20, 50, 70 */
	int n = 0;
	while (fg_rec_next(r, &rec) > 0) {
		CHECK(n < 5);
		CHECK_INT(rec.task->pid, want_pid[n]);
		n++;
	}
	CHECK_INT(n, 5);
	fg_rec_reader_free(r);
	close(fd);
	fg_reorder_free(q);
	fg_reorder_free(NULL);
}

/* Records queued at or before a flush's time are late: counted, written at the next flush. */
TEST(late_records_are_counted)
{
	struct fg_reorder *q = fg_reorder_new();
	int fd;
	struct fg_rec_writer *w = new_stream(&fd);
	struct fg_rec_task t = {.pid = 1};

	fg_reorder_add(q, 30, FG_REC_EXIT, &t, sizeof(t), NULL, 0); /* before any flush: in time */
	CHECK_INT(fg_reorder_late(q), 0);
	CHECK_INT(fg_reorder_flush(q, 40, w, NULL, NULL), 0);
	fg_reorder_add(q, 35, FG_REC_EXIT, &t, sizeof(t), NULL, 0); /* late */
	fg_reorder_add(q, 40, FG_REC_EXIT, &t, sizeof(t), NULL, 0); /* late: 40 was flushed */
	fg_reorder_add(q, 41, FG_REC_EXIT, &t, sizeof(t), NULL, 0);
	CHECK_INT(fg_reorder_late(q), 2);
	/* an earlier flush time does not move the mark back */
	CHECK_INT(fg_reorder_flush(q, 20, w, NULL, NULL), 0);
	fg_reorder_add(q, 39, FG_REC_EXIT, &t, sizeof(t), NULL, 0);
	CHECK_INT(fg_reorder_late(q), 3);
	CHECK_INT(fg_reorder_flush(q, UINT64_MAX, w, NULL, NULL), 0);
	CHECK_INT(fg_reorder_written(q, FG_REC_EXIT), 5);
	CHECK_INT(fg_rec_writer_free(w), 0);
	close(fd);
	fg_reorder_free(q);
}

/* A sample's payload in two parts, whole on the wire; the flags of the samples written counted. */
TEST(samples_in_two_parts_and_their_flags)
{
	struct fg_reorder *q = fg_reorder_new();
	int fd;
	struct fg_rec_writer *w = new_stream(&fd);
	struct fg_rec_sample s = {.time_ns = 5, .pid = 9, .tid = 9, .weight = 1, .nr_user = 2};
	uint64_t ips[2] = {0x401000, 0x401100};

	s.flags = FG_SAMPLE_F_USTACK_CUT | FG_SAMPLE_F_USER_MODE;
	fg_reorder_add(q, 5, FG_REC_SAMPLE, &s, sizeof(s), ips, sizeof(ips));
	s.flags = FG_SAMPLE_F_USER_MODE;
	s.time_ns = 7;
	fg_reorder_add(q, 7, FG_REC_SAMPLE, &s, sizeof(s), ips, sizeof(ips));
	fg_reorder_add(q, 9, FG_REC_SAMPLE, &s, sizeof(s), ips, sizeof(ips)); /* waits */
	CHECK_INT(fg_reorder_flush(q, 8, w, NULL, NULL), 0);
	CHECK_INT(fg_reorder_written(q, FG_REC_SAMPLE), 2);
	CHECK_INT(fg_reorder_written(q, FG_REC_TYPE_MAX + 1), 0);
	CHECK_INT(fg_reorder_written_with(q, FG_SAMPLE_F_USER_MODE), 2);
	CHECK_INT(fg_reorder_written_with(q, FG_SAMPLE_F_USTACK_CUT), 1);
	CHECK_INT(fg_reorder_written_with(q, FG_SAMPLE_F_KSTACK_FAILED), 0);
	/* one bit at a time */
	CHECK_INT(fg_reorder_written_with(q, FG_SAMPLE_F_USER_MODE | FG_SAMPLE_F_USTACK_CUT), 0);
	CHECK_INT(fg_reorder_written_with(q, 0), 0);
	CHECK_INT(fg_rec_writer_free(w), 0);

	lseek(fd, 0, SEEK_SET);
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "q");
	struct fg_rec rec;
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_SAMPLE);
	CHECK(rec.uips[0] == 0x401000 && rec.uips[1] == 0x401100);
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.sample->time_ns, 7);
	CHECK_INT(fg_rec_next(r, &rec), 0);
	fg_rec_reader_free(r);
	close(fd);
	fg_reorder_free(q);
}

/* A write error stops the flush, drops what was queued and comes back on every call. */
TEST(write_errors_are_returned)
{
	struct fg_reorder *q = fg_reorder_new();
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	struct fg_rec_writer *w = fg_rec_writer_new(fd);
	struct fg_rec_task t = {.pid = 1};

	CHECK(fd >= 0);
	fg_reorder_add(q, 1, FG_REC_EXIT, &t, sizeof(t), NULL, 0);
	fg_reorder_add(q, 2, FG_REC_EXIT, &t, sizeof(t), NULL, 0);
	/* the writer buffers: only its flush meets the full disk */
	CHECK_INT(fg_reorder_flush(q, 1, w, NULL, NULL), 0);
	CHECK_INT(fg_rec_writer_flush(w), -ENOSPC);
	CHECK_INT(fg_reorder_flush(q, 2, w, NULL, NULL), -ENOSPC);
	CHECK_INT(fg_reorder_len(q), 0);
	CHECK_INT(fg_reorder_flush(q, 2, w, NULL, NULL), -ENOSPC);
	fg_rec_writer_free(w);
	close(fd);
	fg_reorder_free(q);
}

/*
 * Records held as written: large ones go out from the queue in place, in runs
 * split where time order or `keep` leaves a gap; the bytes are the same as
 * fg_rec_write's, padding included, and what waits keeps its bytes.
 */
TEST(large_records_in_place)
{
	struct fg_reorder *q = fg_reorder_new();
	int fd, asked = 0;
	struct fg_rec_writer *w = new_stream(&fd);
	static uint8_t big[3][70001];
	uint64_t times[] = {30, 10, 20, 40, 60, 50, 70};

	for (int i = 0; i < 3; i++)
		memset(big[i], 'a' + i, sizeof(big[i]));
	for (uint32_t i = 0; i < 7; i++) {
		struct fg_rec_task t = {.pid = i, .time_ns = times[i]};
		struct iovec iov[] = {{&t, sizeof(t)}, {big[i % 3], sizeof(big[0]) - i}};

		/* odd pids and 6 with a tail of over 64 KiB; even ones are filtered out first */
		fg_reorder_addv(q, times[i], FG_REC_EXIT, iov, i % 2 || i == 6 ? 2 : 1);
	}
	CHECK_INT(fg_reorder_flush(q, 45, w, keep_odd_pids, &asked), 0);
	CHECK_INT(asked, 4);
	CHECK_INT(fg_reorder_len(q), 3);
	/* those left, moved by the flush: 60 and 70 lie end to end, one run */
	CHECK_INT(fg_reorder_flush(q, UINT64_MAX, w, NULL, NULL), 0);
	CHECK_INT(fg_reorder_written(q, FG_REC_EXIT), 5);
	CHECK_INT(fg_rec_writer_free(w), 0);

	lseek(fd, 0, SEEK_SET);
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "q");
	struct fg_rec rec;
	uint32_t want_pid[] = {1, 3, 5, 4, 6}; /* times 10, 40, 50, 60, 70 */
	int n = 0;
	while (fg_rec_next(r, &rec) > 0) {
		uint32_t pid = want_pid[n < 5 ? n : 0];
		size_t tail = pid % 2 || pid == 6 ? sizeof(big[0]) - pid : 0;
		const uint8_t *p = (const uint8_t *)rec.task + sizeof(struct fg_rec_task);

		CHECK(n < 5);
		CHECK_INT(rec.type, FG_REC_EXIT);
		CHECK_INT(rec.task->pid, pid);
		CHECK_INT(rec.size,
			  (sizeof(struct fg_rec_hdr) + sizeof(struct fg_rec_task) + tail + 7) &
			      ~7ul);
		CHECK(!tail || (p[0] == 'a' + pid % 3 && p[tail - 1] == 'a' + pid % 3));
		n++;
	}
	CHECK_INT(n, 5);
	fg_rec_reader_free(r);
	close(fd);
	fg_reorder_free(q);
}

/* A record too large for the stream fails the flush that reaches it, as fg_rec_write does. */
TEST(oversized_record_is_refused)
{
	struct fg_reorder *q = fg_reorder_new();
	int fd;
	struct fg_rec_writer *w = new_stream(&fd);
	struct fg_rec_task t = {.pid = 1};
	struct iovec iov[] = {{&t, sizeof(t)}, {NULL, FG_REC_MAX_SIZE}};

	fg_reorder_add(q, 1, FG_REC_EXIT, &t, sizeof(t), NULL, 0);
	fg_reorder_addv(q, 2, FG_REC_EXIT, iov, 2); /* its bytes are never read */
	CHECK_INT(fg_reorder_flush(q, 1, w, NULL, NULL), 0);
	CHECK_INT(fg_reorder_flush(q, 2, w, NULL, NULL), -EMSGSIZE);
	CHECK_INT(fg_reorder_len(q), 0);
	CHECK_INT(fg_reorder_written(q, FG_REC_EXIT), 1);
	CHECK_INT(fg_rec_writer_free(w), 0);
	close(fd);
	fg_reorder_free(q);
}

int main(void)
{
	RUN(queue_orders_by_time_and_keeps_the_rest);
	RUN(late_records_are_counted);
	RUN(samples_in_two_parts_and_their_flags);
	RUN(write_errors_are_returned);
	RUN(large_records_in_place);
	RUN(oversized_record_is_refused);
	return unit_done();
}
