/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writing a file whole or not at all: the data goes to a new temporary file
 * beside the target (same directory, so the same file system), which is
 * renamed over the target once written, flushed and synced.  A reader never
 * sees a partial file, and a failed write leaves the old file as it was.
 * A target that exists and is neither a regular file nor a directory (a
 * device, a FIFO: /dev/stdout, /dev/null) is written directly instead.
 *
 *	struct fg_atomic a;
 *	if (fg_atomic_open(&a, "out/1764512580.pb.gz") < 0) ...
 *	fwrite(data, 1, len, a.f);
 *	err = fg_atomic_commit(&a);	(or fg_atomic_abort(&a) to give up)
 */
#ifndef FG_ATOMICFILE_H
#define FG_ATOMICFILE_H

#include <stdio.h>

struct fg_atomic {
	FILE *f;    /* write here */
	char *path; /* the target */
	char *tmp;  /* the temporary file: "DIR/.NAME.XXXXXX"; NULL when written directly */
};

/*
 * Create the temporary file (mode 0666 less the umask, as open(2) would
 * give the target).  0 or -errno; on failure nothing is left behind.
 */
int fg_atomic_open(struct fg_atomic *a, const char *path);
/*
 * Flush, sync and close the temporary file, then rename it to the target.
 * 0, or -errno (a write error: -EIO or the errno of the failed call), and
 * then the temporary file is removed.  Either way `a` is released.
 */
int fg_atomic_commit(struct fg_atomic *a);
/* Remove the temporary file and release `a`.  Safe on a released or zeroed struct. */
void fg_atomic_abort(struct fg_atomic *a);

#endif
