// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/atomicfile.h"
#include "fg/buf.h"
#include "fg/util.h"

static void release(struct fg_atomic *a)
{
	free(a->path);
	free(a->tmp);
	memset(a, 0, sizeof(*a));
}

int fg_atomic_open(struct fg_atomic *a, const char *path)
{
	struct fg_buf t = FG_BUF_INIT;
	struct stat st;
	mode_t mode, mask;
	int fd, err;

	memset(a, 0, sizeof(*a));
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/*
		 * A device, a FIFO, a symbolic link: write there, following the
		 * link as a shell's redirection would (the kernel's protection of
		 * links in sticky directories included).  Renaming over a link
		 * would replace it: /dev/stdout, with standard output redirected to
		 * a file, is a link to a regular file, and root would replace it
		 * for the whole machine.
		 */
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
		if (fd < 0)
			return -errno;
		a->fp = fdopen(fd, "w");
		if (!a->fp) {
			err = errno;
			close(fd);
			return -err;
		}
		a->path = fg_xstrdup(path);
		return 0;
	}
	if (lstat(path, &st) == 0) {
		mode = st.st_mode & 07777;
	} else {
		mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	const char *slash = strrchr(path, '/');
	if (slash)
		fg_buf_add(&t, path, (size_t)(slash - path + 1));
	fg_buf_addf(&t, ".%s.XXXXXX", slash ? slash + 1 : path);
	fd = mkostemp(t.data, O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		fg_buf_release(&t);
		return -err;
	}
	a->tmp = fg_buf_detach(&t, NULL);
	a->path = fg_xstrdup(path);
	if (fchmod(fd, mode) != 0 || !(a->fp = fdopen(fd, "w"))) {
		err = errno;
		close(fd);
		unlink(a->tmp);
		release(a);
		return -err;
	}
	return 0;
}

int fg_atomic_commit(struct fg_atomic *a)
{
	int err = 0;

	if (!a->fp)
		return -EBADF;
	errno = 0;
	if (fflush(a->fp) != 0 || ferror(a->fp))
		err = errno ? errno : EIO;
	if (!err && a->tmp && fsync(fileno(a->fp)) != 0)
		err = errno;
	if (fclose(a->fp) != 0 && !err)
		err = errno ? errno : EIO;
	a->fp = NULL;
	if (!err && a->tmp && rename(a->tmp, a->path) != 0)
		err = errno;
	if (err && a->tmp)
		unlink(a->tmp);
	release(a);
	return -err;
}

void fg_atomic_abort(struct fg_atomic *a)
{
	if (a->fp)
		fclose(a->fp);
	if (a->tmp)
		unlink(a->tmp);
	release(a);
}
