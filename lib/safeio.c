// SPDX-License-Identifier: BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "fg/diag.h"
#include "fg/safeio.h"

int fg_safeio_open_regular_at(int dirfd, const char *path, uint64_t max_size, struct stat *st)
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

int fg_safeio_open_regular(const char *path, uint64_t max_size, struct stat *st)
{
	return fg_safeio_open_regular_at(AT_FDCWD, path, max_size, st);
}

/*
 * The checks of an open descriptor of a file that should hold data: regular,
 * within max_size, and not a pseudo file that calls itself regular (procfs,
 * sysfs and the like, where a read can have effects).  Returns fd, or -errno
 * with fd closed.
 */
static int check_data(int fd, uint64_t max_size, struct stat *st)
{
	static const long pseudo[] = {
	    PROC_SUPER_MAGIC,	 SYSFS_MAGIC,	   DEBUGFS_MAGIC,
	    TRACEFS_MAGIC,	 SECURITYFS_MAGIC, CGROUP_SUPER_MAGIC,
	    CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC,	   DEVPTS_SUPER_MAGIC,
	};
	struct statfs sf;
	struct stat sb;
	int err = 0;

	if (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))
		err = -EINVAL;
	else if (max_size && (uint64_t)sb.st_size > max_size)
		err = -EFBIG;
	else if (fstatfs(fd, &sf) < 0)
		err = -EINVAL;
	for (size_t i = 0; !err && i < sizeof(pseudo) / sizeof(pseudo[0]); i++)
		if ((long)sf.f_type == pseudo[i])
			err = -EINVAL;
	if (err) {
		close(fd);
		return err;
	}
	if (st)
		*st = sb;
	return fd;
}

int fg_safeio_open_data(const char *path, uint64_t max_size, struct stat *st)
{
	int fd = fg_safeio_open_regular(path, max_size, NULL);

	return fd < 0 ? fd : check_data(fd, max_size, st);
}

int fg_safeio_read_all(int fd, size_t max, char **data, size_t *len)
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

int fg_safeio_read_file(const char *path, size_t max, char **data, size_t *len)
{
	int fd = fg_safeio_open_regular(path, 0, NULL), err;

	if (fd < 0)
		return fd;
	err = fg_safeio_read_all(fd, max, data, len);
	close(fd);
	return err;
}

/* --- paths others built: no symbolic link followed --- */

/* The next component of *p (skipping "/" and "."), copied to comp; 0 at the end, -errno. */
static int next_component(const char **p, char *comp, size_t size)
{
	const char *s = *p;
	size_t n;

	for (;;) {
		while (*s == '/')
			s++;
		if (!*s) {
			*p = s;
			return 0;
		}
		n = strcspn(s, "/");
		if (!(n == 1 && s[0] == '.'))
			break;
		s += n;
	}
	if (n == 2 && s[0] == '.' && s[1] == '.')
		return -EINVAL;
	if (n >= size)
		return -ENAMETOOLONG;
	memcpy(comp, s, n);
	comp[n] = '\0';
	*p = s + n;
	return 1;
}

/* True when `p` has no component left. */
static bool at_end(const char *p)
{
	char comp[NAME_MAX + 1];

	return next_component(&p, comp, sizeof(comp)) <= 0;
}

/*
 * Open directory `name` in `dirfd` without following a link: the descriptor
 * (O_PATH), or -ELOOP for a symbolic link, -ENOTDIR, -errno.
 */
static int open_dir_nofollow(int dirfd, const char *name)
{
	struct stat sb;
	int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	if (errno == ENOTDIR && fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(sb.st_mode))
		return -ELOOP;
	return -errno;
}

static void close_owned(int fd)
{
	if (fd >= 0)
		close(fd);
}

int fg_safeio_open_data_beneath(int dirfd, const char *path, uint64_t max_size, struct stat *st)
{
	char comp[NAME_MAX + 1];
	const char *p = path;
	int cur = dirfd, owned = -1, rc, fd;
	struct stat sb;

	if (path[0] == '/')
		return -EINVAL;
	while ((rc = next_component(&p, comp, sizeof(comp))) > 0 && !at_end(p)) {
		fd = open_dir_nofollow(cur, comp);
		close_owned(owned);
		if (fd < 0)
			return fd;
		cur = owned = fd;
	}
	if (rc <= 0) {
		close_owned(owned);
		return rc < 0 ? rc : -EINVAL;
	}
	/* the file: stat first, so that a FIFO or a device is never opened */
	if (fstatat(cur, comp, &sb, AT_SYMLINK_NOFOLLOW) < 0) {
		rc = -errno;
	} else if (S_ISLNK(sb.st_mode)) {
		rc = -ELOOP;
	} else if (!S_ISREG(sb.st_mode)) {
		rc = -EINVAL;
	} else {
		fd = openat(cur, comp, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
		rc = fd < 0 ? -errno : check_data(fd, max_size, st);
	}
	close_owned(owned);
	return rc;
}

int fg_safeio_private_dir_open(const char *path, bool create, char *bad, size_t badsize,
			       uid_t *owner)
{
	char comp[NAME_MAX + 1];
	const char *p = path;
	uid_t me = geteuid();
	struct stat sb;
	int cur, rc, fd;

	if (path[0] != '/')
		return -EINVAL;
	cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	int depth = 0;

	while ((rc = next_component(&p, comp, sizeof(comp))) > 0) {
		depth++;
		fd = open_dir_nofollow(cur, comp);
		if (fd == -ENOENT && create) {
			if (mkdirat(cur, comp, 0700) < 0 && errno != EEXIST)
				fd = -errno;
			else
				fd = open_dir_nofollow(cur, comp);
		}
		close(cur);
		cur = fd;
		rc = fd;
		if (fd >= 0 && fstat(fd, &sb) < 0)
			rc = -errno;
		else if (fd >= 0 && ((sb.st_uid != me && sb.st_uid != 0) ||
				     /* the last: its owner's alone; those above: no one else's
					to rename in, unless sticky (/tmp) */
				     (at_end(p) ? (sb.st_mode & 022) != 0
						: (sb.st_mode & 022) && !(sb.st_mode & S_ISVTX))))
			rc = -EPERM;
		if (rc < 0) {
			if (bad && (rc == -ELOOP || rc == -EPERM || rc == -ENOTDIR))
				snprintf(bad, badsize, "%.*s", (int)(p - path), path);
			if (owner && rc == -EPERM)
				*owner = sb.st_uid;
			close_owned(fd);
			return rc;
		}
	}
	if (rc < 0) {
		close(cur);
		return rc;
	}
	if (!depth) {
		close(cur); /* "/" itself is no one's private directory */
		return -EINVAL;
	}
	return cur;
}

bool fg_safeio_dir_refusal(char *buf, size_t size, int err, const char *bad, uid_t owner)
{
	bool safety = err == -EPERM || err == -ELOOP || err == -ENOTDIR;

	if (err == -EPERM && owner != geteuid() && owner != 0)
		snprintf(buf, size, "'%s' belongs to user %lu, not to you or root", bad,
			 (unsigned long)owner);
	else if (safety)
		snprintf(buf, size, "'%s' is %s", bad,
			 err == -ELOOP	   ? "a symbolic link"
			 : err == -ENOTDIR ? "not a directory"
					   : "writable by other users");
	else
		snprintf(buf, size, "%s", strerror(-err));
	return safety;
}

struct dir_file {
	char name[256];
	struct timespec mtime;
	uint64_t bytes;
};

static int oldest_first(const void *a, const void *b)
{
	const struct timespec *x = &((const struct dir_file *)a)->mtime;
	const struct timespec *y = &((const struct dir_file *)b)->mtime;

	if (x->tv_sec != y->tv_sec)
		return x->tv_sec < y->tv_sec ? -1 : 1;
	return x->tv_nsec < y->tv_nsec ? -1 : x->tv_nsec > y->tv_nsec;
}

int fg_safeio_dir_trim(int dirfd, bool (*accept)(const char *name), const struct fg_dir_bounds *b,
		       struct fg_dir_count *out)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dir_file *f = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;

	*out = (struct fg_dir_count){0};
	if (!d) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if ((accept ? !accept(de->d_name) : de->d_name[0] == '.') ||
		    strlen(de->d_name) >= sizeof(f->name) ||
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		FG_ALLOC_GROW(f, n + 1, alloc);
		memcpy(f[n].name, de->d_name, strlen(de->d_name) + 1);
		f[n].mtime = st.st_mtim;
		f[n].bytes = (uint64_t)st.st_size;
		out->bytes += f[n].bytes;
		n++;
	}
	closedir(d);
	out->files = n;
	if (n > b->max_files || (b->max_bytes && out->bytes > b->max_bytes)) {
		qsort(f, n, sizeof(*f), oldest_first);
		for (size_t i = 0; i < n && (out->files > b->to_files ||
					     (b->to_bytes && out->bytes > b->to_bytes));
		     i++) {
			/* (one that cannot be removed is counted gone: the next trim sees it) */
			out->removed += unlinkat(dirfd, f[i].name, 0) == 0;
			out->files--;
			out->bytes -= f[i].bytes;
		}
	}
	free(f);
	return 0;
}
