// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for the side-band helpers: /proc maps lines as records, the snapshot, creds. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include "fg/sideband.h"
#include "unit.h"

/* A maps line, parsed by procmaps, as the snapshot records it. */
TEST(maps_records)
{
	char exec_line[] =
	    "55d0c0a00000-55d0c0a05000 r-xp 00002000 fe:01 1234567                    "
	    "/usr/bin/with space (deleted)";
	char shared[] = "7f0000000000-7f0000001000 rwxs 00000000 00:00 0 ";
	struct fg_procmap pm;
	struct fg_rec_mapping m;

	CHECK_INT(fg_procmap_parse(exec_line, strlen(exec_line), &pm), 0);
	fg_sideband_maps_record(&pm, &m);
	CHECK(m.start == 0x55d0c0a00000 && m.end == 0x55d0c0a05000);
	CHECK_INT(m.pgoff, 0x2000);
	CHECK_INT(m.maj, 0xfe);
	CHECK_INT(m.min, 1);
	CHECK_INT(m.ino, 1234567);
	CHECK_INT(m.prot, 5);
	CHECK_INT(m.mflags, 2); /* MAP_PRIVATE */
	CHECK_INT(m.flags, FG_MAP_F_SNAPSHOT);
	CHECK(m.pid == 0 && m.time_ns == 0 && m.build_id_len == 0);
	CHECK_STR(pm.path, "/usr/bin/with space");
	CHECK(pm.deleted);
	CHECK_INT(fg_procmap_parse(shared, strlen(shared), &pm), 0);
	fg_sideband_maps_record(&pm, &m);
	CHECK_INT(m.prot, 7);
	CHECK_INT(m.mflags, 1); /* MAP_SHARED */
}

static int tmpfd(void)
{
	char path[] = "/tmp/fg-unit-sb-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

TEST(snapshot_of_this_process)
{
	struct fg_reorder *q = fg_reorder_new();
	int fd = tmpfd();
	struct fg_rec_writer *w = fg_rec_writer_new(fd);
	struct fg_rec_header h;
	int n = fg_sideband_maps_pid(q, "/proc", (uint32_t)getpid());

	CHECK(n >= 2); /* this test program and libc at least */
	CHECK_INT(fg_sideband_maps_pid(q, "/proc", 0x7fffffff), -ENOENT);
	fg_rec_header_init(&h);
	fg_rec_write_header(w, &h);
	CHECK_INT(fg_reorder_flush(q, 0, w, NULL, NULL), 0);
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
	fg_reorder_free(q);
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/*
 * A snapshot from a made-up /proc: executable mappings only, a file deleted
 * since it was mapped under its own name, an anonymous one as //anon, lines
 * the kernel would not write skipped.
 */
TEST(snapshot_of_a_made_up_proc)
{
	char root[] = "/tmp/fg-unit-proc-XXXXXX", dir[64], maps[96], status[96];
	struct fg_reorder *q = fg_reorder_new();
	int fd = tmpfd();
	struct fg_rec_writer *w = fg_rec_writer_new(fd);
	struct fg_rec_header h;
	static const char *const want[] = {"/usr/bin/prog", "/tmp/prog new", "//anon"};
	int n;

	CHECK(mkdtemp(root) != NULL);
	snprintf(dir, sizeof(dir), "%s/42", root);
	snprintf(maps, sizeof(maps), "%s/maps", dir);
	snprintf(status, sizeof(status), "%s/status", dir);
	CHECK_INT(mkdir(dir, 0700), 0);
	put_file(status, "Name:\tprog\nUid:\t1\t2\t2\t2\nGid:\t3\t4\t4\t4\n");
	put_file(maps, "400000-401000 r-xp 00001000 08:01 77   /usr/bin/prog\n"
		       "401000-402000 rw-p 00002000 08:01 77   /usr/bin/prog\n"
		       "500000-501000 r-xp 00000000 08:01 78   /tmp/prog new (deleted)\n"
		       "not a maps line\n"
		       "600000-600000 r-xp 00000000 08:01 79   /empty\n"
		       "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n");
	n = fg_sideband_maps_pid(q, root, 42);
	unlink(maps);
	unlink(status);
	rmdir(dir);
	rmdir(root);
	CHECK_INT(n, 3);
	fg_rec_header_init(&h);
	fg_rec_write_header(w, &h);
	CHECK_INT(fg_reorder_flush(q, 0, w, NULL, NULL), 0);
	CHECK_INT(fg_rec_writer_free(w), 0);
	lseek(fd, 0, SEEK_SET);
	struct fg_rec_reader *r = fg_rec_reader_new(fd, "snap");
	struct fg_rec rec;
	CHECK_INT(fg_rec_next(r, &rec), 1);
	CHECK_INT(rec.type, FG_REC_CREDS);
	CHECK(rec.creds->pid == 42 && rec.creds->uid == 2 && rec.creds->gid == 4);
	for (int i = 0; i < 3; i++) {
		CHECK_INT(fg_rec_next(r, &rec), 1);
		CHECK_INT(rec.type, FG_REC_MAPPING);
		CHECK_STR(rec.path, want[i]);
		CHECK(rec.mapping->pid == 42 && rec.mapping->tid == 42);
		CHECK_INT(rec.mapping->prot, 5);
	}
	CHECK_INT(rec.mapping->ino, 0);
	CHECK_INT(fg_rec_next(r, &rec), 0);
	fg_rec_reader_free(r);
	close(fd);
	fg_reorder_free(q);
}

TEST(creds_from_status)
{
	struct fg_rec_creds c;

	CHECK_INT(fg_sideband_creds_parse("Name:\tx\nUid:\t1000\t1001\t1002\t1003\n"
					  "Gid:\t100\t101\t102\t103\n",
					  &c),
		  0);
	CHECK_INT(c.uid, 1001);
	CHECK_INT(c.gid, 101);
	/* a "Uid:" inside another line is not the field */
	CHECK_INT(fg_sideband_creds_parse("Name:\tUid: 0 0\nUid:\t7\t8\t8\t8\nGid:\t1\t2\n", &c),
		  0);
	CHECK_INT(c.uid, 8);
	CHECK_INT(fg_sideband_creds_parse("Name:\tUid: 1 2\nGid:\t1\t2\n", &c), -EINVAL);
	CHECK_INT(fg_sideband_creds_parse("Uid:\t1\n", &c), -EINVAL);
	CHECK_INT(fg_sideband_creds_parse("", &c), -EINVAL);
	CHECK_INT(fg_sideband_creds_read("/proc", (uint32_t)getpid(), &c), 0);
	CHECK_INT(c.pid, getpid());
	CHECK_INT(c.uid, geteuid());
	CHECK_INT(fg_sideband_creds_read("/proc", 0x7fffffff, &c), -ENOENT);
}

int main(void)
{
	RUN(maps_records);
	RUN(snapshot_of_this_process);
	RUN(snapshot_of_a_made_up_proc);
	RUN(creds_from_status);
	return unit_done();
}
