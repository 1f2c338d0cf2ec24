// SPDX-License-Identifier: BSD-2-Clause
/* Whole files or none: a temporary file beside the target, renamed over it. */
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

int fg_atomic_open(struct fg_atomic *a, const char *path)
{
	struct fg_buf b = FG_BUF_INIT;
	const char *slash = strrchr(path, '/');
	struct stat st;
	mode_t mask;
	int fd, err;

	memset(a, 0, sizeof(*a));
	/* a device or a FIFO (/dev/stdout, /dev/null) is written as it is: no rename over it */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
		if (!(a->f = fopen(path, "we")))
			return -errno;
		a->path = fg_xstrdup(path);
		return 0;
	}
	/* "DIR/.NAME.XXXXXX": hidden, and in the target's directory */
	if (slash)
		fg_buf_add(&b, path, (size_t)(slash - path) + 1);
	fg_buf_addf(&b, ".%s.XXXXXX", slash ? slash + 1 : path);
	fd = mkostemp(b.data, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		fg_buf_release(&b);
		return err;
	}
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask) < 0 || !(a->f = fdopen(fd, "w"))) {
		err = -errno;
		close(fd);
		unlink(b.data);
		fg_buf_release(&b);
		return err;
	}
	a->tmp = fg_buf_detach(&b, NULL);
	a->path = fg_xstrdup(path);
	return 0;
}

int fg_atomic_commit(struct fg_atomic *a)
{
	int err = 0;

	errno = 0;
	if (fflush(a->f) != 0 || ferror(a->f))
		err = errno ? -errno : -EIO;
	else if (a->tmp && fsync(fileno(a->f)) < 0 && errno != EINVAL)
		err = -errno;
	if (fclose(a->f) != 0 && !err)
		err = -errno;
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
	if (!a)
		return;
	if (a->f)
		fclose(a->f);
	if (a->tmp)
		unlink(a->tmp);
	release(a);
}
