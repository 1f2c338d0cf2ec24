// SPDX-License-Identifier: BSD-2-Clause
/* Unit tests for files written whole or not at all (fg_atomic). */
#include <errno.h>
#include <fcntl.h>
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
	if (fg_read_file(path, 4096, &data, &len) < 0)
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

	CHECK_INT(fg_atomic_open(&a, path), 0);
	fputs("new", a.fp);
	CHECK_INT(count_files(), 1); /* the temporary file */
	CHECK(stat(path, &st) < 0);  /* not yet there */
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK_STR(slurp(path), "new");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
	/* an abort leaves the old file as it was, and no temporary file */
	CHECK(chmod(path, 0600) == 0);
	CHECK_INT(fg_atomic_open(&a, path), 0);
	fputs("half", a.fp);
	fg_atomic_abort(&a);
	CHECK_STR(slurp(path), "new");
	CHECK_INT(count_files(), 1);
	/* a replacement keeps the mode of the file it replaces */
	CHECK_INT(fg_atomic_open(&a, path), 0);
	fputs("newer", a.fp);
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK_STR(slurp(path), "newer");
	umask(mask);
	unlink(path);
	/* no directory to create the temporary file in */
	CHECK_INT(fg_atomic_open(&a, path_in_dir("no/such/file")), -ENOENT);
	CHECK_INT(count_files(), 0);
}

TEST(atomic_failed_write_keeps_the_target)
{
	struct fg_atomic a;

	/* /dev/full is not a regular file: written in place, and the error shows at commit */
	CHECK_INT(fg_atomic_open(&a, "/dev/full"), 0);
	CHECK(a.tmp == NULL);
	fputs("x", a.fp);
	CHECK_INT(fg_atomic_commit(&a), -ENOSPC);
	CHECK_INT(fg_atomic_open(&a, "/dev/null"), 0);
	fputs("x", a.fp);
	CHECK_INT(fg_atomic_commit(&a), 0);
}

TEST(atomic_writes_through_a_link)
{
	char *real = path_in_dir("real"), *link = path_in_dir("link");
	struct fg_atomic a;
	struct stat st;

	CHECK(symlink("real", link) == 0);
	CHECK_INT(fg_atomic_open(&a, link), 0);
	CHECK(a.tmp == NULL);
	fputs("through", a.fp);
	CHECK_INT(fg_atomic_commit(&a), 0);
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	CHECK_STR(slurp(real), "through");
	unlink(link);
	unlink(real);
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
	rmdir(dir);
	return unit_done();
}
