// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fg/atomicfile.h"
#include "fg/buf.h"
#include "fg/util.h"

static void release(struct fg_atomic *a)
{
	free(a->path);
	free(a->tmp);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
}

/* Whether the writer may use what another left under the name: theirs or root's. */
static bool ours(const struct stat *st)
{
	return st->st_uid == geteuid() || st->st_uid == 0;
}

static mode_t new_mode(unsigned flags)
{
	mode_t mask;

	if (flags & FG_OUT_PRIVATE)
		return 0600;
	mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

/* The mode of the file replacing `old`: its bits only when the writer owns it. */
static mode_t kept_mode(const struct stat *old, unsigned flags)
{
	if (old->st_uid != geteuid())
		return new_mode(flags);
	return old->st_mode & ((flags & FG_OUT_PRIVATE) ? 0770 : 0777);
}

static int finish_open(struct fg_atomic *a, int fd, const char *path, unsigned flags)
{
	a->fd = fd;
	a->path = fg_xstrdup(path);
	if (!(flags & FG_OUT_FD) && !(a->fp = fdopen(fd, "w"))) {
		int err = errno;

		fg_atomic_abort(a);
		return -err;
	}
	return 0;
}

/*
 * Write where the name leads, in place: a link of the writer's or root's,
 * a device, the writer's or root's FIFO.  The checks are made again on what
 * was opened, so that a name swapped in between is refused too.
 */
static int open_in_place(struct fg_atomic *a, int dirfd, const char *path,
			 const struct stat *before, unsigned flags)
{
	bool link = S_ISLNK(before->st_mode);
	struct stat st, again;
	int fd;

	if ((link || S_ISFIFO(before->st_mode) || S_ISSOCK(before->st_mode)) && !ours(before))
		return -EPERM;
	fd = openat(dirfd, path, O_WRONLY | O_NOCTTY | O_CLOEXEC | (link ? O_CREAT : O_NOFOLLOW),
		    new_mode(flags));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || fstatat(dirfd, path, &again, AT_SYMLINK_NOFOLLOW) < 0 ||
	    again.st_ino != before->st_ino || again.st_dev != before->st_dev ||
	    again.st_uid != before->st_uid || (S_ISFIFO(st.st_mode) && !ours(&st))) {
		close(fd);
		return -EPERM;
	}
	/* a regular file through a link: the shell's > truncates it */
	if (S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return finish_open(a, fd, path, flags);
}

/* Create ".NAME.XXXXXX" beside `path` (relative to dirfd): the descriptor, -errno. */
static int make_temp(struct fg_atomic *a, int dirfd, const char *path)
{
	static const char az[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	struct fg_buf t = FG_BUF_INIT;

	for (int tries = 0; tries < 100; tries++) {
		uint64_t v = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t)tries << 40 ^
			     (uint64_t)(uintptr_t)a ^ (uint64_t)clock() ^
			     (uint64_t)time(NULL) << 20;
		char suffix[7];
		int fd;

		for (int i = 0; i < 6; i++, v /= 62)
			suffix[i] = az[v % 62];
		suffix[6] = '\0';
		fg_buf_reset(&t);
		fg_buf_add(&t, path, (size_t)(base - path));
		fg_buf_addf(&t, ".%s.%s", base, suffix);
		fd = openat(dirfd, t.data, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0) {
			a->tmp = fg_buf_detach(&t, NULL);
			return fd;
		}
		if (errno != EEXIST) {
			int err = errno;

			fg_buf_release(&t);
			return -err;
		}
	}
	fg_buf_release(&t);
	return -EEXIST;
}

int fg_atomic_openat(struct fg_atomic *a, int dirfd, const char *path, unsigned flags)
{
	struct stat st;
	mode_t mode;
	int fd, err;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->dirfd = dirfd;
	if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISREG(st.st_mode))
			return open_in_place(a, dirfd, path, &st, flags);
		mode = kept_mode(&st, flags);
	} else if (errno == ENOENT) {
		mode = new_mode(flags);
	} else {
		return -errno;
	}
	fd = make_temp(a, dirfd, path);
	if (fd < 0)
		return fd;
	if (fchmod(fd, mode) != 0 ||
	    ((flags & FG_OUT_STREAM) && renameat(dirfd, a->tmp, dirfd, path) != 0)) {
		err = errno;
		close(fd);
		unlinkat(dirfd, a->tmp, 0);
		release(a);
		return -err;
	}
	if (flags & FG_OUT_STREAM) {
		free(a->tmp);
		a->tmp = NULL;
	}
	return finish_open(a, fd, path, flags);
}

int fg_atomic_open(struct fg_atomic *a, const char *path, unsigned flags)
{
	return fg_atomic_openat(a, AT_FDCWD, path, flags);
}

int fg_atomic_commit(struct fg_atomic *a)
{
	int err = 0;

	if (!a->path)
		return -EBADF;
	errno = 0;
	if (a->fp && (fflush(a->fp) != 0 || ferror(a->fp)))
		err = errno ? errno : EIO;
	if (!err && a->tmp && a->fd >= 0 && fsync(a->fd) != 0)
		err = errno;
	if (a->fp) {
		if (fclose(a->fp) != 0 && !err)
			err = errno ? errno : EIO;
	} else if (a->fd >= 0 && close(a->fd) != 0 && !err) {
		err = errno;
	}
	a->fp = NULL;
	a->fd = -1;
	if (!err && a->tmp && renameat(a->dirfd, a->tmp, a->dirfd, a->path) != 0)
		err = errno;
	if (err && a->tmp)
		unlinkat(a->dirfd, a->tmp, 0);
	release(a);
	return -err;
}

void fg_atomic_abort(struct fg_atomic *a)
{
	if (!a->path)
		return;
	if (a->fp)
		fclose(a->fp);
	else if (a->fd >= 0)
		close(a->fd);
	if (a->tmp)
		unlinkat(a->dirfd, a->tmp, 0);
	release(a);
}
