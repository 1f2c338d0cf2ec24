// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for lib/safeio.c: paths without symbolic links, private directories. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fg/safeio.h"
#include "unit.h"

static char top[] = "/tmp/fg-test-safeio.XXXXXX";

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static char *in_top(const char *rel)
{
	static char path[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof(path[i]), "%s/%s", top, rel);
	return path[i];
}

static int files_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while ((e = readdir(d)))
		n += e->d_name[0] != '.' || (e->d_name[1] && e->d_name[1] != '.');
	closedir(d);
	return n;
}

TEST(beneath_opens_a_plain_path)
{
	int dfd = open(top, O_PATH | O_DIRECTORY), fd;
	struct stat st;
	char buf[8] = "";

	mkdir(in_top("tmp"), 0755);
	put("tmp/perf-1.map", "1000 10 f\n");
	fd = fg_safeio_open_data_beneath(dfd, "tmp/perf-1.map", 0, &st);
	CHECK(fd >= 0);
	CHECK(read(fd, buf, 4) == 4);
	CHECK_STR(buf, "1000");
	CHECK(S_ISREG(st.st_mode));
	close(fd);
	fd = fg_safeio_open_data_beneath(dfd, "./tmp//perf-1.map", 0, NULL);
	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(fg_safeio_open_data_beneath(dfd, "tmp/perf-1.map", 4, NULL), -EFBIG);
	CHECK_INT(fg_safeio_open_data_beneath(dfd, "tmp/none", 0, NULL), -ENOENT);
	close(dfd);
}

TEST(beneath_follows_no_link)
{
	int dfd = open(top, O_PATH | O_DIRECTORY);

	put("secret", "1000 10 SECRET\n");
	CHECK(symlink(in_top("secret"), in_top("tmp/perf-2.map")) == 0);
	CHECK(symlink("tmp", in_top("ltmp")) == 0);
	/* the last component, and a directory on the way */
	CHECK_INT(fg_safeio_open_data_beneath(dfd, "tmp/perf-2.map", 0, NULL), -ELOOP);
	CHECK_INT(fg_safeio_open_data_beneath(dfd, "ltmp/perf-1.map", 0, NULL), -ELOOP);
	CHECK_INT(fg_safeio_open_data_beneath(dfd, "../etc/passwd", 0, NULL), -EINVAL);
	CHECK_INT(fg_safeio_open_data_beneath(dfd, "tmp/../secret", 0, NULL), -EINVAL);
	CHECK_INT(fg_safeio_open_data_beneath(dfd, "/etc/passwd", 0, NULL), -EINVAL);
	CHECK_INT(fg_safeio_open_data_beneath(dfd, "", 0, NULL), -EINVAL);
	close(dfd);
}

TEST(beneath_refuses_what_holds_no_data)
{
	int dfd = open(top, O_PATH | O_DIRECTORY), root = open("/", O_PATH | O_DIRECTORY);

	CHECK(mkfifo(in_top("tmp/fifo"), 0600) == 0);
	CHECK_INT(fg_safeio_open_data_beneath(dfd, "tmp/fifo", 0, NULL), -EINVAL);
	CHECK_INT(fg_safeio_open_data_beneath(dfd, "tmp", 0, NULL), -EINVAL);
	CHECK_INT(fg_safeio_open_data_beneath(root, "proc/version", 0, NULL), -EINVAL);
	CHECK_INT(fg_safeio_open_data_beneath(root, "dev/null", 0, NULL), -EINVAL);
	close(dfd);
	close(root);
}

TEST(private_dir_is_made_and_reopened)
{
	struct stat st;
	int fd = fg_safeio_private_dir_open(in_top("home/.cache/fg"), true, NULL, 0, NULL);

	CHECK(fd >= 0);
	CHECK(fstat(fd, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700);
	/* the descriptor serves the *at() calls */
	int f = openat(fd, "kallsyms", O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(f >= 0);
	close(f);
	close(fd);
	CHECK(stat(in_top("home/.cache"), &st) == 0 && (st.st_mode & 0777) == 0700);
	fd = fg_safeio_private_dir_open(in_top("home/.cache/fg"), false, NULL, 0, NULL);
	CHECK(fd >= 0);
	close(fd);
	CHECK_INT(fg_safeio_private_dir_open(in_top("home/none"), false, NULL, 0, NULL), -ENOENT);
	CHECK_INT(fg_safeio_private_dir_open("relative/fg", true, NULL, 0, NULL), -EINVAL);
}

TEST(private_dir_refuses_links_and_others)
{
	char bad[512] = "";
	uid_t owner = 0;

	/* a link to a directory elsewhere, at the end or on the way */
	mkdir(in_top("elsewhere"), 0700);
	CHECK(symlink(in_top("elsewhere"), in_top("home/.cache/fg2")) == 0);
	CHECK_INT(
	    fg_safeio_private_dir_open(in_top("home/.cache/fg2"), true, bad, sizeof(bad), NULL),
	    -ELOOP);
	CHECK_STR(bad, in_top("home/.cache/fg2"));
	CHECK(symlink(in_top("home/.cache"), in_top("lcache")) == 0);
	CHECK_INT(fg_safeio_private_dir_open(in_top("lcache/fg"), true, bad, sizeof(bad), NULL),
		  -ELOOP);
	CHECK_STR(bad, in_top("lcache"));
	CHECK(files_in(in_top("elsewhere")) == 0);
	/* writable by others */
	mkdir(in_top("home/open"), 0700);
	chmod(in_top("home/open"), 0777);
	CHECK_INT(fg_safeio_private_dir_open(in_top("home/open"), true, bad, sizeof(bad), NULL),
		  -EPERM);
	/* not a directory */
	put("home/file", "x");
	CHECK_INT(fg_safeio_private_dir_open(in_top("home/file/fg"), true, bad, sizeof(bad), NULL),
		  -ENOTDIR);
	if (geteuid() != 0)
		return;
	/* another user's directory on the way, as a home reached through sudo -E */
	mkdir(in_top("alice"), 0700);
	CHECK(chown(in_top("alice"), 65534, 65534) == 0);
	CHECK_INT(
	    fg_safeio_private_dir_open(in_top("alice/.cache/fg"), true, bad, sizeof(bad), &owner),
	    -EPERM);
	CHECK_STR(bad, in_top("alice"));
	CHECK_INT(owner, 65534);
	CHECK(files_in(in_top("alice")) == 0);
}

TEST(dir_refusal_says_why)
{
	char why[256];

	CHECK(fg_safeio_dir_refusal(why, sizeof(why), -EPERM, "/home/alice", 65534));
	CHECK_STR(why, "'/home/alice' belongs to user 65534, not to you or root");
	CHECK(fg_safeio_dir_refusal(why, sizeof(why), -EPERM, "/c/open", geteuid()));
	CHECK_STR(why, "'/c/open' is writable by other users");
	CHECK(fg_safeio_dir_refusal(why, sizeof(why), -ELOOP, "/c/l", 0));
	CHECK_STR(why, "'/c/l' is a symbolic link");
	CHECK(fg_safeio_dir_refusal(why, sizeof(why), -ENOTDIR, "/c/f", 0));
	CHECK_STR(why, "'/c/f' is not a directory");
	/* not a refusal for safety: the error's own text */
	CHECK(!fg_safeio_dir_refusal(why, sizeof(why), -EROFS, "", 0));
	CHECK_STR(why, strerror(EROFS));
}

/* rel with `len` bytes, last modified at second `t` */
static void put_aged(const char *rel, size_t len, time_t t)
{
	struct timespec ts[2] = {{t, 0}, {t, 0}};
	FILE *f = fopen(in_top(rel), "w");

	for (size_t i = 0; i < len; i++)
		fputc('x', f);
	fclose(f);
	CHECK(utimensat(AT_FDCWD, in_top(rel), ts, 0) == 0);
}

static bool only_tables(const char *name)
{
	return strncmp(name, "t", 1) == 0;
}

TEST(dir_trim_removes_the_least_recently_used)
{
	struct fg_dir_bounds files = {.max_files = 3, .to_files = 2};
	struct fg_dir_count n;
	int dirfd;

	CHECK(mkdir(in_top("trim"), 0700) == 0);
	put_aged("trim/t1", 100, 1000);
	put_aged("trim/t2", 200, 3000);
	put_aged("trim/t3", 300, 2000);
	put_aged("trim/.hidden", 50, 1);
	CHECK(symlink("t2", in_top("trim/tlink")) == 0);
	CHECK(mkdir(in_top("trim/tdir"), 0700) == 0);
	dirfd = open(in_top("trim"), O_RDONLY | O_DIRECTORY);
	/* within bounds: counted (no dot file, link or directory), nothing removed */
	CHECK_INT(fg_safeio_dir_trim(dirfd, NULL, &files, &n), 0);
	CHECK_INT(n.files, 3);
	CHECK_INT(n.bytes, 600);
	CHECK_INT(n.removed, 0);
	/* one more file: past 3, down to 2, the oldest first (t1, then t4 of second 1500) */
	put_aged("trim/t4", 400, 1500);
	CHECK_INT(fg_safeio_dir_trim(dirfd, NULL, &files, &n), 0);
	CHECK_INT(n.files, 2);
	CHECK_INT(n.bytes, 500);
	CHECK_INT(n.removed, 2);
	CHECK(access(in_top("trim/t1"), F_OK) < 0 && access(in_top("trim/t4"), F_OK) < 0);
	CHECK(access(in_top("trim/t2"), F_OK) == 0 && access(in_top("trim/t3"), F_OK) == 0);
	CHECK(access(in_top("trim/.hidden"), F_OK) == 0);
	/* a bound on bytes, and the names `accept` takes: "other" is neither counted nor removed */
	put_aged("trim/other", 1000, 1);
	struct fg_dir_bounds bytes = {
	    .max_files = 100, .max_bytes = 400, .to_files = 100, .to_bytes = 250};
	CHECK_INT(fg_safeio_dir_trim(dirfd, only_tables, &bytes, &n), 0);
	CHECK_INT(n.files, 1);
	CHECK_INT(n.bytes, 200);
	CHECK_INT(n.removed, 1);
	CHECK(access(in_top("trim/t3"), F_OK) < 0 && access(in_top("trim/t2"), F_OK) == 0);
	CHECK(access(in_top("trim/other"), F_OK) == 0);
	/* the link's target is the file kept; the link itself is left alone */
	CHECK(access(in_top("trim/tlink"), F_OK) == 0);
	close(dirfd);
	/* a descriptor that is no directory: the error */
	CHECK(fg_safeio_dir_trim(-1, NULL, &files, &n) < 0);
	CHECK_INT(n.files, 0);
}

int main(void)
{
	if (!mkdtemp(top))
		return 1;
	RUN(beneath_opens_a_plain_path);
	RUN(beneath_follows_no_link);
	RUN(beneath_refuses_what_holds_no_data);
	RUN(private_dir_is_made_and_reopened);
	RUN(private_dir_refuses_links_and_others);
	RUN(dir_refusal_says_why);
	RUN(dir_trim_removes_the_least_recently_used);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		return 1;
	return unit_done();
}
