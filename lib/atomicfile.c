// SPDX-License-Identifier: BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fg/atomicfile.h"
#include "fg/buf.h"
#include "fg/diag.h"

static void release(struct fg_atomic *a)
{
	free(a->path);
	free(a->tmp);
	a->path = a->tmp = NULL;
	a->f = NULL;
}

/* A regular file's mode, 0666 less the umask otherwise. */
static mode_t mode_for(const struct stat *st, bool exists)
{
	mode_t mask;

	if (exists && S_ISREG(st->st_mode))
		return st->st_mode & 07777;
	mask = umask(0);
	umask(mask);
	return 0666 & ~mask;
}

int fg_atomic_open(struct fg_atomic *a, const char *path)
{
	struct fg_buf b = FG_BUF_INIT;
	const char *slash = strrchr(path, '/');
	struct stat st;
	bool exists = lstat(path, &st) == 0;
	int fd, err;

	memset(a, 0, sizeof(*a));
	if (exists && !S_ISREG(st.st_mode)) {
		/*
		 * A FIFO, a device, a link (/dev/stdout is one): write through it in
		 * place, as a shell's redirection would, the kernel's protections
		 * for links in sticky directories included.  Renaming over a link
		 * would replace the link, and renaming over what it names would
		 * write wherever someone pointed it.
		 */
		a->f = fopen(path, "w");
		if (!a->f)
			return -errno;
		a->path = fg_xstrdup(path);
		return 0;
	}
	/* DIR/.NAME.XXXXXX: hidden, beside the target, on its file system */
	if (slash)
		fg_buf_add(&b, path, (size_t)(slash - path) + 1);
	fg_buf_addf(&b, ".%s.XXXXXX", slash ? slash + 1 : path);
	fd = mkostemp(b.data, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		fg_buf_release(&b);
		return err;
	}
	a->tmp = fg_buf_detach(&b, NULL);
	if (fchmod(fd, mode_for(&st, exists)) < 0 || !(a->f = fdopen(fd, "w"))) {
		err = -errno;
		close(fd);
		unlink(a->tmp);
		release(a);
		return err;
	}
	a->path = fg_xstrdup(path);
	return 0;
}

int fg_atomic_commit(struct fg_atomic *a)
{
	int err = 0;

	if (!a->f)
		return -EBADF;
	if (fflush(a->f) != 0 || ferror(a->f))
		err = errno ? -errno : -EIO;
	if (!err && a->tmp && fsync(fileno(a->f)) < 0)
		err = -errno;
	if (fclose(a->f) != 0 && !err)
		err = errno ? -errno : -EIO;
	a->f = NULL;
	if (!err && a->tmp && rename(a->tmp, a->path) < 0)
		err = -errno;
	if (err && a->tmp)
		unlink(a->tmp);
	release(a);
	return err;
}

void fg_atomic_abort(struct fg_atomic *a)
{
	if (a->f)
		fclose(a->f);
	if (a->tmp)
		unlink(a->tmp);
	release(a);
}
