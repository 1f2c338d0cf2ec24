/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writing an output file all or nothing: the data goes to a temporary file in
 * the same directory, which replaces the file only once everything is written
 * and flushed.  A failure (a full disk, a signal, a crash) leaves no partial
 * file behind, and an existing file as it was.
 *
 *	struct fg_atomic out;
 *	if (fg_atomic_open(&out, "cpu.folded") < 0) ...error...
 *	fprintf(out.fp, ...);
 *	if (fg_atomic_commit(&out) < 0) ...error: nothing was replaced...
 *
 * A path that names something other than a regular file (a FIFO, /dev/null,
 * a symbolic link such as /dev/stdout) is opened and written in place, as a
 * shell's redirection would: there is nothing to replace, and renaming over a
 * link would replace the link (/dev/stdout for the whole machine, when
 * standard output is a file).
 */
#ifndef FG_ATOMICFILE_H
#define FG_ATOMICFILE_H

#include <stdio.h>

struct fg_atomic {
	FILE *fp;   /* write here */
	char *path; /* the file to replace */
	char *tmp;  /* the temporary file, NULL when writing in place */
};

/*
 * Create the temporary file ".NAME.XXXXXX" beside `path`, with the mode a new
 * file would get (0666 less the umask) or the mode of the file it replaces.
 * 0, or -errno with nothing created.
 */
int fg_atomic_open(struct fg_atomic *a, const char *path);

/*
 * Flush, sync and close the data, then rename the temporary file over the
 * path.  0, or -errno (the write or rename error) with the temporary file
 * removed and the path untouched.  `a` is released either way.
 */
int fg_atomic_commit(struct fg_atomic *a);

/* Give up: close and remove the temporary file.  Safe on a released or zeroed struct. */
void fg_atomic_abort(struct fg_atomic *a);

#endif
