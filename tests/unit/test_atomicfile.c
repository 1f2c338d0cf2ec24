// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for the one output-file writer (fg_atomic): whole or nothing, links, modes. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/atomicfile.h"
#include "fg/safeio.h"
#include "unit.h"

static char dir[] = "/tmp/fg-test-atomic-XXXXXX";

/* DIR/NAME, in one of a few buffers used in turn */
static char *path_in_dir(const char *name)
{
	static char paths[4][256];
	static int next;
	char *path = paths[next++ % 4];

	snprintf(path, sizeof(paths[0]), "%s/%s", dir, name);
	return path;
}

static char *slurp(const char *path)
{
	static char *data;
	size_t len;

	free(data);
	if (fg_safeio_read_file(path, 4096, &data, &len) < 0)
		data = NULL;
	return data ? data : "";
}

static int count_files(void)
{
	char cmd[300];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

TEST(atomic_commit_and_abort)
{
	char *path = path_in_dir("out.svg");
	struct fg_atomic a;
	struct stat st;
	mode_t mask = umask(022);

	CHECK_INT(fg_atomic_open(&a, path, 0), 0);
	fputs("new", a.fp);
	CHECK_INT(count_files(), 1); /* the temporary file */
	CHECK(stat(path, &st) < 0);  /* not yet there */
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK_STR(slurp(path), "new");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
	/* an abort leaves the old file as it was, and no temporary file */
	CHECK(chmod(path, 0600) == 0);
	CHECK_INT(fg_atomic_open(&a, path, 0), 0);
	fputs("half", a.fp);
	fg_atomic_abort(&a);
	CHECK_STR(slurp(path), "new");
	CHECK_INT(count_files(), 1);
	/* a replacement keeps the mode of the file it replaces */
	CHECK_INT(fg_atomic_open(&a, path, 0), 0);
	fputs("newer", a.fp);
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK_STR(slurp(path), "newer");
	umask(mask);
	unlink(path);
	/* no directory to create the temporary file in */
	CHECK_INT(fg_atomic_open(&a, path_in_dir("no/such/file"), 0), -ENOENT);
	CHECK_INT(count_files(), 0);
}

TEST(atomic_failed_write_keeps_the_target)
{
	struct fg_atomic a;

	/* /dev/full is not a regular file: written in place, and the error shows at commit */
	CHECK_INT(fg_atomic_open(&a, "/dev/full", 0), 0);
	CHECK(a.tmp == NULL);
	fputs("x", a.fp);
	CHECK_INT(fg_atomic_commit(&a), -ENOSPC);
	CHECK_INT(fg_atomic_open(&a, "/dev/null", 0), 0);
	fputs("x", a.fp);
	CHECK_INT(fg_atomic_commit(&a), 0);
}

TEST(atomic_writes_through_a_link)
{
	char *real = path_in_dir("real"), *link = path_in_dir("link");
	struct fg_atomic a;
	struct stat st;

	CHECK(symlink("real", link) == 0);
	CHECK_INT(fg_atomic_open(&a, link, 0), 0);
	CHECK(a.tmp == NULL);
	fputs("through", a.fp);
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK_STR(slurp(real), "through");
	unlink(link);
	unlink(real);
}

/* Someone else: the nobody user, for the tests that need root to chown. */
#define OTHER_UID 65534

TEST(atomic_link_kept_and_its_file_truncated)
{
	char *real = path_in_dir("real"), *link = path_in_dir("link");
	struct fg_atomic a;
	struct stat st;
	FILE *f = fopen(real, "w");

	CHECK(f && fputs("a longer old text", f) >= 0 && fclose(f) == 0);
	CHECK(chmod(real, 0640) == 0);
	CHECK(symlink("real", link) == 0);
	CHECK_INT(fg_atomic_open(&a, link, FG_OUT_PRIVATE), 0);
	fputs("short", a.fp);
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK_STR(slurp(real), "short");
	CHECK(stat(real, &st) == 0 && (st.st_mode & 07777) == 0640);
	CHECK_INT(count_files(), 2);
	unlink(link);
	unlink(real);
}

TEST(atomic_refuses_another_users_link_and_fifo)
{
	char *real = path_in_dir("real"), *link = path_in_dir("link");
	char *fifo = path_in_dir("fifo");
	struct fg_atomic a;

	if (geteuid() != 0) {
		fprintf(stderr, "  skipped: needs root to give a link away\n");
		return;
	}
	CHECK(symlink("real", link) == 0);
	CHECK(lchown(link, OTHER_UID, OTHER_UID) == 0);
	CHECK_INT(fg_atomic_open(&a, link, 0), -EPERM);
	CHECK(a.fp == NULL);
	CHECK(access(real, F_OK) < 0); /* nothing created where it points */
	CHECK_INT(count_files(), 1);
	unlink(link);
	/* a FIFO someone else planted would hand them the output */
	CHECK(mkfifo(fifo, 0666) == 0);
	CHECK(chown(fifo, OTHER_UID, OTHER_UID) == 0);
	CHECK_INT(fg_atomic_open(&a, fifo, 0), -EPERM);
	unlink(fifo);
	CHECK_INT(count_files(), 0);
}

TEST(atomic_modes_never_carry_special_bits_or_anothers)
{
	char path[256], other[256];
	struct fg_atomic a;
	struct stat st;
	mode_t mask = umask(022);
	FILE *f;

	snprintf(path, sizeof(path), "%s", path_in_dir("out"));
	snprintf(other, sizeof(other), "%s", path_in_dir("other"));
	/* a new private file: 0600 whatever the umask */
	umask(0);
	CHECK_INT(fg_atomic_open(&a, path, FG_OUT_PRIVATE), 0);
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600);
	umask(022);
	/* the writer's own file: its permission bits, never set-ID or sticky */
	CHECK(chmod(path, 06777) == 0);
	CHECK_INT(fg_atomic_open(&a, path, 0), 0);
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0777);
	/* private: less what others may do */
	CHECK(chmod(path, 0644) == 0);
	CHECK_INT(fg_atomic_open(&a, path, FG_OUT_PRIVATE), 0);
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640);
	if (geteuid() == 0) {
		/* another user's file is replaced as if new, and is the writer's */
		CHECK(chown(path, OTHER_UID, OTHER_UID) == 0 && chmod(path, 06777) == 0);
		CHECK_INT(fg_atomic_open(&a, path, 0), 0);
		CHECK_INT(fg_atomic_commit(&a), 0);
		CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0644 && st.st_uid == 0);
		CHECK(chown(path, OTHER_UID, OTHER_UID) == 0);
		CHECK_INT(fg_atomic_open(&a, path, FG_OUT_PRIVATE), 0);
		CHECK_INT(fg_atomic_commit(&a), 0);
		CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_uid == 0);
	}
	/* a hard link under the name: replaced, the other name's file untouched */
	f = fopen(other, "w");
	CHECK(f && fputs("theirs", f) >= 0 && fclose(f) == 0);
	unlink(path);
	CHECK(link(other, path) == 0);
	CHECK_INT(fg_atomic_open(&a, path, 0), 0);
	fputs("mine", a.fp);
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK_STR(slurp(other), "theirs");
	CHECK_STR(slurp(path), "mine");
	unlink(other);
	unlink(path);
	umask(mask);
}

TEST(atomic_stream_is_in_place_at_once)
{
	char *path = path_in_dir("run.fgr");
	struct fg_atomic a;
	struct stat st;
	FILE *f = fopen(path, "w");

	CHECK(f && fputs("an old capture", f) >= 0 && fclose(f) == 0);
	CHECK(chmod(path, 0644) == 0);
	CHECK_INT(fg_atomic_open(&a, path, FG_OUT_PRIVATE | FG_OUT_STREAM | FG_OUT_FD), 0);
	CHECK(a.fp == NULL && a.tmp == NULL && a.fd >= 0);
	CHECK_STR(slurp(path), ""); /* the new file is there already */
	CHECK(write(a.fd, "part", 4) == 4);
	CHECK_STR(slurp(path), "part");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0640);
	/* cut short: what was written stays */
	fg_atomic_abort(&a);
	CHECK_STR(slurp(path), "part");
	CHECK_INT(count_files(), 1);
	unlink(path);
}

TEST(atomic_openat_a_directory)
{
	struct fg_atomic a;
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	CHECK(dfd >= 0);
	CHECK_INT(fg_atomic_openat(&a, dfd, "cache", FG_OUT_PRIVATE | FG_OUT_FD), 0);
	CHECK(write(a.fd, "kept", 4) == 4);
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK_STR(slurp(path_in_dir("cache")), "kept");
	CHECK(stat(path_in_dir("cache"), &st) == 0 && (st.st_mode & 07777) == 0600);
	/* a failure replaces nothing */
	CHECK_INT(fg_atomic_openat(&a, dfd, "cache", FG_OUT_PRIVATE | FG_OUT_FD), 0);
	CHECK(write(a.fd, "half", 4) == 4);
	fg_atomic_abort(&a);
	CHECK_STR(slurp(path_in_dir("cache")), "kept");
	CHECK_INT(count_files(), 1);
	fg_atomic_abort(&a); /* released: nothing to do */
	unlink(path_in_dir("cache"));
	close(dfd);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(atomic_commit_and_abort);
	RUN(atomic_failed_write_keeps_the_target);
	RUN(atomic_writes_through_a_link);
	RUN(atomic_link_kept_and_its_file_truncated);
	RUN(atomic_refuses_another_users_link_and_fifo);
	RUN(atomic_modes_never_carry_special_bits_or_anothers);
	RUN(atomic_stream_is_in_place_at_once);
	RUN(atomic_openat_a_directory);
	rmdir(dir);
	return unit_done();
}
