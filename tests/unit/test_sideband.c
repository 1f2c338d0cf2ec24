// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for the side-band helpers: /proc maps lines, the snapshot, time order. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fg/sideband.h"
#include "unit.h"

TEST(maps_lines)
{
	static const char exec_line[] =
	    "55d0c0a00000-55d0c0a05000 r-xp 00002000 fe:01 1234567                    "
	    "/usr/bin/with space (deleted)";
	static const char anon[] = "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 ";
	static const char data[] =
	    "55d0c0a05000-55d0c0a06000 rw-p 00007000 fe:01 1234567 /usr/bin/x";
	struct fg_rec_mapping m;
	const char *path;
	size_t len;

	CHECK_INT(fg_maps_parse_line(exec_line, strlen(exec_line), &m, &path, &len), 1);
	CHECK(m.start == 0x55d0c0a00000 && m.end == 0x55d0c0a05000);
	CHECK_INT(m.pgoff, 0x2000);
	CHECK_INT(m.maj, 0xfe);
	CHECK_INT(m.min, 1);
	CHECK_INT(m.ino, 1234567);
	CHECK_INT(m.prot, 5);
	CHECK_INT(m.mflags, 2);
	CHECK_INT(m.flags, FG_MAP_F_SNAPSHOT);
	CHECK(len == strlen("/usr/bin/with space (deleted)"));
	CHECK(memcmp(path, "/usr/bin/with space (deleted)", len) == 0);
	CHECK_INT(fg_maps_parse_line(anon, strlen(anon), &m, &path, &len), 1);
	CHECK_INT(len, 0);
	CHECK_INT(fg_maps_parse_line(data, strlen(data), &m, &path, &len), 0);
	CHECK_INT(fg_maps_parse_line("garbage", 7, &m, &path, &len), -EINVAL);
	CHECK_INT(fg_maps_parse_line("2000-1000 r-xp 0 0:0 0", 22, &m, &path, &len), -EINVAL);
}

static int tmpfd(void)
{
	char path[] = "/tmp/fg-unit-sb-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

static bool keep_odd_pids(void *ctx, uint32_t type, const void *payload, size_t len)
{
	uint32_t pid;

	(*(int *)ctx)++;
	if (type != FG_REC_EXIT || len < 4)
		return true;
	memcpy(&pid, payload, 4);
	return pid & 1;
}

TEST(queue_orders_by_time_and_keeps_the_rest)
{
	struct fg_rq *q = fg_rq_new();
	int fd = tmpfd();
	struct fg_rec_writer *w = fg_rec_writer_new(fd);
	struct fg_rec_header h;
	uint64_t times[] = {50, 10, 30, 10, 70, 20};
	int asked = 0;

	fg_rec_header_init(&h);
	fg_rec_write_header(w, &h);
	for (uint32_t i = 0; i < 6; i++) {
		struct fg_rec_task t = {.pid = i, .time_ns = times[i]};

		fg_rq_add(q, times[i], FG_REC_EXIT, &t, sizeof(t), NULL, 0);
	}
	CHECK_INT(fg_rq_flush(q, 40, w, keep_odd_pids, &asked), 0);
	CHECK_INT(asked, 4);			     /* 10, 10, 20, 30 */
	CHECK_INT(fg_rq_len(q), 2);		     /* 50 and 70 wait */
	CHECK_INT(fg_rq_written(q, FG_REC_EXIT), 3); /* pids 1, 3 and 5 */
	CHECK_INT(fg_rq_flush(q, UINT64_MAX, w, NULL, NULL), 0);
	CHECK_INT(fg_rq_len(q), 0);
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
	fg_rq_free(q);
	fg_rq_free(NULL);
}

TEST(snapshot_of_this_process)
{
	struct fg_rq *q = fg_rq_new();
	int fd = tmpfd();
	struct fg_rec_writer *w = fg_rec_writer_new(fd);
	struct fg_rec_header h;
	int n = fg_maps_snapshot_pid(q, "/proc", (uint32_t)getpid());

	CHECK(n >= 2); /* this test program and libc at least */
	CHECK_INT(fg_maps_snapshot_pid(q, "/proc", 0x7fffffff), -ENOENT);
	fg_rec_header_init(&h);
	fg_rec_write_header(w, &h);
	CHECK_INT(fg_rq_flush(q, 0, w, NULL, NULL), 0);
	CHECK_INT(fg_rec_writer_free(w), 0);
	lseek(fd, 0, SEEK_SET);
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "snap");
	struct fg_rec rec;
	int found = 0, k = 0;
	/* first who the process runs as, then its mappings */
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_CREDS);
	CHECK_INT(rec.creds->pid, getpid());
	CHECK_INT(rec.creds->uid, geteuid());
	CHECK_INT(rec.creds->gid, getegid());
	while (fg_rec_next(r, &rec) > 0) {
		CHECK_INT(rec.type, FG_REC_MAPPING);
		CHECK(rec.mapping->prot & 4);
		found += strstr(rec.path, "test_sideband") != NULL;
		k++;
	}
	CHECK_INT(k, n);
	CHECK(found >= 1);
	fg_rec_reader_free(r);
	close(fd);
	fg_rq_free(q);
}

TEST(creds_from_status)
{
	struct fg_rec_creds c;

	CHECK_INT(fg_creds_parse("Name:\tx\nUid:\t1000\t1001\t1002\t1003\n"
				 "Gid:\t100\t101\t102\t103\n",
				 &c),
		  0);
	CHECK_INT(c.uid, 1001);
	CHECK_INT(c.gid, 101);
	/* a "Uid:" inside another line is not the field */
	CHECK_INT(fg_creds_parse("Name:\tUid: 0 0\nUid:\t7\t8\t8\t8\nGid:\t1\t2\n", &c), 0);
	CHECK_INT(c.uid, 8);
	CHECK_INT(fg_creds_parse("Name:\tUid: 1 2\nGid:\t1\t2\n", &c), -EINVAL);
	CHECK_INT(fg_creds_parse("Uid:\t1\n", &c), -EINVAL);
	CHECK_INT(fg_creds_parse("", &c), -EINVAL);
	CHECK_INT(fg_creds_read("/proc", (uint32_t)getpid(), &c), 0);
	CHECK_INT(c.pid, getpid());
	CHECK_INT(c.uid, geteuid());
	CHECK_INT(fg_creds_read("/proc", 0x7fffffff, &c), -ENOENT);
}

int main(void)
{
	RUN(maps_lines);
	RUN(queue_orders_by_time_and_keeps_the_rest);
	RUN(snapshot_of_this_process);
	RUN(creds_from_status);
	return unit_done();
}
