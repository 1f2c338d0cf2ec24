// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/safeio.h"

int fg_open_regular_at(int dirfd, const char *path, uint64_t max_size, struct stat *st)
{
	struct stat sb;
	int fd;

	if (fstatat(dirfd, path, &sb, 0) < 0)
		return -errno;
	if (!S_ISREG(sb.st_mode))
		return -EINVAL;
	fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* the name may have been replaced by something else between the two calls */
	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (max_size && (uint64_t)sb.st_size > max_size) {
		close(fd);
		return -EFBIG;
	}
	if (st)
		*st = sb;
	return fd;
}

int fg_open_regular(const char *path, uint64_t max_size, struct stat *st)
{
	return fg_open_regular_at(AT_FDCWD, path, max_size, st);
}

int fg_open_data(const char *path, uint64_t max_size, struct stat *st)
{
	static const long pseudo[] = {
		PROC_SUPER_MAGIC, SYSFS_MAGIC, DEBUGFS_MAGIC, TRACEFS_MAGIC, SECURITYFS_MAGIC,
		CGROUP_SUPER_MAGIC, CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC, DEVPTS_SUPER_MAGIC,
	};
	struct statfs sf;
	int fd = fg_open_regular(path, max_size, st);

	if (fd < 0)
		return fd;
	if (fstatfs(fd, &sf) < 0) {
		close(fd);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(pseudo) / sizeof(pseudo[0]); i++) {
		if ((long)sf.f_type == pseudo[i]) {
			close(fd);
			return -EINVAL;
		}
	}
	return fd;
}

int fg_read_all(int fd, size_t max, char **data, size_t *len)
{
	size_t cap = 64 * 1024, n = 0;
	char *buf;

	/* room for one byte past `max`, to tell a file of exactly `max` bytes from a larger one */
	if (cap > max + 2)
		cap = max + 2;
	buf = fg_xmalloc(cap);
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			cap = cap * 2 > max + 2 ? max + 2 : cap * 2;
			buf = fg_xrealloc(buf, cap);
		}
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int err = -errno;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max) {
			free(buf);
			return -EFBIG;
		}
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

int fg_read_file(const char *path, size_t max, char **data, size_t *len)
{
	int fd = fg_open_regular(path, 0, NULL), err;

	if (fd < 0)
		return fd;
	err = fg_read_all(fd, max, data, len);
	close(fd);
	return err;
}
