/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writing a file whole or not at all.  The data goes to a new temporary file
 * in the target's directory (so that the rename stays on one file system);
 * fg_atomic_commit() flushes and syncs it and renames it over the target, and
 * fg_atomic_abort(), or a failed commit, removes it, so a full disk or a
 * failed run never leaves half a file under the real name and an existing
 * file stays as it was.
 *
 *	struct fg_atomic a;
 *	int err = fg_atomic_open(&a, "out.svg");	// 0 or -errno
 *	fputs("...", a.f);
 *	err = ok ? fg_atomic_commit(&a) : (fg_atomic_abort(&a), 0);
 *
 * The new file gets the mode an ordinary create would give it (0666 less the
 * umask), or the mode of the regular file it replaces.  A target that exists
 * and is not a regular file (a FIFO, a terminal, a symbolic link such as
 * /dev/stdout) is opened and written in place, as a shell's redirection
 * would, and commit only closes it: renaming over a link would replace the
 * link, and renaming over what it names would write wherever its owner
 * pointed it.
 */
#ifndef FG_ATOMICFILE_H
#define FG_ATOMICFILE_H

#include <stdbool.h>
#include <stdio.h>

struct fg_atomic {
	FILE *f;    /* write here */
	char *path; /* the target */
	char *tmp;  /* the temporary file; NULL when writing in place */
};

/* Create the temporary file for `path`.  0, or -errno (nothing is left behind). */
int fg_atomic_open(struct fg_atomic *a, const char *path);
/*
 * Flush, sync and close the temporary file and rename it to the target.  0, or
 * -errno of the first step that failed, after which the temporary file is
 * gone and the target untouched.  `a` is released either way.
 */
int fg_atomic_commit(struct fg_atomic *a);
/* Close and remove the temporary file; the target is untouched.  Safe after commit. */
void fg_atomic_abort(struct fg_atomic *a);

#endif
